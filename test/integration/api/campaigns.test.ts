import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platform, trunkBody, type Platform } from './platform-helpers.ts';
import type { CampaignRunner } from '../../../src/campaigns/state.ts';

let t: Platform;
beforeEach(async () => { t = await platform(); });
afterEach(async () => { await t.close(); });

/** A campaign of account `who` with its outbound assistant and trunk number. */
async function campaign(who: 'a' | 'b' = 'a', over: Record<string, unknown> = {}) {
  const acct = t[who];
  const trunk = await t.req(acct.key, 'POST', '/user/sip-trunks', trunkBody({ sip_username: `user-${who}-${Math.random().toString(36).slice(2, 8)}` }));
  const assistantId = await t.assistant(acct.id, 'outbound');
  const res = await t.req(acct.key, 'POST', '/user/campaigns', {
    name: 'Spring promo',
    assistant_id: assistantId,
    phone_number_id: trunk.body.data.phone_number_id,
    ...over,
  });
  expect(res.status).toBe(201);
  return res.body.data as { id: number; assistant_id: number; phone_number_id: number };
}

const addLeads = (key: string, id: number, n: number, start = 0) =>
  t.req(key, 'POST', `/user/campaigns/${id}/leads`, {
    leads: Array.from({ length: n }, (_, i) => ({ phone_number: `+1415555${String(start + i).padStart(4, '0')}`, variables: { name: `L${i}` } })),
  });

const updateStatus = (key: string | undefined, body: unknown) => t.req(key, 'POST', '/user/campaigns/update-status', body);

describe('campaign CRUD', () => {
  it('creates a draft campaign with defaults and reads it back', async () => {
    const c = await campaign('a', { calling_hours: { start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5], timezone: 'Europe/Berlin' } });
    expect(c).toMatchObject({ status: 'draft', max_concurrent_calls: 1, calling_hours: { start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5] } });
    const got = await t.req(t.a.key, 'GET', `/user/campaigns/${c.id}`);
    expect(got.body).toMatchObject({ id: c.id, lead_counts: { total: 0, pending: 0 } });
    expect((await t.req(t.a.key, 'GET', '/user/campaigns')).body.map((x: { id: number }) => x.id)).toEqual([c.id]);
  });

  it('validates the body, the assistant and the phone number', async () => {
    const inbound = await t.assistant(t.a.id, 'inbound');
    const outbound = await t.assistant(t.a.id, 'outbound');
    const theirs = await t.assistant(t.b.id, 'outbound');
    const number = (await t.req(t.a.key, 'POST', '/user/phone-numbers', { phone_number: '+14155550123' })).body.data.id;
    const theirNumber = (await t.req(t.b.key, 'POST', '/user/phone-numbers', { phone_number: '+14155550124' })).body.data.id;
    const base = { name: 'C', assistant_id: outbound, phone_number_id: number };
    const cases: Array<[string, Record<string, unknown>]> = [
      ['name', { name: '' }],
      ['assistant_id', { assistant_id: inbound }],
      ['assistant_id', { assistant_id: theirs }],
      ['phone_number_id', { phone_number_id: theirNumber }],
      ['max_concurrent_calls', { max_concurrent_calls: 0 }],
      ['max_concurrent_calls', { max_concurrent_calls: 51 }],
      ['calling_hours.start', { calling_hours: { start: '9am', end: '17:00' } }],
      ['calling_hours.end', { calling_hours: { start: '09:00', end: '09:00' } }],
      ['calling_hours.days.0', { calling_hours: { start: '09:00', end: '17:00', days: [8] } }],
      ['calling_hours.timezone', { calling_hours: { start: '09:00', end: '17:00', timezone: 'Mars/Olympus' } }],
    ];
    for (const [field, over] of cases) {
      const res = await t.req(t.a.key, 'POST', '/user/campaigns', { ...base, ...over });
      expect(res.status, field).toBe(422);
      expect(res.body.errors[field], field).toBeDefined();
    }
    expect((await t.req(t.a.key, 'POST', '/user/campaigns', { ...base, max_concurrent_calls: 50 })).status).toBe(201);
  });

  it("answers 404 for another account's campaign on every id route", async () => {
    const c = await campaign('a');
    expect((await t.req(t.b.key, 'GET', `/user/campaigns/${c.id}`)).status).toBe(404);
    expect((await addLeads(t.b.key, c.id, 1)).status).toBe(404);
    expect((await t.req(t.b.key, 'GET', `/user/campaigns/${c.id}/leads`)).status).toBe(404);
    expect((await t.req(t.b.key, 'GET', '/user/campaigns')).body).toEqual([]);
  });
});

