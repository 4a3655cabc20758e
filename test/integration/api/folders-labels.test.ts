import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platform, type Platform } from './platform-helpers.ts';

let t: Platform;
beforeEach(async () => { t = await platform(); });
afterEach(async () => { await t.close(); });

describe.each(['folders', 'labels'])('/user/%s', (group) => {
  const url = `/user/${group}`;

  it('creates, lists and deletes', async () => {
    const created = await t.req(t.a.key, 'POST', url, { name: '  Sales  ' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ id: expect.any(Number), name: 'Sales', created_at: expect.any(String) });
    const list = await t.req(t.a.key, 'GET', url);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([created.body.data]);
    const del = await t.req(t.a.key, 'DELETE', `${url}/${created.body.data.id}`);
    expect(del.status).toBe(200);
    expect(del.body.message).toMatch(/deleted/);
    expect((await t.req(t.a.key, 'GET', url)).body).toEqual([]);
  });

  it('validates the name', async () => {
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(256) }, { name: 5 }]) {
      const res = await t.req(t.a.key, 'POST', url, body);
      expect(res.status).toBe(422);
      expect(res.body.errors.name).toBeDefined();
    }
  });

  it("hides other accounts' rows: list is per account, delete is 404", async () => {
    const created = await t.req(t.a.key, 'POST', url, { name: 'Mine' });
    expect((await t.req(t.b.key, 'GET', url)).body).toEqual([]);
    const del = await t.req(t.b.key, 'DELETE', `${url}/${created.body.data.id}`);
    expect(del.status).toBe(404);
    expect(del.body).toEqual({ message: expect.stringMatching(/not found/) });
    expect((await t.req(t.a.key, 'GET', url)).body).toHaveLength(1);
    expect((await t.req(t.a.key, 'DELETE', `${url}/99999`)).status).toBe(404);
    expect((await t.req(t.a.key, 'DELETE', `${url}/abc`)).status).toBe(404);
  });

  it('requires a key', async () => {
    expect((await t.req(undefined, 'GET', url)).status).toBe(401);
    expect((await t.req(undefined, 'POST', url, { name: 'x' })).status).toBe(401);
  });
});

it('deleting a folder leaves its assistants uncategorized', async () => {
  const folder = await t.req(t.a.key, 'POST', '/user/folders', { name: 'F' });
  const assistantId = await t.assistant(t.a.id);
  await t.ctx.store.db.updateTable('assistants').set({ folder_id: folder.body.data.id }).where('id', '=', assistantId).execute();
  expect((await t.req(t.a.key, 'DELETE', `/user/folders/${folder.body.data.id}`)).status).toBe(200);
  const row = await t.ctx.store.db.selectFrom('assistants').select('folder_id').where('id', '=', assistantId).executeTakeFirstOrThrow();
  expect(row.folder_id).toBeNull();
});
