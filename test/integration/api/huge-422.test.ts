import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantBody, harness, type Harness } from './harness.ts';

/**
 * A body just under the 1 MB limit can carry 80,000 mistakes. The 422 keeps the spec's
 * `{message, errors: {field: [string]}}` shape, lists the first 20 messages and counts all of
 * them in `message`; the work grows with the body, not with its square.
 */

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await harness();
  key = (await h.account(10)).key;
});
afterAll(() => h.close());

const json = { 'content-type': 'application/json' };
const unknownKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 0]));

function expectCapped(res: { status: number; body: any; raw: string }, total: number) {
  expect(res.status).toBe(422);
  expect(res.raw.length).toBeLessThan(4_000);
  expect(Object.keys(res.body).sort()).toEqual(['errors', 'message']);
  expect(typeof res.body.message).toBe('string');
  for (const messages of Object.values(res.body.errors)) {
    expect(Array.isArray(messages) && messages.every((m) => typeof m === 'string')).toBe(true);
  }
  expect(Object.values(res.body.errors).flat()).toHaveLength(20);
  expect(res.body.message).toContain(`and ${(total - 1).toLocaleString('en-US')} more errors; the first 20 are listed`);
}

describe('a 422 for a body full of mistakes', () => {
  it('80,000 unknown keys in a 0.87 MB assistant body: the first 20 errors and a count, known fields first', async () => {
    const payload = JSON.stringify({ ...assistantBody({ name: undefined }), ...unknownKeys(80_000) });
    expect(payload.length).toBeGreaterThan(850_000);
    expect(payload.length).toBeLessThan(1024 * 1024);
    const res = await h.call(key, 'POST', '/user/assistant', payload, json);
    expectCapped(res, 80_001);
    // The one mistake in a known field is not drowned by the unknown keys.
    expect(res.body.errors.name).toEqual(['The name field is required.']);
    expect(res.body.message).toMatch(/^The name field is required\. \(and 80,000 more errors/);
  });

  it('the same on update, after the id is found; a missing id is still 404', async () => {
    const id = (await h.call(key, 'POST', '/user/assistant', assistantBody())).body.data.id as number;
    const payload = JSON.stringify(unknownKeys(80_000));
    expectCapped(await h.call(key, 'PUT', `/user/assistant/${id}`, payload, json), 80_000);
    expect((await h.call(key, 'PUT', '/user/assistant/987654', payload, json)).status).toBe(404);
  });

  it('thousands of problems in one field (tool parameter properties that are not schemas): capped too', async () => {
    const tool = {
      name: 't',
      description: 'd',
      endpoint: 'https://tools.example.com/x',
      parameters: { type: 'object', properties: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`p${i}`, 1])) },
    };
    expectCapped(await h.call(key, 'POST', '/user/tools', tool), 5_000);
  });

  it('grows linearly: eight times the keys cost well under sixty-four times the time', async () => {
    const time = async (n: number) => {
      const payload = JSON.stringify({ ...assistantBody(), ...unknownKeys(n) });
      let best = Infinity;
      for (let r = 0; r < 3; r++) {
        const t0 = performance.now();
        expect((await h.call(key, 'POST', '/user/assistant', payload, json)).status).toBe(422);
        best = Math.min(best, performance.now() - t0);
      }
      return best;
    };
    const small = await time(10_000);
    const large = await time(80_000);
    // Linear work gives about 8 (less with the fixed cost of a request); quadratic, 64.
    expect(large / small).toBeLessThan(24);
  }, 60_000);
});
