import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../support/app.ts';

let t: TestApp;
let a: { id: number; key: string };
let b: { id: number; key: string };
beforeEach(async () => {
  t = await testApp();
  a = await t.account(10);
  b = await t.account(10);
});
afterEach(() => t.close());

const body = (over: Record<string, unknown> = {}) => ({
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

async function create(key = a.key, over: Record<string, unknown> = {}): Promise<number> {
  const res = await t.call(key, 'POST', '/user/assistant', body(over));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id as number;
}

describe('create', () => {
  it('201 with {message, data:{id,name,status,type,mode}} and status inactive', async () => {
    const res = await t.call(a.key, 'POST', '/user/assistant', body());
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      message: expect.any(String),
      data: { id: expect.any(Number), name: 'Support line', status: 'inactive', type: 'outbound', mode: 'pipeline' },
      // An addition to the spec's body (docs/API.md): this app has no provider keys.
      warnings: expect.arrayContaining([expect.objectContaining({ field: 'llm_model_id', env: 'OPENAI_API_KEY' })]),
    });
  });
  it('multimodal assistant', async () => {
    const res = await t.call(a.key, 'POST', '/user/assistant', { ...body({ mode: 'multimodal', voice_id: 101, multimodal_model_id: 1 }), llm_model_id: undefined });
    expect(res.status).toBe(201);
    expect(res.body.data.mode).toBe('multimodal');
  });
  it('401 without a key', async () => {
    expect((await t.call(undefined, 'POST', '/user/assistant', body())).status).toBe(401);
  });
  it('422 {message, errors} naming a missing required field', async () => {
    const { name: _n, ...rest } = body();
    const res = await t.call(a.key, 'POST', '/user/assistant', rest);
    expect(res.status).toBe(422);
    expect(res.body.message).toEqual(expect.any(String));
    expect(res.body.errors.name).toEqual([expect.any(String)]);
  });
  it('422 naming fields of the wrong type', async () => {
    const res = await t.call(a.key, 'POST', '/user/assistant', body({ voice_id: 'alloy', record: 'yes' }));
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(expect.arrayContaining(['voice_id', 'record']));
  });
  it('422 on the spec’s examples: incompatible voice, knowledgebase_mode prompt for multimodal', async () => {
    const voice = await t.call(a.key, 'POST', '/user/assistant', body({ mode: 'multimodal', multimodal_model_id: 1 }));
    expect(voice.status).toBe(422);
    expect(voice.body.errors.voice_id).toBeDefined();
    const kb = await t.call(a.key, 'POST', '/user/assistant', body({ mode: 'multimodal', multimodal_model_id: 1, voice_id: 101, knowledgebase_mode: 'prompt' }));
    expect(kb.status).toBe(422);
    expect(kb.body.errors.knowledgebase_mode).toBeDefined();
  });
  it('422 for an unknown field, naming it', async () => {
    const res = await t.call(a.key, 'POST', '/user/assistant', body({ colour: 'blue' }));
    expect(res.status).toBe(422);
    expect(res.body.errors.colour).toBeDefined();
  });
  it('400 for malformed JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/user/assistant',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      payload: '{"name": "x",',
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body).message).toEqual(expect.any(String));
  });
  it('422 for a JSON array body', async () => {
    const res = await t.call(a.key, 'POST', '/user/assistant', [1, 2]);
    expect(res.status).toBe(422);
  });
  it('422 for a huge body', async () => {
    const res = await t.call(a.key, 'POST', '/user/assistant', body({ system_prompt: 'x'.repeat(2 * 1024 * 1024) }));
    expect(res.status).toBe(422);
    expect(res.body.errors).toBeDefined();
  });
  it('422 when a referenced folder belongs to another account', async () => {
    const folder = await t.ctx.store.db.insertInto('folders').values({ account_id: b.id, name: 'f', created_at: 0 }).returning('id').executeTakeFirstOrThrow();
    const res = await t.call(a.key, 'POST', '/user/assistant', body({ folder_id: folder.id }));
    expect(res.status).toBe(422);
    expect(res.body.errors.folder_id).toBeDefined();
  });
});

