import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './harness.ts';

/**
 * The keyless chatbot routes are limited per client address (20 per 10 s, 100 per minute), and
 * every request counts, valid or not: a flood of requests that fail validation is refused like
 * any other, before its body is even read.
 */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());

const NOPE_UUID = '00000000-0000-4000-8000-000000000000';

async function keyless(ip: string, method: 'GET' | 'POST', url: string, payload?: string) {
  const res = await h.app.inject({
    method,
    url: `/api${url}`,
    remoteAddress: ip,
    ...(payload === undefined ? {} : { payload, headers: { 'content-type': 'application/json' } }),
  });
  return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown>, headers: res.headers };
}

describe('keyless chatbot limit', () => {
  it('counts requests that fail validation: the 21st invalid request in 10 s is 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await keyless('198.51.100.7', 'POST', '/conversations', '{"assistant_id":"not-a-uuid"}')).status);
    expect(statuses).toEqual([...Array<number>(20).fill(422), ...Array<number>(5).fill(429)]);
    const refused = await keyless('198.51.100.7', 'POST', '/conversations', '{"assistant_id":"not-a-uuid"}');
    expect(refused.body).toEqual({ status: false, error: 'Too many requests.', message: 'Too many requests.', retry_after: 10 });
    expect(refused.headers).toMatchObject({ 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '0', 'retry-after': '10' });
  });

  it('counts malformed JSON, bad path values and unknown conversations alike, on every keyless route', async () => {
    const ip = '198.51.100.8';
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      statuses.push((await keyless(ip, 'POST', '/conversations', '{"assistant_id":')).status);
      statuses.push((await keyless(ip, 'GET', `/conversations/${'x'.repeat(65)}`)).status);
      statuses.push((await keyless(ip, 'POST', `/conversations/${NOPE_UUID}/messages`, '{"message":""}')).status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 400 || s === 404 || s === 422)).toBe(true);
    expect(statuses.slice(20)).toEqual([429]);
    // Once the burst window has passed, the address is admitted again.
    h.clock.advance(10_000);
    expect((await keyless(ip, 'GET', `/conversations/${NOPE_UUID}`)).status).toBe(404);
  });

  it('another client address has its own count; a keyed request is not counted against the address', async () => {
    const ip = '198.51.100.9';
    for (let i = 0; i < 20; i++) await keyless(ip, 'GET', `/conversations/${NOPE_UUID}`);
    expect((await keyless(ip, 'GET', `/conversations/${NOPE_UUID}`)).status).toBe(429);
    expect((await keyless('198.51.100.10', 'GET', `/conversations/${NOPE_UUID}`)).status).toBe(404);
    const { key } = await h.account();
    const keyed = await h.app.inject({ method: 'GET', url: `/api/conversations/${NOPE_UUID}`, remoteAddress: ip, headers: { authorization: `Bearer ${key}` } });
    expect(keyed.statusCode).toBe(404);
  });
});
