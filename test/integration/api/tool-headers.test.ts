import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platform, type Platform } from './platform-helpers.ts';

/**
 * Custom tool headers (an Authorization token, an API key) are secrets like the calendar key:
 * sealed at rest, masked in every answer by the same rule (`********` plus the last 4
 * characters of a value of 12 or more), and a masked value sent back keeps the real one.
 */

const TOKEN = 'Bearer tl_live_5f4e3d2c1b0a';
const API_KEY = 'k-9z8y7x6w5v4u';
const SHORT = 'abc123';

let t: Platform;
beforeEach(async () => {
  t = await platform();
});
afterEach(async () => {
  await t.close();
});

const tool = (over: Record<string, unknown> = {}) => ({
  name: 'lookup_order',
  description: 'Looks up an order by number',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } } },
  endpoint: 'https://api.example.com/orders',
  headers: { Authorization: TOKEN, 'X-Api-Key': API_KEY, 'X-Tenant': SHORT },
  ...over,
});

const MASKED = { Authorization: `********${TOKEN.slice(-4)}`, 'X-Api-Key': `********${API_KEY.slice(-4)}`, 'X-Tenant': '********' };

describe('custom tool headers are secrets', () => {
  it('are masked in every answer (create, read, list, update) with the calendar key rule, and sealed in the database', async () => {
    const created = await t.req(t.a.key, 'POST', '/user/tools', tool());
    expect(created.status).toBe(201);
    const id = created.body.data.id as number;
    const answers = [
      created,
      await t.req(t.a.key, 'GET', `/user/tools/${id}`),
      await t.req(t.a.key, 'GET', '/user/tools'),
      await t.req(t.a.key, 'PUT', `/user/tools/${id}`, { description: 'Changed' }),
    ];
    expect(answers[0]!.body.data.headers).toEqual(MASKED);
    expect(answers[1]!.body.headers).toEqual(MASKED);
    expect(answers[2]!.body[0].headers).toEqual(MASKED);
    expect(answers[3]!.body.data.headers).toEqual(MASKED);
    for (const a of answers) for (const secret of [TOKEN, API_KEY, SHORT]) expect(JSON.stringify(a.body)).not.toContain(secret);
    const rows = JSON.stringify(t.ctx.store.sqlite.prepare('SELECT * FROM tools').all());
    for (const secret of [TOKEN, API_KEY, SHORT, 'Authorization']) expect(rows).not.toContain(secret);
    // The engine itself reads the real values.
    expect((await t.ctx.repos.tools.get(t.a.id, id))!.headers).toEqual({ Authorization: TOKEN, 'X-Api-Key': API_KEY, 'X-Tenant': SHORT });
  });

  it('a PUT that sends the masked headers back as read keeps the real secrets; a new value replaces one', async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/tools', tool())).body.data.id as number;
    const read = (await t.req(t.a.key, 'GET', `/user/tools/${id}`)).body;
    // The whole object echoed back, as a client editing one field would.
    const { id: _id, created_at: _c, updated_at: _u, ...echo } = read;
    const put = await t.req(t.a.key, 'PUT', `/user/tools/${id}`, { ...echo, description: 'Edited' });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect((await t.ctx.repos.tools.get(t.a.id, id))!.headers).toEqual({ Authorization: TOKEN, 'X-Api-Key': API_KEY, 'X-Tenant': SHORT });
    // Header names compare without case, as in HTTP; one value changed, one header dropped.
    const rotated = await t.req(t.a.key, 'PUT', `/user/tools/${id}`, { headers: { authorization: MASKED.Authorization, 'X-Api-Key': 'k-new-value-0001' } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.data.headers).toEqual({ authorization: MASKED.Authorization, 'X-Api-Key': '********0001' });
    expect((await t.ctx.repos.tools.get(t.a.id, id))!.headers).toEqual({ authorization: TOKEN, 'X-Api-Key': 'k-new-value-0001' });
  });

  it('a masked value that matches no stored header is refused, never stored as the mask', async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/tools', tool())).body.data.id as number;
    for (const headers of [{ Authorization: '********zzzz' }, { 'X-Other': MASKED.Authorization }]) {
      const res = await t.req(t.a.key, 'PUT', `/user/tools/${id}`, { headers });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)[0]).toMatch(/^headers\./);
    }
    expect((await t.req(t.a.key, 'POST', '/user/tools', tool({ name: 'other', headers: { Authorization: '********' } }))).status).toBe(422);
    expect((await t.ctx.repos.tools.get(t.a.id, id))!.headers.Authorization).toBe(TOKEN);
  });

  it('rows stored in clear by an older build read as before, are masked on read, and are sealed at start-up', async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/tools', tool())).body.data.id as number;
    // What an older build wrote: the headers as plain JSON.
    t.ctx.store.sqlite.prepare('UPDATE tools SET headers = ? WHERE id = ?').run(JSON.stringify({ Authorization: TOKEN }), id);
    expect((await t.ctx.repos.tools.get(t.a.id, id))!.headers).toEqual({ Authorization: TOKEN });
    const read = await t.req(t.a.key, 'GET', `/user/tools/${id}`);
    expect(read.body.headers).toEqual({ Authorization: MASKED.Authorization });
    expect(await t.ctx.repos.tools.sealPlainHeaders()).toBe(1);
    expect(JSON.stringify(t.ctx.store.sqlite.prepare('SELECT headers FROM tools').all())).not.toContain(TOKEN);
    expect((await t.ctx.repos.tools.get(t.a.id, id))!.headers).toEqual({ Authorization: TOKEN });
    expect(await t.ctx.repos.tools.sealPlainHeaders()).toBe(0);
  });

  it('at most 50 headers, counted before any is checked', async () => {
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`X-H${i}`, 5]));
    const res = await t.req(t.a.key, 'POST', '/user/tools', tool({ headers: many }));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ headers: ['The headers field must not have more than 50 entries.'] });
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`X-H${i}`, 'v']));
    expect((await t.req(t.a.key, 'POST', '/user/tools', tool({ headers: fifty }))).status).toBe(201);
  });
});
