import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../support/app.ts';
import { assistantBody, trunkBody } from './harness.ts';

/**
 * Deleting something never leaves what referenced it broken: every assistant that used it stays
 * readable and updatable (a PUT that does not send the reference succeeds), the reference is
 * cleared or the tool that needed it removed, and campaigns in progress that used it are stopped
 * (status and dialer) in the same transaction. docs/API.md, "Deleting things".
 */
let t: TestApp;
const stopped: number[] = [];
beforeAll(async () => {
  t = await testApp();
  t.ctx.campaignRunner = { start: async () => {}, stop: async (id) => void stopped.push(id) };
});
afterAll(() => t.close());

type Key = string;
async function make(key: Key, url: string, body: unknown): Promise<any> {
  const res = await t.call(key, 'POST', url, body);
  if (res.status !== 201) throw new Error(`${url}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** The assistant reads fine and a PUT that sends only a name succeeds; returns what GET shows after. */
async function stillWhole(key: Key, id: number): Promise<any> {
  // A fresh rate-limit window (the app's clock is manual): many checks run on one key.
  t.clock.advance(61_000);
  expect((await t.call(key, 'GET', `/user/assistant/${id}`)).status).toBe(200);
  const put = await t.call(key, 'PUT', `/user/assistant/${id}`, { name: `renamed ${id}` });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const after = await t.call(key, 'GET', `/user/assistant/${id}`);
  expect(after.body.name).toBe(`renamed ${id}`);
  return after.body;
}

async function runningCampaign(key: Key, assistantId: number, phoneNumberId: number): Promise<number> {
  const c = await make(key, '/user/campaigns', { name: 'Run', assistant_id: assistantId, phone_number_id: phoneNumberId });
  await make(key, `/user/campaigns/${c.id}/leads`, { leads: [{ phone_number: '+14155550999' }] });
  const started = await t.call(key, 'POST', '/user/campaigns/update-status', { campaign_id: c.id, action: 'start' });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  return c.id;
}

describe('deleting a SIP trunk', () => {
  it('unbinds the assistants on its number, removes warm transfers from it, stops campaigns from it: one 200', async () => {
    const a = await t.account(100);
    const trunk = await make(a.key, '/user/sip-trunks', trunkBody({ phone_number: '+14155550101' }));
    const numberId = trunk.phone_number_id as number;
    const inbound = await make(a.key, '/user/assistant', assistantBody({ type: 'inbound', phone_number_id: numberId }));
    const outbound = await make(a.key, '/user/assistant', assistantBody({
      phone_number_id: numberId,
      tools: [
        { type: 'warm_call_transfer', supervisor_phone: '+14155550111', outbound_phone_id: numberId, description: 'To a supervisor' },
        { type: 'end_call' },
      ],
    }));
    const campaign = await runningCampaign(a.key, outbound.id, numberId);
    const draft = await make(a.key, '/user/campaigns', { name: 'Later', assistant_id: outbound.id, phone_number_id: numberId });

    const del = await t.call(a.key, 'DELETE', `/user/sip-trunks/${trunk.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: 'SIP trunk deleted successfully' });

    for (const id of [inbound.id, outbound.id]) expect((await stillWhole(a.key, id)).phone_number_id).toBeNull();
    const tools = (await t.call(a.key, 'GET', `/user/assistant/${outbound.id}`)).body.tools;
    expect(tools).toEqual([{ type: 'end_call', data: expect.any(Object) }]);
    const list = (await t.call(a.key, 'GET', '/user/assistants')).body.assistants;
    for (const item of list) expect(item.phone_number_id).toBeNull();

    expect((await t.call(a.key, 'GET', `/user/campaigns/${campaign}`)).body.status).toBe('stopped');
    expect(stopped).toContain(campaign);
    // A draft keeps its status; starting it says why it cannot run.
    expect((await t.call(a.key, 'GET', `/user/campaigns/${draft.id}`)).body.status).toBe('draft');
    await make(a.key, `/user/campaigns/${draft.id}/leads`, { leads: [{ phone_number: '+14155550998' }] });
    const start = await t.call(a.key, 'POST', '/user/campaigns/update-status', { campaign_id: draft.id, action: 'start' });
    expect(start.status).toBe(422);
    expect(start.body.error_code ?? start.body.message).toBeDefined();
  });
});

