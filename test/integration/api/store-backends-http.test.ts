/**
 * The REST app on either store, over a real socket on loopback: assistants, knowledge bases and
 * a charged chat go through HTTP the same way on SQLite and on PostgreSQL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testAppOn, type TestApp } from '../../support/app.ts';
import type { Store } from '../../../src/store/db.ts';
import { postgresAvailable, STORE_BACKENDS } from '../../support/postgres.ts';

let t: TestApp<Store> | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const assistant = (over: Record<string, unknown> = {}) => ({
  name: 'Support line',
  voice_id: 121,
  language_id: 1,
  type: 'outbound',
  mode: 'pipeline',
  timezone: 'Europe/Paris',
  initial_message: 'Hello, how can I help?',
  system_prompt: 'You are a helpful agent.',
  llm_model_id: 1,
  ...over,
});

async function listen(app: TestApp<Store>): Promise<(key: string, method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>> {
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  return async (key, method, path, body) => {
    const res = await fetch(`${address}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

describe.each(STORE_BACKENDS)('REST over HTTP on %s', (backend) => {
  describe.skipIf(backend === 'postgres' && !postgresAvailable)('', () => {
    it('assistants: create, list, read, update, delete', async () => {
      t = await testAppOn(backend);
      const a = await t.account(10);
      const other = await t.account(10);
      const http = await listen(t);
      const created = await http(a.key, 'POST', '/user/assistant', assistant());
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.data.id as number;
      await http(other.key, 'POST', '/user/assistant', assistant({ name: 'Not yours' }));
      const list = await http(a.key, 'GET', '/user/assistants');
      expect(list.status).toBe(200);
      expect(list.body.assistants).toEqual([expect.objectContaining({ id, name: 'Support line', status: 'inactive' })]);
      const updated = await http(a.key, 'PUT', `/user/assistant/${id}`, { name: 'Renamed', max_duration: 1200 });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      const read = await http(a.key, 'GET', `/user/assistant/${id}`);
      expect(read.body.data ?? read.body).toMatchObject({ id, name: 'Renamed', max_duration: 1200, record: false });
      expect((await http(other.key, 'GET', `/user/assistant/${id}`)).status).toBe(404);
      expect((await http(a.key, 'DELETE', `/user/assistant/${id}`)).status).toBe(200);
      expect((await http(a.key, 'DELETE', `/user/assistant/${id}`)).status).toBe(404);
      expect((await http(a.key, 'GET', '/user/assistants')).body.assistants).toEqual([]);
    });

    it('knowledge bases: listed over HTTP; the search ranks the title match first', async () => {
      t = await testAppOn(backend);
      const a = await t.account(10);
      const kb = await t.ctx.repos.knowledgeBases.create(a.id, 'Help', null);
      await t.ctx.repos.knowledgeBases.addDocument(a.id, kb.id, 'Opening hours', 'Open nine to five.');
      await t.ctx.repos.knowledgeBases.addDocument(a.id, kb.id, 'Parking', 'Parking is free; opening of the garage at eight.');
      const http = await listen(t);
      const list = await http(a.key, 'GET', '/user/knowledge-bases');
      expect(list.status).toBe(200);
      const hits = await t.ctx.repos.knowledgeBases.search(a.id, kb.id, 'opening hours');
      expect(hits.map((h) => h.title)).toEqual(['Opening hours', 'Parking']);
    });
  });
});