describe('read and list', () => {
  it('GET returns every field with defaults, identity and ISO timestamps', async () => {
    const id = await create();
    const res = await t.call(a.key, 'GET', `/user/assistant/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id, uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Support line', status: 'inactive', mode: 'pipeline',
      max_duration: 600, record: false, tools: [], webhook_url: null, synthesizer_provider_id: 1, transcriber_provider_id: 1,
      created_at: new Date(t.clock.now()).toISOString(), updated_at: expect.any(String),
    });
  });
  it('GET /user/assistants lists only the caller’s', async () => {
    const id = await create();
    await create(b.key);
    const res = await t.call(a.key, 'GET', '/user/assistants');
    expect(res.status).toBe(200);
    expect(res.body.assistants).toEqual([
      expect.objectContaining({ id, uuid: expect.any(String), name: 'Support line', type: 'outbound', mode: 'pipeline', status: 'inactive', created_at: expect.any(String) }),
    ]);
  });
  it('404 {message} for a missing id and another account’s', async () => {
    const id = await create();
    for (const [key, path] of [[a.key, '/user/assistant/9999'], [b.key, `/user/assistant/${id}`]] as const) {
      const res = await t.call(key, 'GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
  });
  it('tools read back as {type, data} and the calendar key is masked', async () => {
    const id = await create(a.key, {
      tools: [{ type: 'end_call', description: 'bye' }, { type: 'calendar_booking', calendar_api_key: 'cal_live_secret_9876', calendar_event_slug: 'demo' }],
    });
    const res = await t.call(a.key, 'GET', `/user/assistant/${id}`);
    expect(res.body.tools[0]).toEqual({ type: 'end_call', data: { description: 'bye' } });
    expect(res.body.tools[1].type).toBe('calendar_booking');
    expect(res.body.tools[1].data.calendar_api_key).toBe('********9876');
    expect(JSON.stringify(res.body)).not.toContain('cal_live_secret');
  });
});

describe('update', () => {
  it('merges a partial update and answers with the full record', async () => {
    const id = await create();
    t.clock.advance(1000);
    const res = await t.call(a.key, 'PUT', `/user/assistant/${id}`, { name: 'Renamed', max_duration: 1200 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: expect.any(String),
      data: expect.objectContaining({ id, name: 'Renamed', max_duration: 1200, system_prompt: 'You are a helpful agent.' }),
      warnings: expect.any(Array),
    });
    expect(res.body.data.updated_at).not.toBe(res.body.data.created_at);
    expect((await t.call(a.key, 'GET', `/user/assistant/${id}`)).body.name).toBe('Renamed');
  });
  it('422 when the merged result breaks a rule, and nothing changes', async () => {
    const id = await create();
    const res = await t.call(a.key, 'PUT', `/user/assistant/${id}`, { max_duration: 1201 });
    expect(res.status).toBe(422);
    expect(res.body.errors.max_duration).toBeDefined();
    expect((await t.call(a.key, 'GET', `/user/assistant/${id}`)).body.max_duration).toBe(600);
  });
  it('tools replace all built-in tools; [] removes them', async () => {
    const id = await create(a.key, { tools: [{ type: 'end_call' }, { type: 'dtmf_input' }] });
    let res = await t.call(a.key, 'PUT', `/user/assistant/${id}`, { tools: [{ type: 'collect_keypad', timeout: 10 }] });
    expect(res.body.data.tools).toEqual([{ type: 'collect_keypad', data: { timeout: 10, stop_key: '#', description: null } }]);
    res = await t.call(a.key, 'PUT', `/user/assistant/${id}`, { tools: [] });
    expect(res.body.data.tools).toEqual([]);
  });
  it('a GET record can be PUT back unchanged (read-only fields ignored, masked key kept)', async () => {
    const id = await create(a.key, { tools: [{ type: 'calendar_booking', calendar_api_key: 'cal_live_secret_9876', calendar_event_slug: 'demo' }] });
    const before = await t.ctx.repos.assistants.get(a.id, id);
    const got = (await t.call(a.key, 'GET', `/user/assistant/${id}`)).body;
    const res = await t.call(a.key, 'PUT', `/user/assistant/${id}`, got);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const after = await t.ctx.repos.assistants.get(a.id, id);
    const key = (x: typeof after) => (x!.config.tools[0]!.data as { calendar_api_key: string }).calendar_api_key;
    expect(t.ctx.secrets.open(key(after))).toBe('cal_live_secret_9876');
    expect(key(after)).toBe(key(before));
  });
  it('assistant_transfer to itself → 422', async () => {
    const id = await create();
    const res = await t.call(a.key, 'PUT', `/user/assistant/${id}`, { tools: [{ type: 'assistant_transfer', assistant_id: id }] });
    expect(res.status).toBe(422);
    expect(res.body.errors['tools.0.assistant_id']).toBeDefined();
  });
  it('404 for another account’s assistant (before any validation)', async () => {
    const id = await create();
    const res = await t.call(b.key, 'PUT', `/user/assistant/${id}`, { max_duration: 5 });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: expect.any(String) });
  });
  it('404 for a non-numeric id, like a missing one', async () => {
    expect((await t.call(a.key, 'PUT', '/user/assistant/abc', { name: 'x' })).status).toBe(404);
  });
});

describe('delete', () => {
  it('200 {message}, then 404; call history goes too', async () => {
    const id = await create();
    await t.ctx.store.db
      .insertInto('calls')
      .values({ uuid: 'c1', account_id: a.id, assistant_id: id, direction: 'outbound', from_number: '1', to_number: '2', status: 'completed', invite_at: 0, cost_micros: 0 })
      .execute();
    const res = await t.call(a.key, 'DELETE', `/user/assistant/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String) });
    expect(await t.ctx.store.db.selectFrom('calls').selectAll().where('assistant_id', '=', id).execute()).toEqual([]);
    const again = await t.call(a.key, 'DELETE', `/user/assistant/${id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: expect.any(String) });
  });
  it('another account cannot delete: 404 and the assistant stays', async () => {
    const id = await create();
    expect((await t.call(b.key, 'DELETE', `/user/assistant/${id}`)).status).toBe(404);
    expect((await t.call(a.key, 'GET', `/user/assistant/${id}`)).status).toBe(200);
  });
});

describe('disable-inbound-webhook', () => {
  const url = '/user/assistants/disable-inbound-webhook';
  it('200 {message, data: []} and the flag is off', async () => {
    const id = await create();
    const res = await t.call(a.key, 'POST', url, { assistant_id: id });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String), data: [] });
    expect((await t.ctx.repos.assistants.get(a.id, id))!.inboundWebhookEnabled).toBe(false);
  });
  it('422 {message, errors} when assistant_id is missing or not an integer', async () => {
    for (const payload of [{}, { assistant_id: 'x' }]) {
      const res = await t.call(a.key, 'POST', url, payload);
      expect(res.status).toBe(422);
      expect(res.body.errors.assistant_id).toBeDefined();
    }
  });
  it('404 {message} for a missing or another account’s assistant', async () => {
    const id = await create();
    for (const [key, assistant_id] of [[a.key, 9999], [b.key, id]] as const) {
      const res = await t.call(key, 'POST', url, { assistant_id });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
    expect((await t.ctx.repos.assistants.get(a.id, id))!.inboundWebhookEnabled).toBe(true);
  });
  it('PUT with is_webhook_active true turns it back on', async () => {
    const id = await create();
    await t.call(a.key, 'POST', url, { assistant_id: id });
    const res = await t.call(a.key, 'PUT', `/user/assistant/${id}`, { is_webhook_active: true, webhook_url: 'https://hooks.example.com/a' });
    expect(res.body.data.inbound_webhook_enabled).toBe(true);
  });
});

describe('inbound phone numbers', () => {
  it('a number rings one inbound assistant; caller-ID numbers are refused', async () => {
    const phone = await t.ctx.store.db.insertInto('phone_numbers').values({ account_id: a.id, phone_number: '+15550100', type: 'sip_trunk', sip_trunk_id: null, created_at: 0 }).returning('id').executeTakeFirstOrThrow();
    const cid = await t.ctx.store.db.insertInto('phone_numbers').values({ account_id: a.id, phone_number: '+15550101', type: 'caller_id', sip_trunk_id: null, created_at: 0 }).returning('id').executeTakeFirstOrThrow();
    const id = await create(a.key, { type: 'inbound', phone_number_id: phone.id });
    expect((await t.ctx.repos.assistants.findInboundByPhoneNumber(phone.id))?.id).toBe(id);
    const dup = await t.call(a.key, 'POST', '/user/assistant', body({ type: 'inbound', phone_number_id: phone.id }));
    expect(dup.status).toBe(422);
    expect(dup.body.errors.phone_number_id).toBeDefined();
    const callerId = await t.call(a.key, 'POST', '/user/assistant', body({ type: 'inbound', phone_number_id: cid.id }));
    expect(callerId.status).toBe(422);
    // Another account's number reads as invalid.
    const foreign = await t.call(b.key, 'POST', '/user/assistant', body({ type: 'inbound', phone_number_id: phone.id }));
    expect(foreign.status).toBe(422);
  });
});