describe('deleting a caller-ID number', () => {
  it('unbinds outbound assistants, removes warm transfers from it and stops campaigns from it', async () => {
    const a = await t.account(100);
    const number = await make(a.key, '/user/phone-numbers', { phone_number: '+14155550301' });
    const asst = await make(a.key, '/user/assistant', assistantBody({
      phone_number_id: number.id,
      tools: [{ type: 'warm_call_transfer', supervisor_phone: '+14155550111', outbound_phone_id: number.id, description: 'To a supervisor' }],
    }));
    const campaign = await runningCampaign(a.key, asst.id, number.id);
    expect((await t.call(a.key, 'DELETE', `/user/phone-numbers/${number.id}`)).status).toBe(200);
    const after = await stillWhole(a.key, asst.id);
    expect(after.phone_number_id).toBeNull();
    expect(after.tools).toEqual([]);
    expect((await t.call(a.key, 'GET', `/user/campaigns/${campaign}`)).body.status).toBe('stopped');
    expect(stopped).toContain(campaign);
  });
});

describe('deleting folders, labels, tools and knowledge bases', () => {
  it('clears each from every assistant that used it, leaving the others', async () => {
    const a = await t.account();
    const [f, l1, l2, kb] = [
      await make(a.key, '/user/folders', { name: 'F' }),
      await make(a.key, '/user/labels', { name: 'L1' }),
      await make(a.key, '/user/labels', { name: 'L2' }),
      await make(a.key, '/user/knowledge-bases', { name: 'KB' }),
    ];
    const tool = (name: string) =>
      make(a.key, '/user/tools', { name, description: 'Looks up', parameters: { type: 'object', properties: {} }, endpoint: 'https://tools.example.com/x' });
    const [t1, t2] = [await tool('one'), await tool('two')];
    const asst = await make(a.key, '/user/assistant', assistantBody({ folder_id: f.id, label_ids: [l1.id, l2.id], tool_ids: [t1.id, t2.id], knowledgebase_id: kb.id }));

    expect((await t.call(a.key, 'DELETE', `/user/folders/${f.id}`)).status).toBe(200);
    expect((await stillWhole(a.key, asst.id)).folder_id).toBeNull();
    expect((await t.call(a.key, 'DELETE', `/user/labels/${l1.id}`)).status).toBe(200);
    expect((await stillWhole(a.key, asst.id)).label_ids).toEqual([l2.id]);
    expect((await t.call(a.key, 'DELETE', `/user/tools/${t1.id}`)).status).toBe(200);
    expect((await stillWhole(a.key, asst.id)).tool_ids).toEqual([t2.id]);
    expect((await t.call(a.key, 'DELETE', `/user/knowledge-bases/${kb.id}`)).status).toBe(200);
    const after = await stillWhole(a.key, asst.id);
    expect(after).toMatchObject({ folder_id: null, label_ids: [l2.id], tool_ids: [t2.id], knowledgebase_id: null });
  });
});

describe('deleting an assistant', () => {
  it('removes transfers to it from other assistants, unassigns its WhatsApp senders and stops its campaigns', async () => {
    const a = await t.account(100);
    const number = await make(a.key, '/user/phone-numbers', { phone_number: '+14155550302' });
    const target = await make(a.key, '/user/assistant', assistantBody({ name: 'Target' }));
    const other = await make(a.key, '/user/assistant', assistantBody({ tools: [{ type: 'assistant_transfer', assistant_id: target.id }, { type: 'end_call' }] }));
    const sender = await make(a.key, '/user/whatsapp/senders', { name: 'WA', phone: '+14155550402', account_sid: 'AC123', auth_token: 'wa-token-secret', assistant_id: target.id });
    const campaign = await runningCampaign(a.key, target.id, number.id);

    expect((await t.call(a.key, 'DELETE', `/user/assistant/${target.id}`)).status).toBe(200);
    expect((await stillWhole(a.key, other.id)).tools.map((x: { type: string }) => x.type)).toEqual(['end_call']);
    const s = await t.call(a.key, 'GET', `/user/whatsapp/senders/${sender.id}`);
    expect(s.body.assistant_id).toBeNull();
    expect((await t.call(a.key, 'PUT', `/user/whatsapp/senders/${sender.id}`, { name: 'WA 2' })).status).toBe(200);
    expect((await t.call(a.key, 'GET', `/user/campaigns/${campaign}`)).body.status).toBe('stopped');
    expect(stopped).toContain(campaign);
  });
});

