import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platform, type Platform } from './platform-helpers.ts';

let t: Platform;
beforeEach(async () => { t = await platform(); });
afterEach(async () => { await t.close(); });

const sender = (over: Record<string, unknown> = {}) => ({
  name: 'Support WA',
  phone: '+14155550188',
  account_sid: 'AC0123456789abcdef0123456789abcdef',
  auth_token: 'twilio-token-secret',
  ...over,
});

describe('/user/whatsapp/senders', () => {
  it('creates (online by default), lists and reads without the token', async () => {
    const assistantId = await t.assistant(t.a.id, 'inbound');
    const res = await t.req(t.a.key, 'POST', '/user/whatsapp/senders', sender({ assistant_id: assistantId }));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ name: 'Support WA', phone: '+14155550188', assistant_id: assistantId, status: 'online', account_sid: 'AC0123456789abcdef0123456789abcdef' });
    expect(JSON.stringify(res.body)).not.toContain('twilio-token-secret');
    const id = res.body.data.id;
    expect((await t.req(t.a.key, 'GET', '/user/whatsapp/senders')).body).toEqual([res.body.data]);
    expect((await t.req(t.a.key, 'GET', `/user/whatsapp/senders/${id}`)).body).toEqual(res.body.data);
    const row = await t.ctx.store.db.selectFrom('whatsapp_senders').select('auth_token_enc').executeTakeFirstOrThrow();
    expect(row.auth_token_enc).not.toContain('twilio-token-secret');
  });

  it('repo contract: get/getById give the decrypted token', async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/whatsapp/senders', sender())).body.data.id;
    const expected = { id, accountId: t.a.id, name: 'Support WA', phone: '+14155550188', assistantId: null, accountSid: 'AC0123456789abcdef0123456789abcdef', authToken: 'twilio-token-secret', status: 'online' };
    expect(await t.ctx.repos.whatsappSenders.get(t.a.id, id)).toMatchObject(expected);
    expect(await t.ctx.repos.whatsappSenders.getById(id)).toMatchObject(expected);
    expect(await t.ctx.repos.whatsappSenders.get(t.b.id, id)).toBeUndefined();
    expect(await t.ctx.repos.whatsappSenders.getById(999)).toBeUndefined();
  });

  it('updates given fields: status offline, new token, assistant', async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/whatsapp/senders', sender())).body.data.id;
    const assistantId = await t.assistant(t.a.id);
    const res = await t.req(t.a.key, 'PUT', `/user/whatsapp/senders/${id}`, { status: 'offline', auth_token: 'rotated', assistant_id: assistantId });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'offline', name: 'Support WA', assistant_id: assistantId });
    expect((await t.ctx.repos.whatsappSenders.get(t.a.id, id))?.authToken).toBe('rotated');
    const cleared = await t.req(t.a.key, 'PUT', `/user/whatsapp/senders/${id}`, { assistant_id: null });
    expect(cleared.body.data.assistant_id).toBeNull();
  });

  it.each([
    ['name', { name: '' }],
    ['phone', { phone: '4155550188' }],
    ['account_sid', { account_sid: '' }],
    ['auth_token', { auth_token: undefined }],
    ['status', { status: 'busy' }],
    ['assistant_id', { assistant_id: 'x' }],
  ])('422 naming %s', async (field, over) => {
    const res = await t.req(t.a.key, 'POST', '/user/whatsapp/senders', sender(over));
    expect(res.status).toBe(422);
    expect(res.body.errors[field]).toBeDefined();
  });

  it("refuses another account's assistant and a duplicate phone", async () => {
    const theirs = await t.assistant(t.b.id);
    const res = await t.req(t.a.key, 'POST', '/user/whatsapp/senders', sender({ assistant_id: theirs }));
    expect(res.status).toBe(422);
    expect(res.body.errors.assistant_id).toBeDefined();
    expect((await t.req(t.a.key, 'POST', '/user/whatsapp/senders', sender())).status).toBe(201);
    expect((await t.req(t.a.key, 'POST', '/user/whatsapp/senders', sender())).status).toBe(409);
    expect((await t.req(t.b.key, 'POST', '/user/whatsapp/senders', sender())).status).toBe(201);
  });

  it("answers 404 for another account's sender", async () => {
    const id = (await t.req(t.a.key, 'POST', '/user/whatsapp/senders', sender())).body.data.id;
    expect((await t.req(t.b.key, 'GET', `/user/whatsapp/senders/${id}`)).status).toBe(404);
    expect((await t.req(t.b.key, 'PUT', `/user/whatsapp/senders/${id}`, { status: 'offline' })).status).toBe(404);
    expect((await t.req(t.b.key, 'GET', '/user/whatsapp/senders')).body).toEqual([]);
    expect((await t.ctx.repos.whatsappSenders.get(t.a.id, id))?.status).toBe('online');
  });
});