describe('leads', () => {
  it('adds leads, skips duplicates, lists them', async () => {
    const c = await campaign();
    const res = await addLeads(t.a.key, c.id, 3);
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({ campaign_id: c.id, added: 3, duplicates: 0 });
    const again = await addLeads(t.a.key, c.id, 4, 2); // 0002 repeats
    expect(again.body.data).toMatchObject({ added: 3, duplicates: 1 });
    const list = await t.req(t.a.key, 'GET', `/user/campaigns/${c.id}/leads?limit=2`);
    expect(list.body).toHaveLength(2);
    expect(list.body[0]).toMatchObject({ phone_number: '+14155550000', status: 'pending', attempts: 0, variables: { name: 'L0' } });
    expect((await t.req(t.a.key, 'GET', `/user/campaigns/${c.id}`)).body.lead_counts).toMatchObject({ total: 6, pending: 6 });
  });

  it('takes 10 000 leads in one request and refuses 10 001', async () => {
    const c = await campaign();
    const res = await addLeads(t.a.key, c.id, 10_000);
    expect(res.status).toBe(201);
    expect(res.body.data.added).toBe(10_000);
    const tooMany = await t.req(t.a.key, 'POST', `/user/campaigns/${c.id}/leads`, {
      leads: Array.from({ length: 10_001 }, () => ({ phone_number: '+14155550000' })),
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors.leads).toBeDefined();
  });

  it('names the invalid item', async () => {
    const c = await campaign();
    const res = await t.req(t.a.key, 'POST', `/user/campaigns/${c.id}/leads`, {
      leads: [{ phone_number: '+14155550001' }, { phone_number: '+14155550002' }, { phone_number: '+14155550003' }, { phone_number: '555-0100' }],
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['leads.3.phone_number']);
    expect((await t.req(t.a.key, 'POST', `/user/campaigns/${c.id}/leads`, { leads: [] })).status).toBe(422);
    expect((await t.req(t.a.key, 'GET', `/user/campaigns/${c.id}`)).body.lead_counts.total).toBe(0);
  });
});

describe('POST /user/campaigns/update-status', () => {
  it('starts, stops and resumes, calling the runner', async () => {
    const calls: string[] = [];
    const runner: CampaignRunner = { start: async (id) => { calls.push(`start ${id}`); }, stop: async (id) => { calls.push(`stop ${id}`); } };
    t.ctx.campaignRunner = runner;
    const c = await campaign();
    await addLeads(t.a.key, c.id, 2);
    const started = await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' });
    expect(started.status).toBe(200);
    expect(started.body).toEqual({ message: 'Campaign started', success: true, data: { campaign_id: c.id, status: 'in-progress' } });
    const stopped = await updateStatus(t.a.key, { campaign_id: c.id, action: 'stop' });
    expect(stopped.body).toEqual({ message: 'Campaign stopped', success: true, data: { campaign_id: c.id, status: 'stopped' } });
    const resumed = await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' });
    expect(resumed.body.data.status).toBe('in-progress');
    expect(calls).toEqual([`start ${c.id}`, `stop ${c.id}`, `start ${c.id}`]);
    expect((await t.req(t.a.key, 'GET', `/user/campaigns/${c.id}`)).body.status).toBe('in-progress');
  });

  it('a draft can be stopped without leads or balance', async () => {
    await t.ctx.repos.ledger.setBalance(t.a.id, 0);
    const c = await campaign();
    const res = await updateStatus(t.a.key, { campaign_id: c.id, action: 'stop' });
    expect(res.body).toMatchObject({ success: true, data: { status: 'stopped' } });
  });

  it('refuses invalid transitions with 409', async () => {
    const c = await campaign();
    await addLeads(t.a.key, c.id, 1);
    await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' });
    const again = await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: expect.stringMatching(/already in progress/), success: false, data: { campaign_id: c.id, status: 'in-progress' } });
    await updateStatus(t.a.key, { campaign_id: c.id, action: 'stop' });
    const stopTwice = await updateStatus(t.a.key, { campaign_id: c.id, action: 'stop' });
    expect(stopTwice.status).toBe(409);
    await t.ctx.store.db.updateTable('campaigns').set({ status: 'completed' }).where('id', '=', c.id).execute();
    expect((await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' })).status).toBe(409);
    expect((await addLeads(t.a.key, c.id, 1, 500)).status).toBe(409);
  });

  it('insufficient balance: 402, success false, data with status draft, nothing changes', async () => {
    await t.ctx.repos.ledger.setBalance(t.a.id, 50_000); // $0.05, less than one minute
    const c = await campaign();
    await addLeads(t.a.key, c.id, 1);
    const res = await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ message: expect.stringMatching(/balance/i), success: false, data: { campaign_id: c.id, status: 'draft' } });
    expect((await t.req(t.a.key, 'GET', `/user/campaigns/${c.id}`)).body.status).toBe('draft');
    await t.ctx.repos.ledger.setBalance(t.a.id, 100_000);
    expect((await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' })).status).toBe(200);
  });

  it('no leads to call: 422 with success false', async () => {
    const c = await campaign();
    const res = await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ message: expect.stringMatching(/leads/), success: false, data: { campaign_id: c.id, status: 'draft' } });
  });

  it('invalid action 422, not found 404, another user 403, bad body 422', async () => {
    const c = await campaign();
    const bad = await updateStatus(t.a.key, { campaign_id: c.id, action: 'pause' });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ message: expect.stringMatching(/action/), success: false });
    const missing = await updateStatus(t.a.key, { campaign_id: 999_999, action: 'start' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: expect.stringMatching(/not found/i), success: false });
    const denied = await updateStatus(t.b.key, { campaign_id: c.id, action: 'stop' });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: expect.stringMatching(/another user/), success: false });
    expect((await t.req(t.a.key, 'GET', `/user/campaigns/${c.id}`)).body.status).toBe('draft');
    const noId = await updateStatus(t.a.key, { action: 'start' });
    expect(noId.status).toBe(422);
    expect(noId.body.errors.campaign_id).toBeDefined();
    expect((await updateStatus(undefined, { campaign_id: c.id, action: 'start' })).status).toBe(401);
  });

  it('puts the state back when the runner refuses to start', async () => {
    t.ctx.campaignRunner = { start: async () => { throw new Error('dialer down'); }, stop: async () => {} };
    const c = await campaign();
    await addLeads(t.a.key, c.id, 1);
    const res = await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' });
    expect(res.status).toBe(500);
    expect(res.body.success).toBe(false);
    expect((await t.req(t.a.key, 'GET', `/user/campaigns/${c.id}`)).body.status).toBe('draft');
  });

  it('refuses to start when the assistant or number is gone', async () => {
    const c = await campaign();
    await addLeads(t.a.key, c.id, 1);
    await t.ctx.store.db.deleteFrom('assistants').where('id', '=', c.assistant_id).execute();
    const res = await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' });
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/assistant/);
  });

  it('deleting the trunk of a running campaign stops the campaign (docs/API.md, "Deleting things")', async () => {
    const c = await campaign();
    await addLeads(t.a.key, c.id, 1);
    await updateStatus(t.a.key, { campaign_id: c.id, action: 'start' });
    const trunkId = (await t.req(t.a.key, 'GET', '/user/phone-numbers')).body.find((p: { id: number }) => p.id === c.phone_number_id).sip_trunk_id;
    expect((await t.req(t.a.key, 'DELETE', `/user/sip-trunks/${trunkId}`)).status).toBe(200);
    expect((await t.req(t.a.key, 'GET', `/user/campaigns/${c.id}`)).body.status).toBe('stopped');
  });
});
