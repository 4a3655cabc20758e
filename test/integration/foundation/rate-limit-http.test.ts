import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../support/app.ts';

/**
 * The Limits table over HTTP on the manual clock: the 101st request in 60 s is refused even
 * though no 10-second window is full, and the X-RateLimit-* headers ride on every authenticated
 * answer, failures included.
 */

let t: TestApp;
beforeEach(async () => {
  t = await testApp();
});
afterEach(() => t.close());

const limitHeaders = (h: Record<string, unknown>) => ({
  limit: h['x-ratelimit-limit'],
  remaining: h['x-ratelimit-remaining'],
  reset: h['x-ratelimit-reset'],
});

describe('rate limits over HTTP', () => {
  it('admits 100 requests spread over 59.4 s (never 20 in 10 s) and refuses the 101st; the minute window frees the slot', async () => {
    const { key } = await t.account();
    const start = t.clock.now();
    // 600 ms apart: at most 17 requests in any 10 s, so only the minute window can refuse.
    for (let i = 0; i < 100; i++) {
      const res = await t.call(key, 'GET', '/user/folders');
      expect(res.status, `request ${i + 1}`).toBe(200);
      if (i < 99) t.clock.advance(600);
    }
    t.clock.advance(599); // 59.999 s after the first: still inside its minute
    const refused = await t.call(key, 'GET', '/user/folders');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ message: 'Too many requests.', retry_after: expect.any(Number) });
    expect(refused.headers['x-ratelimit-limit']).toBe('100');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    // The first request leaves the window at start + 60 s.
    const wait = start + 60_000 - t.clock.now();
    expect(refused.body.retry_after).toBe(Math.ceil(wait / 1000));
    expect(refused.headers['retry-after']).toBe(String(refused.body.retry_after));
    t.clock.advance(wait - 1);
    expect((await t.call(key, 'GET', '/user/folders')).status).toBe(429);
    t.clock.advance(1);
    expect((await t.call(key, 'GET', '/user/folders')).status).toBe(200);
  });

  it('the 20th request in 10 s is admitted with remaining 0; the 21st is refused, also 1 ms before the window slides', async () => {
    const { key } = await t.account();
    for (let i = 0; i < 20; i++) expect((await t.call(key, 'GET', '/user/folders')).status).toBe(200);
    t.clock.advance(9_999);
    const refused = await t.call(key, 'GET', '/user/folders');
    expect(refused.status).toBe(429);
    expect(refused.body.retry_after).toBe(1);
    t.clock.advance(1);
    const ok = await t.call(key, 'GET', '/user/folders');
    expect(ok.status).toBe(200);
  });

  it('puts the headers on every authenticated answer: 2xx, 400, 404, 409, 422 and 429', async () => {
    const { key } = await t.account();
    const answers: Array<[string, { status: number; headers: Record<string, unknown> }]> = [];
    const step = async (label: string, p: Promise<{ status: number; headers: Record<string, unknown> }>) => {
      t.clock.advance(600);
      answers.push([label, await p]);
    };
    await step('200', t.call(key, 'GET', '/user/folders'));
    await step('201', t.call(key, 'POST', '/user/phone-numbers', { phone_number: '+14155550100' }));
    await step('409', t.call(key, 'POST', '/user/phone-numbers', { phone_number: '+14155550100' }));
    await step('404', t.call(key, 'GET', '/user/assistant/12345'));
    await step('404 bad id', t.call(key, 'GET', '/user/assistant/abc'));
    await step('422 body', t.call(key, 'POST', '/user/folders', { name: 5 }));
    await step(
      '400 malformed JSON',
      t.app.inject({ method: 'POST', url: '/api/user/folders', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: '{' }).then((r) => ({ status: r.statusCode, headers: r.headers })),
    );
    await step(
      '422 huge body',
      t.app
        .inject({ method: 'POST', url: '/api/user/folders', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(1_100_000) }) })
        .then((r) => ({ status: r.statusCode, headers: r.headers })),
    );
    await step('update-status 404', t.call(key, 'POST', '/user/campaigns/update-status', { campaign_id: 999, action: 'start' }));
    expect(answers.map(([label, r]) => [label, r.status])).toEqual([
      ['200', 200],
      ['201', 201],
      ['409', 409],
      ['404', 404],
      ['404 bad id', 404],
      ['422 body', 422],
      ['400 malformed JSON', 400],
      ['422 huge body', 422],
      ['update-status 404', 404],
    ]);
    answers.forEach(([label, r], i) => {
      const h = limitHeaders(r.headers);
      expect(h.limit, label).toBe('20');
      expect(h.remaining, label).toBe(String(19 - (i + 1 > 17 ? 17 : i)));
      expect(Number(h.reset), label).toBeGreaterThanOrEqual(Math.floor(t.clock.now() / 1000));
    });
    for (let i = answers.length; i < 20; i++) await t.call(key, 'GET', '/user/folders');
    const refused = await t.call(key, 'GET', '/user/folders');
    expect(refused.status).toBe(429);
    expect(limitHeaders(refused.headers)).toEqual({ limit: '20', remaining: '0', reset: expect.any(String) });
  });

  it('reset is a Unix time in seconds when the window frees a slot', async () => {
    const { key } = await t.account();
    const first = await t.call(key, 'GET', '/user/folders');
    expect(Number(first.headers['x-ratelimit-reset'])).toBe(Math.ceil((t.clock.now() + 10_000) / 1000));
  });

  it('answers without a valid key carry no limit headers and use no one’s budget', async () => {
    const { key } = await t.account();
    for (let i = 0; i < 30; i++) {
      const res = await t.call('sb_live_wrong', 'GET', '/user/folders');
      expect(res.status).toBe(401);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    expect((await t.call(key, 'GET', '/user/folders')).headers['x-ratelimit-remaining']).toBe('19');
  });
});
