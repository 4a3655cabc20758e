import { afterEach, describe, expect, it } from 'vitest';
import { userOf } from '../../../src/call/numbers.ts';
import { carrierAuth, TestPhone } from '../../support/test-phone.ts';
import { dnsAt } from '../../../src/sip/locate.ts';
import { DnsStandIn } from '../../support/dns-stand-in.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
let carrier: TestPhone | undefined;
let dns: DnsStandIn | undefined;
afterEach(async () => {
  await carrier?.close();
  carrier = undefined;
  await dns?.close();
  dns = undefined;
  await h?.close();
  h = undefined;
});

/** An engine whose trunk points at a test phone playing the carrier. */
async function setup(ringingTime = 5, trunkOver: Record<string, unknown> = {}) {
  h = await harness();
  carrier = await TestPhone.create({ userName: 'carrier' });
  const trunk = await h.trunk(trunkOver);
  // REST only takes a host; the test carrier listens on an ephemeral port.
  trunk.live.spec.address = `127.0.0.1:${carrier.port}`;
  const assistant = await h.assistant(null, { ringing_time: ringingTime }, 'outbound');
  return { trunk, assistant };
}

async function place(assistant: number, phoneNumberId: number, to = '+14155550199') {
  return h!.req('POST', '/user/calls', { assistant_id: assistant, phone_number_id: phoneNumberId, to, variables: { name: 'Ada' } });
}

async function finalStatus(id: number, timeoutMs = 5000): Promise<Record<string, any>> {
  let rec: Record<string, any> = {};
  await until(async () => {
    rec = (await h!.req('GET', `/user/calls/${id}`)).body;
    return !['queued', 'ringing', 'in-progress'].includes(rec.status);
  }, timeoutMs, 'final status');
  return rec;
}

describe('outbound calls', () => {
  it('answered by the far end: in-progress, then completed on their BYE', async () => {
    const { trunk, assistant } = await setup(5, { sip_calling_format: 'national', country_code: 'US' });
    const res = await place(assistant, trunk.phoneNumberId);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ direction: 'outbound', status: 'queued', to_number: '+14155550199', variables: { name: 'Ada' } });
    await until(() => carrier!.answered.length === 1, 3000, 'answer');
    const inv = carrier!.incoming[0]!;
    // National format for a US trunk: ten digits, no prefix; From is the trunk's own number.
    expect(userOf(inv.request.uri)).toBe('4155550199');
    expect(userOf(inv.from)).toBe('4155550100');
    await until(async () => (await h!.req('GET', `/user/calls/${res.body.id}`)).body.status === 'in-progress', 3000, 'in-progress');
    const call = carrier!.answered[0]!;
    call.rtp.playTone(400, 300);
    await until(() => call.rtp.packetsReceived > 5, 2000, 'engine media');
    await call.hangup();
    const rec = await finalStatus(res.body.id);
    expect(rec).toMatchObject({ status: 'completed', end_cause: 'remote-hangup', codec: 'PCMU' });
    expect(h!.pool.inUse).toBe(0);
  });

  it('busy (486) and declined (603) become call statuses', async () => {
    const { trunk, assistant } = await setup();
    carrier!.answerMode = { reject: 486 };
    const busy = await place(assistant, trunk.phoneNumberId);
    expect((await finalStatus(busy.body.id)).status).toBe('busy');
    carrier!.answerMode = { reject: 603 };
    const declined = await place(assistant, trunk.phoneNumberId);
    expect((await finalStatus(declined.body.id)).status).toBe('declined');
    carrier!.answerMode = { reject: 404 };
    const invalid = await place(assistant, trunk.phoneNumberId);
    expect((await finalStatus(invalid.body.id)).status).toBe('invalid-number');
    expect(h!.pool.inUse).toBe(0);
  });

  it('no answer within ringing_time: CANCEL, status no-answer', async () => {
    const { trunk, assistant } = await setup(1);
    carrier!.answerMode = 'ring';
    const res = await place(assistant, trunk.phoneNumberId);
    await until(() => carrier!.incoming.length === 1, 2000, 'INVITE');
    const cancelled = new Promise<void>((r) => carrier!.incoming[0]!.once('cancel', () => r()));
    const rec = await finalStatus(res.body.id, 4000);
    expect(rec).toMatchObject({ status: 'no-answer', end_cause: 'no-answer', answered_at: null });
    await cancelled;
  });

  it('answers the carrier’s 401 challenge with the trunk credentials', async () => {
    const { trunk, assistant } = await setup();
    carrier!.challenge = carrierAuth();
    const res = await place(assistant, trunk.phoneNumberId);
    await until(() => carrier!.answered.length === 1, 3000, 'authenticated answer');
    await carrier!.answered[0]!.hangup();
    expect((await finalStatus(res.body.id)).status).toBe('completed');
  });

  it('a wrong trunk password fails the call (403 after the challenge)', async () => {
    const { trunk, assistant } = await setup();
    carrier!.challenge = carrierAuth();
    carrier!.challengeCredentials = { username: 'trunkuser', password: 'something-else' };
    const res = await place(assistant, trunk.phoneNumberId);
    expect((await finalStatus(res.body.id)).status).toBe('failed');
  });

  it('a trunk named by its domain is reached through its SRV records (RFC 3263)', async () => {
    carrier = await TestPhone.create({ userName: 'carrier' });
    dns = await DnsStandIn.start({
      srv: { '_sip._udp.carrier.test': [{ priority: 10, weight: 1, port: carrier.port, target: 'edge.carrier.test' }] },
      a: { 'edge.carrier.test': ['127.0.0.1'] },
    });
    h = await harness({ dns: dnsAt([dns.server]) });
    const trunk = await h.trunk();
    trunk.live.spec.address = 'carrier.test';
    const assistant = await h.assistant(null, { ringing_time: 5 }, 'outbound');
    const res = await place(assistant, trunk.phoneNumberId);
    await until(() => carrier!.answered.length === 1, 3000, 'answer');
    expect(carrier!.incoming[0]!.request.uri).toMatch(/@carrier\.test$/);
    expect(dns.queries.map((q) => `${q.type} ${q.name}`)).toContain('SRV _sip._udp.carrier.test');
    await until(async () => (await h!.req('GET', `/user/calls/${res.body.id}`)).body.status === 'in-progress', 3000, 'in-progress');
    await carrier!.answered[0]!.hangup();
    expect(await finalStatus(res.body.id)).toMatchObject({ status: 'completed', end_cause: 'remote-hangup' });
  });

  it('validates the request like the other routes', async () => {
    const { trunk, assistant } = await setup();
    const bad = await place(assistant, trunk.phoneNumberId, '4155550199');
    expect(bad.status).toBe(422);
    expect(bad.body.errors.to).toBeDefined();
    const unknown = await place(assistant + 100, trunk.phoneNumberId + 100);
    expect(unknown.status).toBe(422);
    expect(Object.keys(unknown.body.errors).sort()).toEqual(['assistant_id', 'phone_number_id']);
    await h!.ctx.repos.ledger.setBalance(h!.owner.id, 0);
    expect((await place(assistant, trunk.phoneNumberId)).status).toBe(402);
  });
});
