import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platform, type Platform } from './platform-helpers.ts';

let t: Platform;
beforeEach(async () => { t = await platform(); });
afterEach(async () => { await t.close(); });

async function kbWithDocs(key: string): Promise<number> {
  const kb = await t.req(key, 'POST', '/user/knowledge-bases', { name: 'Support', description: 'FAQ' });
  expect(kb.status).toBe(201);
  const id = kb.body.data.id as number;
  const docs = [
    { title: 'Opening hours', content: 'Our store is open Monday to Friday from 9am to 6pm. On Saturday we open at 10am.' },
    { title: 'Returns', content: 'You can return any item within 30 days with the receipt. Refunds take five business days.' },
    { title: 'Shipping', content: 'Shipping is free above 50 dollars. Express delivery arrives the next day.' },
  ];
  for (const d of docs) expect((await t.req(key, 'POST', `/user/knowledge-bases/${id}/documents`, d)).status).toBe(201);
  return id;
}

describe('/user/knowledge-bases', () => {
  it('creates, lists with counts, shows documents, deletes', async () => {
    const id = await kbWithDocs(t.a.key);
    const list = await t.req(t.a.key, 'GET', '/user/knowledge-bases');
    expect(list.body).toEqual([expect.objectContaining({ id, name: 'Support', description: 'FAQ', document_count: 3 })]);
    const one = await t.req(t.a.key, 'GET', `/user/knowledge-bases/${id}`);
    expect(one.body.documents.map((d: { title: string }) => d.title)).toEqual(['Opening hours', 'Returns', 'Shipping']);
    expect(one.body.documents[0]).toMatchObject({ knowledge_base_id: id, length: expect.any(Number) });
    expect((await t.req(t.a.key, 'DELETE', `/user/knowledge-bases/${id}`)).status).toBe(200);
    expect((await t.req(t.a.key, 'GET', `/user/knowledge-bases/${id}`)).status).toBe(404);
    expect(await t.ctx.repos.knowledgeBases.search(t.a.id, id, 'refund')).toEqual([]);
    const fts = t.ctx.store.sqlite.prepare(`SELECT count(*) AS n FROM kb_fts WHERE kb_fts MATCH '"refunds"'`).get() as { n: number };
    expect(fts.n).toBe(0);
  });

  it('validates bodies', async () => {
    expect((await t.req(t.a.key, 'POST', '/user/knowledge-bases', {})).body.errors.name).toBeDefined();
    const id = (await t.req(t.a.key, 'POST', '/user/knowledge-bases', { name: 'K' })).body.data.id;
    const noTitle = await t.req(t.a.key, 'POST', `/user/knowledge-bases/${id}/documents`, { content: 'x' });
    expect(noTitle.status).toBe(422);
    expect(noTitle.body.errors.title).toBeDefined();
    const empty = await t.req(t.a.key, 'POST', `/user/knowledge-bases/${id}/documents`, { title: 'x', content: '' });
    expect(empty.body.errors.content).toBeDefined();
  });

  it('takes a document of about 1 MB', async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/knowledge-bases', { name: 'Big' })).body.data.id;
    const content = `${'lorem ipsum '.repeat(83_000)}needle`;
    const res = await t.req(t.a.key, 'POST', `/user/knowledge-bases/${id}/documents`, { title: 'Big', content });
    expect(res.status).toBe(201);
    expect(res.body.data.length).toBe(content.length);
    const hits = await t.ctx.repos.knowledgeBases.search(t.a.id, id, 'needle');
    expect(hits.map((h) => h.title)).toEqual(['Big']);
  });

  it("answers 404 for another account's base on every id route", async () => {
    const id = await kbWithDocs(t.a.key);
    expect((await t.req(t.b.key, 'GET', `/user/knowledge-bases/${id}`)).status).toBe(404);
    expect((await t.req(t.b.key, 'POST', `/user/knowledge-bases/${id}/documents`, { title: 'x', content: 'y' })).status).toBe(404);
    expect((await t.req(t.b.key, 'DELETE', `/user/knowledge-bases/${id}`)).status).toBe(404);
    expect((await t.req(t.b.key, 'GET', '/user/knowledge-bases')).body).toEqual([]);
    expect((await t.req(t.a.key, 'GET', `/user/knowledge-bases/${id}`)).body.document_count).toBe(3);
  });
});

describe('knowledge search', () => {
  it('ranks the best-matching document first and returns snippets', async () => {
    const id = await kbWithDocs(t.a.key);
    const hits = await t.ctx.repos.knowledgeBases.search(t.a.id, id, 'When are you open on Saturday?');
    expect(hits[0]).toMatchObject({ title: 'Opening hours', document_id: expect.any(Number) });
    expect(hits[0]!.snippet).toMatch(/Saturday/);
    expect(hits[0]!.score).toBeGreaterThan(0);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
  });

  it('never fails on FTS syntax in user text', async () => {
    const id = await kbWithDocs(t.a.key);
    for (const q of ['"', 'AND', 'NOT OR', 'title:returns', 'ship* NEAR(', '(((', '^', '', '   ', "'; DROP TABLE kb_documents; --"]) {
      await expect(t.ctx.repos.knowledgeBases.search(t.a.id, id, q)).resolves.toBeInstanceOf(Array);
    }
    expect((await t.ctx.repos.knowledgeBases.search(t.a.id, id, 'title:returns'))[0]?.title).toBe('Returns');
  });

  it('respects the limit and stays inside the account and base', async () => {
    const id = await kbWithDocs(t.a.key);
    const other = await kbWithDocs(t.b.key);
    expect(await t.ctx.repos.knowledgeBases.search(t.a.id, id, 'the day', 1)).toHaveLength(1);
    expect(await t.ctx.repos.knowledgeBases.search(t.b.id, id, 'shipping')).toEqual([]);
    const mine = await t.ctx.repos.knowledgeBases.search(t.a.id, id, 'shipping express');
    expect(mine.every((h) => h.document_id <= 3)).toBe(true);
    expect((await t.ctx.repos.knowledgeBases.search(t.b.id, other, 'shipping'))[0]?.title).toBe('Shipping');
  });
});
