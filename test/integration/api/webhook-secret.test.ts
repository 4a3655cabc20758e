import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../support/app.ts';
import { HttpSink } from '../../support/http-sink.ts';
import { chatServices } from '../../../src/chat/services.ts';
import { verify } from '../../../src/webhooks/signing.ts';

/**
 * GET /user/webhook-secret and POST /user/webhook-secret/rotate: each account reads and rotates
 * only its own secret, the secret is sealed at rest, and during a rotation's overlap a delivered
 * webhook carries two signatures, one verifying with the old secret and one with the new; after
 * the overlap only the new secret signs. Time is the test app's manual clock.
 */
const HOUR = 3_600_000;

let t: TestApp;
let sink: HttpSink;
beforeAll(async () => {
  t = await testApp();
  sink = await HttpSink.start();
});
afterAll(async () => {
  await chatServices(t.ctx).stop();
  await t.close();
  await sink.close();
});
afterEach(() => {
  sink.received.length = 0;
});

/** Enqueues an event for the account and delivers it through the engine's own delivery worker. */
async function deliver(accountId: number): Promise<{ headers: Record<string, string | undefined>; body: string }> {
  await t.ctx.repos.outbox.enqueue(accountId, 'call.completed', `${sink.url}/hook`, JSON.stringify({ type: 'call.completed', n: sink.received.length }));
  await chatServices(t.ctx).delivery.runDue();
  const d = sink.received.at(-1)!;
  return { headers: d.headers as Record<string, string | undefined>, body: d.body };
}

