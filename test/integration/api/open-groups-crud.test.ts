import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, seed, type Harness } from './harness.ts';

/**
 * Every open group of the API (the resources beyond the core specification) has create, list,
 * read and delete. These are the operations the interface's list lacks: read of folders, labels
 * and phone numbers; delete of campaigns and WhatsApp senders; read and delete of knowledge-base
 * documents.
 * Cross-tenant checks of each are in cross-tenant.test.ts.
 */

let h: Harness;
let key: string;
let ids: Awaited<ReturnType<typeof seed>>;
beforeAll(async () => {
  h = await harness();
  key = (await h.account(10)).key;
  ids = await seed(h, key);
});
afterAll(() => h.close());

describe('read', () => {
  it('GET /user/folders/{id} and /user/labels/{id}: {id, name, created_at}; 404 {message} when missing', async () => {
    for (const [path, id, what] of [['/user/folders', ids.folder, 'Folder'], ['/user/labels', ids.label, 'Label']] as const) {
      const res = await h.call(key, 'GET', `${path}/${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id, name: expect.any(String), created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      const missing = await h.call(key, 'GET', `${path}/999`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ message: `${what} not found` });
    }
  });

  it('GET /user/phone-numbers/{id}: the record as listed, trunk and caller-ID numbers alike', async () => {
    const list = (await h.call(key, 'GET', '/user/phone-numbers')).body as Array<{ id: number }>;
    for (const item of list) expect((await h.call(key, 'GET', `/user/phone-numbers/${item.id}`)).body).toEqual(item);
    expect(list.map((p) => p.id).sort()).toEqual([ids.trunkNumber, ids.callerId].sort());
    expect((await h.call(key, 'GET', '/user/phone-numbers/999')).status).toBe(404);
  });

  it('GET /user/knowledge-bases/{id}/documents/{document_id}: the document with its content', async () => {
    const res = await h.call(key, 'GET', `/user/knowledge-bases/${ids.kb}/documents/${ids.doc}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ids.doc, knowledge_base_id: ids.kb, title: 'Hours', content: 'Open 9 to 5.', length: 12 });
    // A document is found only under its own base.
    const other = (await h.call(key, 'POST', '/user/knowledge-bases', { name: 'Other' })).body.data.id;
    expect((await h.call(key, 'GET', `/user/knowledge-bases/${other}/documents/${ids.doc}`)).status).toBe(404);
  });
});

describe('delete', () => {
  it('DELETE a knowledge-base document: gone from the base and from search', async () => {
    expect(await h.ctx.repos.knowledgeBases.search((await h.ctx.repos.accounts.accountForKey(key))!, ids.kb, 'open')).toHaveLength(1);
    const res = await h.call(key, 'DELETE', `/user/knowledge-bases/${ids.kb}/documents/${ids.doc}`);
    expect(res).toMatchObject({ status: 200, body: { message: 'Document deleted successfully' } });
    expect((await h.call(key, 'GET', `/user/knowledge-bases/${ids.kb}`)).body).toMatchObject({ document_count: 0, documents: [] });
    expect(await h.ctx.repos.knowledgeBases.search((await h.ctx.repos.accounts.accountForKey(key))!, ids.kb, 'open')).toEqual([]);
    expect((await h.call(key, 'DELETE', `/user/knowledge-bases/${ids.kb}/documents/${ids.doc}`)).status).toBe(404);
  });

  it('DELETE /user/campaigns/{id}: 409 while in progress, then 200 with its leads gone, then 404', async () => {
    const start = await h.call(key, 'POST', '/user/campaigns/update-status', { campaign_id: ids.campaign, action: 'start' });
    expect(start.status, start.raw).toBe(200);
    const running = await h.call(key, 'DELETE', `/user/campaigns/${ids.campaign}`);
    expect(running.status).toBe(409);
    expect(running.body).toEqual({ message: expect.stringMatching(/in progress/) });
    expect((await h.call(key, 'POST', '/user/campaigns/update-status', { campaign_id: ids.campaign, action: 'stop' })).status).toBe(200);
    expect((await h.call(key, 'DELETE', `/user/campaigns/${ids.campaign}`)).body).toEqual({ message: 'Campaign deleted successfully' });
    expect((await h.call(key, 'GET', `/user/campaigns/${ids.campaign}`)).status).toBe(404);
    expect(h.ctx.store.sqlite.prepare('SELECT COUNT(*) AS n FROM leads WHERE campaign_id = ?').get(ids.campaign)).toEqual({ n: 0 });
    expect((await h.call(key, 'DELETE', `/user/campaigns/${ids.campaign}`)).status).toBe(404);
    expect((await h.call(key, 'POST', '/user/campaigns/update-status', { campaign_id: ids.campaign, action: 'start' })).status).toBe(404);
  });

  it('DELETE /user/whatsapp/senders/{id}: 200, then it is gone for reads, session status and the list', async () => {
    const res = await h.call(key, 'DELETE', `/user/whatsapp/senders/${ids.sender}`);
    expect(res).toMatchObject({ status: 200, body: { message: 'WhatsApp sender deleted successfully' } });
    expect((await h.call(key, 'GET', `/user/whatsapp/senders/${ids.sender}`)).status).toBe(404);
    expect((await h.call(key, 'GET', '/user/whatsapp/senders')).body).toEqual([]);
    const status = await h.call(key, 'GET', `/user/whatsapp/session-status?sender_id=${ids.sender}&recipient_phone=%2B14155550111`);
    expect(status.status).toBe(404);
    expect(status.body.error_code).toBe('SENDER_NOT_FOUND');
    expect((await h.call(key, 'DELETE', `/user/whatsapp/senders/${ids.sender}`)).status).toBe(404);
  });
});
