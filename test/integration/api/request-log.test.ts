import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './harness.ts';

/**
 * Request logging shows paths, never query strings: a key a client sends as `?api_key=` (the
 * spec tells them not to, some will) must not land in the log, whatever the answer was.
 */

const LEAKED = 'sk_live_query_9f8e7d6c5b4a';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await harness();
  key = (await h.account(10)).key;
});
afterAll(() => h.close());

describe('request log', () => {
  it('a key sent in the query string never appears in the log, on any kind of answer', async () => {
    const q = `api_key=${LEAKED}&token=${LEAKED}&x=1`;
    const answers = [
      await h.call(key, 'GET', `/user/assistants?${q}`), // 200
      await h.call(undefined, 'GET', `/user/assistants?${q}`), // 401
      await h.call(key, 'GET', `/user/assistant/987654?${q}`), // 404 from a route
      await h.call(key, 'GET', `/no/such/route?${q}`), // 404 from the router
      await h.call(key, 'GET', `/user/assistants/voices?mood=${LEAKED}`), // 422 naming the parameter
      await h.call(key, 'POST', `/user/folders?${q}`, '{', { 'content-type': 'application/json' }), // 400
      await h.call(undefined, 'GET', `/conversations/00000000-0000-4000-8000-000000000000?${q}`), // keyless 404
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 404, 422, 400, 404]);
    const log = h.logs.join('');
    // Requests were logged, with their paths.
    const lines = h.logs.map((l) => JSON.parse(l) as { msg?: string; path?: string; method?: string });
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.map((l) => l.path)).toEqual(
      expect.arrayContaining(['/api/user/assistants', '/api/user/assistant/987654', '/api/no/such/route', '/api/user/assistants/voices', '/api/user/folders']),
    );
    expect(requests.every((l) => !l.path!.includes('?'))).toBe(true);
    // One line per request, at completion: fastify's own request/response pair is off.
    expect(requests).toHaveLength(answers.length);
    expect(lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toEqual([]);
    expect(log).not.toContain(LEAKED);
    // Nor does the router's 404 answer echo it.
    expect(answers[3]!.body).toEqual({ message: 'Route GET /api/no/such/route not found.' });
  });
});