describe('webhook signing secret over REST', () => {
  it('needs an API key', async () => {
    expect((await t.call(undefined, 'GET', '/user/webhook-secret')).status).toBe(401);
    expect((await t.call(undefined, 'POST', '/user/webhook-secret/rotate', {})).status).toBe(401);
    expect((await t.call('sb_live_nope', 'GET', '/user/webhook-secret')).status).toBe(401);
  });

  it("answers the caller's own secret, never another account's, sealed at rest and not cached", async () => {
    const a = await t.account();
    const b = await t.account();
    const ra = await t.call(a.key, 'GET', '/user/webhook-secret');
    const rb = await t.call(b.key, 'GET', '/user/webhook-secret');
    expect(ra.status).toBe(200);
    expect(ra.headers['cache-control']).toBe('no-store');
    expect(ra.body).toEqual({ webhook_secret: (await t.ctx.repos.accounts.get(a.id))!.webhookSecret, previous_secret_valid_until: null });
    expect(rb.body.webhook_secret).toBe((await t.ctx.repos.accounts.get(b.id))!.webhookSecret);
    expect(rb.body.webhook_secret).not.toBe(ra.body.webhook_secret);
    // B rotating changes nothing of A's.
    await t.call(b.key, 'POST', '/user/webhook-secret/rotate', {});
    expect((await t.call(a.key, 'GET', '/user/webhook-secret')).body).toEqual(ra.body);
    // At rest: sealed, the secret appears nowhere in the row.
    const row = t.ctx.store.sqlite.prepare('SELECT * FROM accounts WHERE id = ?').get(a.id) as Record<string, unknown>;
    expect(String(row.webhook_secret)).toMatch(/^v1:/);
    expect(JSON.stringify(row)).not.toContain(ra.body.webhook_secret.slice(6));
  });

  it('validates the rotate body', async () => {
    const a = await t.account();
    for (const body of [{ overlap_seconds: -1 }, { overlap_seconds: 1.5 }, { overlap_seconds: 31 * 24 * 3600 }, { overlap_seconds: '10' }]) {
      const res = await t.call(a.key, 'POST', '/user/webhook-secret/rotate', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors.overlap_seconds).toBeDefined();
    }
  });

  it('during the 24 h overlap a webhook carries two signatures, old and new; after it only the new one', async () => {
    const a = await t.account();
    const before = await deliver(a.id);
    const oldSecret = (await t.call(a.key, 'GET', '/user/webhook-secret')).body.webhook_secret as string;
    expect(before.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verify(oldSecret, before.headers, before.body, Math.floor(t.clock.now() / 1000))).toBe(true);

    const rotated = await t.call(a.key, 'POST', '/user/webhook-secret/rotate', {});
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.data.webhook_secret as string;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    expect(rotated.body.data.previous_secret_valid_until).toBe(new Date(t.clock.now() + 24 * HOUR).toISOString());
    expect((await t.call(a.key, 'GET', '/user/webhook-secret')).body).toEqual(rotated.body.data);

    t.clock.advance(23 * HOUR);
    const during = await deliver(a.id);
    const nowSec = Math.floor(t.clock.now() / 1000);
    const sigs = during.headers['webhook-signature']!.split(' ');
    expect(sigs).toHaveLength(2);
    expect(verify(newSecret, during.headers, during.body, nowSec)).toBe(true);
    expect(verify(oldSecret, during.headers, during.body, nowSec)).toBe(true);
    // Each signature is one secret's: the new one's first.
    expect(verify(newSecret, { ...during.headers, 'webhook-signature': sigs[0] }, during.body, nowSec)).toBe(true);
    expect(verify(oldSecret, { ...during.headers, 'webhook-signature': sigs[1] }, during.body, nowSec)).toBe(true);

    t.clock.advance(HOUR);
    const after = await deliver(a.id);
    const afterSec = Math.floor(t.clock.now() / 1000);
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verify(newSecret, after.headers, after.body, afterSec)).toBe(true);
    expect(verify(oldSecret, after.headers, after.body, afterSec)).toBe(false);
    expect((await t.call(a.key, 'GET', '/user/webhook-secret')).body.previous_secret_valid_until).toBeNull();
  });

  it('overlap_seconds 0 retires the old secret at once', async () => {
    const a = await t.account();
    const oldSecret = (await t.call(a.key, 'GET', '/user/webhook-secret')).body.webhook_secret as string;
    const res = await t.call(a.key, 'POST', '/user/webhook-secret/rotate', { overlap_seconds: 0 });
    expect(res.body.data.previous_secret_valid_until).toBeNull();
    const d = await deliver(a.id);
    expect(verify(oldSecret, d.headers, d.body, Math.floor(t.clock.now() / 1000))).toBe(false);
    expect(verify(res.body.data.webhook_secret, d.headers, d.body, Math.floor(t.clock.now() / 1000))).toBe(true);
  });

  it('a second rotation during the overlap answers 409 ROTATION_IN_PROGRESS and keeps both secrets; force retires the older one', async () => {
    const a = await t.account();
    const original = (await t.call(a.key, 'GET', '/user/webhook-secret')).body.webhook_secret as string;
    const first = await t.call(a.key, 'POST', '/user/webhook-secret/rotate', {});
    expect(first.status).toBe(200);
    t.clock.advance(HOUR);
    const second = await t.call(a.key, 'POST', '/user/webhook-secret/rotate', { overlap_seconds: 60 });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error_code: 'ROTATION_IN_PROGRESS' });
    expect(JSON.stringify(second.body)).not.toContain('whsec_');
    // Nothing changed: the receiver still verifying with the original secret keeps working.
    expect((await t.call(a.key, 'GET', '/user/webhook-secret')).body).toEqual(first.body.data);
    const d = await deliver(a.id);
    expect(verify(original, d.headers, d.body, Math.floor(t.clock.now() / 1000))).toBe(true);

    const forced = await t.call(a.key, 'POST', '/user/webhook-secret/rotate', { force: true, overlap_seconds: 0 });
    expect(forced.status).toBe(200);
    expect(forced.body.data.previous_secret_valid_until).toBeNull();
    const after = await deliver(a.id);
    const nowSec = Math.floor(t.clock.now() / 1000);
    expect(verify(original, after.headers, after.body, nowSec)).toBe(false);
    expect(verify(first.body.data.webhook_secret, after.headers, after.body, nowSec)).toBe(false);
    expect(verify(forced.body.data.webhook_secret, after.headers, after.body, nowSec)).toBe(true);
  });

  it('a secret an older build stored in clear keeps signing and is sealed by sealPlainWebhookSecrets', async () => {
    const a = await t.account();
    const plain = 'whsec_' + Buffer.alloc(24, 9).toString('base64');
    t.ctx.store.sqlite.prepare('UPDATE accounts SET webhook_secret = ? WHERE id = ?').run(plain, a.id);
    expect((await t.call(a.key, 'GET', '/user/webhook-secret')).body.webhook_secret).toBe(plain);
    expect(await t.ctx.repos.accounts.sealPlainWebhookSecrets()).toBeGreaterThanOrEqual(1);
    const row = t.ctx.store.sqlite.prepare('SELECT webhook_secret FROM accounts WHERE id = ?').get(a.id) as { webhook_secret: string };
    expect(row.webhook_secret).toMatch(/^v1:/);
    const d = await deliver(a.id);
    expect(verify(plain, d.headers, d.body, Math.floor(t.clock.now() / 1000))).toBe(true);
  });
});