describe('deleting a WhatsApp sender', () => {
  it('leaves its conversations readable', async () => {
    const a = await t.account();
    const asst = await make(a.key, '/user/assistant', assistantBody());
    const sender = await make(a.key, '/user/whatsapp/senders', { name: 'WA', phone: '+14155550403', account_sid: 'AC123', auth_token: 'wa-token-secret', assistant_id: asst.id });
    const conv = await t.ctx.repos.conversations.create({ accountId: a.id, assistantId: asst.id, type: 'whatsapp', whatsappSenderId: sender.id, customerPhone: '+14155550777' } as never);
    expect((await t.call(a.key, 'DELETE', `/user/whatsapp/senders/${sender.id}`)).status).toBe(200);
    const read = await t.call(a.key, 'GET', `/conversations/${(conv as { uuid: string }).uuid}`);
    expect(read.status).toBe(200);
    expect(read.body.customer).toEqual({ name: null, phone: '+14155550777' });
    expect(read.body.whatsapp_sender).toBeUndefined();
    await stillWhole(a.key, asst.id);
  });
});

describe('a PUT and references it did not send', () => {
  it('a reference left dangling by an older build is dropped, not a 422; one the client sends is still checked', async () => {
    const a = await t.account();
    const number = await make(a.key, '/user/phone-numbers', { phone_number: '+14155550303' });
    const asst = await make(a.key, '/user/assistant', assistantBody({ phone_number_id: number.id }));
    // What an older build left: the number row gone, the assistant's configuration still naming it.
    t.ctx.store.sqlite.pragma('foreign_keys = OFF');
    t.ctx.store.sqlite.prepare('DELETE FROM phone_numbers WHERE id = ?').run(number.id);
    t.ctx.store.sqlite.pragma('foreign_keys = ON');
    expect((await stillWhole(a.key, asst.id)).phone_number_id).toBeNull();
    const sent = await t.call(a.key, 'PUT', `/user/assistant/${asst.id}`, { phone_number_id: number.id });
    expect(sent.status).toBe(422);
    expect(sent.body.errors.phone_number_id).toBeDefined();
  });

  it('a voice removed from the catalog is replaced by one for the same mode and language; sending it is a 422', async () => {
    const a = await t.account();
    const asst = await make(a.key, '/user/assistant', assistantBody());
    const row = t.ctx.store.sqlite.prepare('SELECT config FROM assistants WHERE id = ?').get(asst.id) as { config: string };
    t.ctx.store.sqlite.prepare('UPDATE assistants SET config = ? WHERE id = ?').run(JSON.stringify({ ...JSON.parse(row.config), voice_id: 99_999 }), asst.id);
    const after = await stillWhole(a.key, asst.id);
    const voice = t.ctx.catalog.voice(after.voice_id, a.id);
    expect(voice).toBeDefined();
    expect(voice!.modes).toContain('pipeline');
    expect(voice!.language_id).toBe(1);
    expect(after.synthesizer_provider_id).toBe(voice!.synthesizer_provider_id ?? after.synthesizer_provider_id);
    const sent = await t.call(a.key, 'PUT', `/user/assistant/${asst.id}`, { voice_id: 99_999 });
    expect(sent.status).toBe(422);
    expect(sent.body.errors.voice_id).toBeDefined();
  });
});
