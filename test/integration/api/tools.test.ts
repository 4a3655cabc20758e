import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platform, type Platform } from './platform-helpers.ts';

let t: Platform;
beforeEach(async () => { t = await platform(); });
afterEach(async () => { await t.close(); });

const tool = (over: Record<string, unknown> = {}) => ({
  name: 'lookup_order',
  description: 'Looks up an order by number',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  endpoint: 'https://api.example.com/orders',
  headers: { Authorization: 'Bearer tool-secret' },
  ...over,
});

describe('/user/tools', () => {
  it('creates with defaults, reads, lists', async () => {
    const res = await t.req(t.a.key, 'POST', '/user/tools', tool());
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(data).toMatchObject({ name: 'lookup_order', method: 'POST', timeout_ms: 10000, headers: { Authorization: '********cret' } });
    expect((await t.req(t.a.key, 'GET', `/user/tools/${data.id}`)).body).toEqual(data);
    expect((await t.req(t.a.key, 'GET', '/user/tools')).body).toEqual([data]);
  });

  it('accepts http only for loopback hosts', async () => {
    for (const endpoint of ['http://localhost:8080/x', 'http://127.0.0.1/x', 'http://[::1]:9000/x']) {
      expect((await t.req(t.a.key, 'POST', '/user/tools', tool({ endpoint }))).status).toBe(201);
    }
    for (const endpoint of ['http://example.com/x', 'ftp://example.com/x', 'not a url', 'http://10.0.0.1/x']) {
      const res = await t.req(t.a.key, 'POST', '/user/tools', tool({ endpoint }));
      expect(res.status).toBe(422);
      expect(res.body.errors.endpoint).toBeDefined();
    }
  });

  it.each([
    ['name', { name: 'has space' }],
    ['name', { name: 'x'.repeat(65) }],
    ['name', { name: '' }],
    ['description', { description: undefined }],
    ['parameters', { parameters: { type: 'string' } }],
    ['parameters', { parameters: { type: 'object' } }],
    ['parameters', { parameters: { type: 'object', properties: { a: 5 } } }],
    ['parameters', { parameters: { type: 'object', properties: {}, required: ['missing'] } }],
    ['parameters', { parameters: [] }],
    ['method', { method: 'HEAD' }],
    ['timeout_ms', { timeout_ms: 99 }],
    ['timeout_ms', { timeout_ms: 30001 }],
    ['headers', { headers: { A: 5 } }],
  ])('rejects a bad %s', async (field, over) => {
    const res = await t.req(t.a.key, 'POST', '/user/tools', tool(over));
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).some((k) => k === field || k.startsWith(`${field}.`))).toBe(true);
  });

  it('updates given fields only and validates the result', async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/tools', tool())).body.data.id;
    const res = await t.req(t.a.key, 'PUT', `/user/tools/${id}`, { method: 'GET', timeout_ms: 500 });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'lookup_order', method: 'GET', timeout_ms: 500 });
    expect((await t.req(t.a.key, 'PUT', `/user/tools/${id}`, { endpoint: 'http://example.com' })).status).toBe(422);
  });

  it('deletes', async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/tools', tool())).body.data.id;
    expect((await t.req(t.a.key, 'DELETE', `/user/tools/${id}`)).status).toBe(200);
    expect((await t.req(t.a.key, 'GET', `/user/tools/${id}`)).status).toBe(404);
  });

  it("answers 404 for another account's tool on every id route", async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/tools', tool())).body.data.id;
    expect((await t.req(t.b.key, 'GET', `/user/tools/${id}`)).status).toBe(404);
    expect((await t.req(t.b.key, 'PUT', `/user/tools/${id}`, { name: 'x' })).status).toBe(404);
    expect((await t.req(t.b.key, 'DELETE', `/user/tools/${id}`)).status).toBe(404);
    expect((await t.req(t.b.key, 'GET', '/user/tools')).body).toEqual([]);
    expect((await t.req(t.a.key, 'GET', `/user/tools/${id}`)).body.name).toBe('lookup_order');
  });

  it('getMany returns only the account\'s tools, in the order asked', async () => {
    const one = (await t.req(t.a.key, 'POST', '/user/tools', tool({ name: 'one' }))).body.data.id;
    const two = (await t.req(t.a.key, 'POST', '/user/tools', tool({ name: 'two' }))).body.data.id;
    const theirs = (await t.req(t.b.key, 'POST', '/user/tools', tool({ name: 'theirs' }))).body.data.id;
    const got = await t.ctx.repos.tools.getMany(t.a.id, [two, theirs, one, two]);
    expect(got.map((x) => x.name)).toEqual(['two', 'one']);
    expect(got[0]).toMatchObject({ timeoutMs: 10000, method: 'POST', headers: { Authorization: 'Bearer tool-secret' } });
  });
});
