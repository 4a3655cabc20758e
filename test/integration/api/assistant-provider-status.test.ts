/**
 * Assistants whose providers lack a key still save, with `warnings` naming what is missing, and
 * read `inactive`; `status` follows what binds the assistant (a number, a running campaign, an
 * online WhatsApp sender) and the keys this process has. All over real HTTP on loopback.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { httpApp, type HttpApp } from '../../support/http-app.ts';
import { trunkBody } from './platform-helpers.ts';

const OPENAI_KEY = 'sk-test-openai-0123456789abcdef';
const DEEPGRAM_KEY = 'dg-test-key-0123456789abcdef';

let t: HttpApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const pipeline = (over: Record<string, unknown> = {}) => ({
  name: 'Support line',
  voice_id: 121,
  language_id: 1,
  type: 'inbound',
  mode: 'pipeline',
  timezone: 'Europe/Paris',
  initial_message: 'Hello, how can I help?',
  system_prompt: 'You are a helpful agent.',
  llm_model_id: 1,
  ...over,
});

const OPENAI_MISSING = 'OpenAI: no API key configured (OPENAI_API_KEY)';
const DEEPGRAM_MISSING = 'Deepgram: no API key configured (DEEPGRAM_API_KEY)';

describe('provider warnings on create and update', () => {
  it('no key at all: 201, every missing provider named by field, env var and message', async () => {
    t = await httpApp();
    const a = await t.account(10);
    const res = await t.http(a.key, 'POST', '/user/assistant', pipeline());
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.status).toBe('inactive');
    expect(res.body.warnings).toEqual([
      { field: 'llm_model_id', provider: 'openai', env: 'OPENAI_API_KEY', message: OPENAI_MISSING },
      { field: 'transcriber_provider_id', provider: 'deepgram', env: 'DEEPGRAM_API_KEY', message: DEEPGRAM_MISSING },
      { field: 'synthesizer_provider_id', provider: 'openai', env: 'OPENAI_API_KEY', message: OPENAI_MISSING },
    ]);
  });

  it('OpenAI key only: the Deepgram transcriber is the one warning; switching to OpenAI transcription clears it; no key in any answer', async () => {
    t = await httpApp({ OPENAI_API_KEY: OPENAI_KEY });
    const a = await t.account(10);
    const created = await t.http(a.key, 'POST', '/user/assistant', pipeline());
    expect(created.status).toBe(201);
    expect(created.body.warnings).toEqual([{ field: 'transcriber_provider_id', provider: 'deepgram', env: 'DEEPGRAM_API_KEY', message: DEEPGRAM_MISSING }]);
    const id = created.body.data.id as number;
    const updated = await t.http(a.key, 'PUT', `/user/assistant/${id}`, { transcriber_provider_id: 2 });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.warnings).toEqual([]);
    expect(updated.body.data.transcriber_provider_id).toBe(2);
    for (const text of [created.text, updated.text, (await t.http(a.key, 'GET', `/user/assistant/${id}`)).text]) expect(text).not.toContain(OPENAI_KEY);
  });

  it('every key set: warnings is an empty array (always present)', async () => {
    t = await httpApp({ OPENAI_API_KEY: OPENAI_KEY, DEEPGRAM_API_KEY: DEEPGRAM_KEY });
    const a = await t.account(10);
    const res = await t.http(a.key, 'POST', '/user/assistant', pipeline());
    expect(res.status).toBe(201);
    expect(res.body.warnings).toEqual([]);
  });

  it('multimodal: the realtime model is what is missing (no transcriber, no synthesizer of ours)', async () => {
    t = await httpApp({ DEEPGRAM_API_KEY: DEEPGRAM_KEY });
    const a = await t.account(10);
    const res = await t.http(a.key, 'POST', '/user/assistant', { ...pipeline({ mode: 'multimodal', voice_id: 101, multimodal_model_id: 1 }), llm_model_id: undefined });
    expect(res.status, res.text).toBe(201);
    expect(res.body.warnings).toEqual([{ field: 'multimodal_model_id', provider: 'openai', env: 'OPENAI_API_KEY', message: OPENAI_MISSING }]);
  });

  it('an offline Flite voice needs no key: no synthesizer warning', async () => {
    t = await httpApp({ DEEPGRAM_API_KEY: DEEPGRAM_KEY });
    const a = await t.account(10);
    const res = await t.http(a.key, 'POST', '/user/assistant', pipeline({ voice_id: 151 }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.warnings.map((w: { field: string }) => w.field)).toEqual(['llm_model_id']);
  });
});

describe('assistant status', () => {
  async function statusOf(app: HttpApp, key: string, id: number): Promise<{ one: string; listed: string }> {
    const one = await app.http(key, 'GET', `/user/assistant/${id}`);
    const list = await app.http(key, 'GET', '/user/assistants');
    return { one: one.body.status, listed: list.body.assistants.find((x: { id: number }) => x.id === id).status };
  }
  const both = (s: string) => ({ one: s, listed: s });

  it('inbound: inactive when new, active once bound to a number, inactive when unbound or the number is deleted', async () => {
    t = await httpApp({ OPENAI_API_KEY: OPENAI_KEY, DEEPGRAM_API_KEY: DEEPGRAM_KEY });
    const a = await t.account(10);
    const trunk = await t.http(a.key, 'POST', '/user/sip-trunks', trunkBody());
    expect(trunk.status, trunk.text).toBe(201);
    const numberId = trunk.body.data.phone_number_id as number;

    const created = await t.http(a.key, 'POST', '/user/assistant', pipeline());
    const id = created.body.data.id as number;
    expect(created.body.data.status).toBe('inactive');
    expect(await statusOf(t, a.key, id)).toEqual(both('inactive'));

    const bound = await t.http(a.key, 'PUT', `/user/assistant/${id}`, { phone_number_id: numberId });
    expect(bound.status, bound.text).toBe(200);
    expect(bound.body.data.status).toBe('active');
    expect(await statusOf(t, a.key, id)).toEqual(both('active'));

    // A client cannot set it: sent back on PUT it is ignored like the other read-only fields.
    const forced = await t.http(a.key, 'PUT', `/user/assistant/${id}`, { phone_number_id: null, status: 'active' });
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body.data.status).toBe('inactive');
    expect(await statusOf(t, a.key, id)).toEqual(both('inactive'));

    await t.http(a.key, 'PUT', `/user/assistant/${id}`, { phone_number_id: numberId });
    expect(await statusOf(t, a.key, id)).toEqual(both('active'));
    expect((await t.http(a.key, 'DELETE', `/user/sip-trunks/${trunk.body.data.id}`)).status).toBe(200);
    expect(await statusOf(t, a.key, id)).toEqual(both('inactive'));
  });

  it('bound to a number but a provider has no key: inactive', async () => {
    t = await httpApp({ OPENAI_API_KEY: OPENAI_KEY });
    const a = await t.account(10);
    const trunk = await t.http(a.key, 'POST', '/user/sip-trunks', trunkBody());
    const created = await t.http(a.key, 'POST', '/user/assistant', pipeline({ phone_number_id: trunk.body.data.phone_number_id }));
    expect(created.status, created.text).toBe(201);
    const id = created.body.data.id as number;
    expect(created.body.warnings.map((w: { env: string }) => w.env)).toEqual(['DEEPGRAM_API_KEY']);
    expect(await statusOf(t, a.key, id)).toEqual(both('inactive'));
    // The same assistant on a number where every key is set is active (the test above).
  });

  it('outbound: active while a campaign using it is in progress, inactive once it is stopped', async () => {
    t = await httpApp({ OPENAI_API_KEY: OPENAI_KEY, DEEPGRAM_API_KEY: DEEPGRAM_KEY });
    const a = await t.account(10);
    const trunk = await t.http(a.key, 'POST', '/user/sip-trunks', trunkBody());
    const id = (await t.http(a.key, 'POST', '/user/assistant', pipeline({ type: 'outbound' }))).body.data.id as number;
    const campaign = await t.http(a.key, 'POST', '/user/campaigns', { name: 'Promo', assistant_id: id, phone_number_id: trunk.body.data.phone_number_id });
    expect(campaign.status, campaign.text).toBe(201);
    const cid = campaign.body.data.id as number;
    expect((await t.http(a.key, 'POST', `/user/campaigns/${cid}/leads`, { leads: [{ phone_number: '+14155550123' }] })).status).toBe(201);
    expect(await statusOf(t, a.key, id)).toEqual(both('inactive'));

    const started = await t.http(a.key, 'POST', '/user/campaigns/update-status', { campaign_id: cid, action: 'start' });
    expect(started.body, started.text).toMatchObject({ success: true, data: { status: 'in-progress' } });
    expect(await statusOf(t, a.key, id)).toEqual(both('active'));

    const stopped = await t.http(a.key, 'POST', '/user/campaigns/update-status', { campaign_id: cid, action: 'stop' });
    expect(stopped.body).toMatchObject({ success: true, data: { status: 'stopped' } });
    expect(await statusOf(t, a.key, id)).toEqual(both('inactive'));
  });

  it('chat: active while an online WhatsApp sender answers with it; offline or moved away: inactive', async () => {
    t = await httpApp({ OPENAI_API_KEY: OPENAI_KEY, DEEPGRAM_API_KEY: DEEPGRAM_KEY });
    const a = await t.account(10);
    const id = (await t.http(a.key, 'POST', '/user/assistant', pipeline())).body.data.id as number;
    const sender = await t.http(a.key, 'POST', '/user/whatsapp/senders', { name: 'Shop', phone: '+14155550100', assistant_id: id, account_sid: 'AC1', auth_token: 'tok-1' });
    expect(sender.status, sender.text).toBe(201);
    const sid = sender.body.data.id as number;
    expect(await statusOf(t, a.key, id)).toEqual(both('active'));
    await t.http(a.key, 'PUT', `/user/whatsapp/senders/${sid}`, { status: 'offline' });
    expect(await statusOf(t, a.key, id)).toEqual(both('inactive'));
    await t.http(a.key, 'PUT', `/user/whatsapp/senders/${sid}`, { status: 'online' });
    expect(await statusOf(t, a.key, id)).toEqual(both('active'));
    await t.http(a.key, 'PUT', `/user/whatsapp/senders/${sid}`, { assistant_id: null });
    expect(await statusOf(t, a.key, id)).toEqual(both('inactive'));
  });
});
