import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../support/app.ts';

let t: TestApp;
beforeEach(async () => {
  t = await testApp();
});
afterEach(async () => {
  await t.close();
});

describe('authentication', () => {
  it('answers 401 for a missing header, a malformed one and an unknown key', async () => {
    const missing = await t.call(undefined, 'GET', '/user/folders');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: 'Unauthorized', message: 'Missing Authorization header.' });
    const malformed = await t.app.inject({ method: 'GET', url: '/api/user/folders', headers: { authorization: 'Basic abc' } });
    expect(malformed.statusCode).toBe(401);
    const unknown = await t.call('sb_live_nope', 'GET', '/user/folders');
    expect(unknown.status).toBe(401);
    expect(unknown.body.message).toBe('Invalid API key.');
  });

  it('refuses a revoked key', async () => {
    const { key } = await t.account();
    expect((await t.call(key, 'GET', '/user/folders')).status).toBe(200);
    await t.ctx.repos.accounts.revokeKey(key);
    expect((await t.call(key, 'GET', '/user/folders')).status).toBe(401);
  });

  it('looks a key up by its SHA-256 through the unique index (a search, never a scan or a string compare)', async () => {
    const plan = t.ctx.store.sqlite
      .prepare('EXPLAIN QUERY PLAN SELECT account_id FROM api_keys WHERE hash = ? AND revoked_at IS NULL')
      .all('x') as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join(' ')).toMatch(/SEARCH api_keys USING INDEX/);
  });

  it('never accepts a key in the query string', async () => {
    const { key } = await t.account();
    const res = await t.call(undefined, 'GET', `/user/folders?api_key=${key}`);
    expect(res.status).toBe(401);
  });

  it('serves health, metrics and the OpenAPI document', async () => {
    expect((await t.call(undefined, 'GET', '/healthz')).body).toEqual({ status: 'ok', ready: true, draining: false });
    const metrics = await t.call(undefined, 'GET', '/metrics');
    expect(String(metrics.body)).toContain('switchboard_http_request_duration_seconds');
    const doc = await t.call(undefined, 'GET', '/api/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/user/assistant', '/user/sip-trunks', '/conversations']));
  });
});

describe('rate limits over HTTP', () => {
  it('sets the headers on every authenticated answer and refuses the 21st request in 10 s', async () => {
    const { key } = await t.account();
    for (let i = 0; i < 20; i++) {
      const res = await t.call(key, 'GET', '/user/folders');
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('20');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(19 - i));
      expect(Number(res.headers['x-ratelimit-reset'])).toBe(Math.ceil((t.clock.now() + 10_000) / 1000));
    }
    const refused = await t.call(key, 'GET', '/user/folders');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ message: 'Too many requests.', retry_after: 10 });
    expect(refused.headers['retry-after']).toBe('10');
    t.clock.advance(10_000);
    expect((await t.call(key, 'GET', '/user/folders')).status).toBe(200);
  });

  it('keeps accounts apart', async () => {
    const a = await t.account();
    const b = await t.account();
    for (let i = 0; i < 20; i++) await t.call(a.key, 'GET', '/user/folders');
    expect((await t.call(a.key, 'GET', '/user/folders')).status).toBe(429);
    expect((await t.call(b.key, 'GET', '/user/folders')).status).toBe(200);
  });
});

describe('bad bodies', () => {
  it('answers 400 for malformed JSON and 422 for a wrong content type or a huge body', async () => {
    const { key } = await t.account();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const bad = await t.app.inject({ method: 'POST', url: '/api/user/folders', headers, payload: '{"name": ' });
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({ message: 'The request body is not valid JSON.' });
    t.clock.advance(1000);
    const text = await t.app.inject({
      method: 'POST',
      url: '/api/user/folders',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    expect(text.statusCode).toBe(422);
    expect(JSON.parse(text.body).errors.body).toBeDefined();
    t.clock.advance(1000);
    const huge = await t.app.inject({
      method: 'POST',
      url: '/api/user/folders',
      headers,
      payload: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(huge.statusCode).toBe(422);
    expect(JSON.parse(huge.body).errors.body[0]).toContain('too large');
  });
});
