import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatWorld, balanceMicros, type ChatWorld } from './helpers.ts';

let w: ChatWorld;
let a: { id: number; key: string };
let b: { id: number; key: string };
beforeEach(async () => {
  w = await chatWorld();
  a = await w.t.account(1);
  b = await w.t.account(1);
});
afterEach(() => w.close());

async function start(key: string | undefined, body: Record<string, unknown>) {
  return w.req(key, 'POST', '/conversations', body);
}

describe('POST /conversations', () => {
  it('starts a widget conversation with the filled initial message, without a key', async () => {
    const asst = await w.assistant(a.key);
    const res = await start(undefined, { assistant_id: asst.uuid, variables: { customer_name: 'Ana' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: true,
      conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      history: [{ role: 'assistant', content: 'Hi Ana, how can I help?' }],
    });
  });

  it('has an empty history when the assistant has no initial message', async () => {
    const asst = await w.assistant(a.key, { initial_message: '' });
    const res = await start(a.key, { assistant_id: asst.uuid, type: 'test' });
    expect(res.status).toBe(200);
    expect(res.body.history).toEqual([]);
  });

  it('404 for an unknown assistant or another account’s assistant; 401 for a bad key; 422 without assistant_id', async () => {
    const asst = await w.assistant(a.key);
    expect(await start(a.key, { assistant_id: '0b5e7c1e-1111-4222-8333-944455556666' })).toMatchObject({
      status: 404,
      body: { status: false, error: expect.any(String) },
    });
    expect((await start(b.key, { assistant_id: asst.uuid })).status).toBe(404);
    expect((await start('sb_live_nope', { assistant_id: asst.uuid })).status).toBe(401);
    const missing = await start(a.key, {});
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ status: false, error: 'The assistant id field is required.' });
    expect((await start(a.key, { assistant_id: asst.uuid, type: 'sms' })).status).toBe(422);
  });

  it('400 with a top-up message for a widget at zero balance; test conversations are free', async () => {
    const poor = await w.t.account(0);
    const asst = await w.assistant(poor.key);
    const res = await start(poor.key, { assistant_id: asst.uuid });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: false, error: expect.stringMatching(/top up/i) });
    expect((await start(poor.key, { assistant_id: asst.uuid, type: 'test' })).status).toBe(200);
  });
});

describe('GET /conversations/:uuid and messages', () => {
  it('chats: the reply, the history with variables, the charge of 0.01', async () => {
    const asst = await w.assistant(a.key);
    const conv = (await start(undefined, { assistant_id: asst.uuid, variables: { company: 'Acme' } })).body.conversation_id as string;
    w.llm.enqueue({ content: 'We open at nine.' });
    const before = await balanceMicros(w.t, a.id);
    const res = await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'When do you open?' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: true, message: 'We open at nine.', function_calls: [] });
    expect(before - await balanceMicros(w.t, a.id)).toBe(10_000);
    const sent = w.llm.requests.at(-1)!;
    expect(sent.stream).toBe(true);
    expect(sent.model).toBe('gpt-4o-mini');
    expect(sent.temperature).toBe(0.1);
    expect(sent.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You help customers of Acme.') });
    expect(sent.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Hi {{customer_name}}, how can I help?' },
      { role: 'user', content: 'When do you open?' },
    ]);
    const view = await w.req(a.key, 'GET', `/conversations/${conv}`);
    expect(view.status).toBe(200);
    expect(view.body).toEqual({
      status: true,
      variables: { company: 'Acme' },
      history: [
        { role: 'assistant', content: 'Hi {{customer_name}}, how can I help?' },
        { role: 'user', content: 'When do you open?' },
        { role: 'assistant', content: 'We open at nine.' },
      ],
    });
    const ledger = await w.t.ctx.store.db.selectFrom('ledger').selectAll().where('account_id', '=', a.id).where('amount_micros', '<', 0).execute();
    expect(ledger).toEqual([expect.objectContaining({ amount_micros: -10_000, reason: 'widget message', reference: `conversation:${conv}` })]);
  });

  it('test conversations are not charged', async () => {
    const asst = await w.assistant(a.key);
    const conv = (await start(a.key, { assistant_id: asst.uuid, type: 'test' })).body.conversation_id as string;
    const before = await balanceMicros(w.t, a.id);
    expect((await w.req(a.key, 'POST', `/conversations/${conv}/messages`, { message: 'hi' })).status).toBe(200);
    expect(await balanceMicros(w.t, a.id)).toBe(before);
  });

  it('422 for a missing, empty or too long message; 404 for unknown or foreign conversations', async () => {
    const asst = await w.assistant(a.key);
    const conv = (await start(a.key, { assistant_id: asst.uuid })).body.conversation_id as string;
    const missing = await w.req(undefined, 'POST', `/conversations/${conv}/messages`, {});
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ status: false, error: 'The message field is required.' });
    expect((await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: '  ' })).body.error).toBe('The message field is required.');
    const long = await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'x'.repeat(2001) });
    expect(long.status).toBe(422);
    expect((await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'x'.repeat(2000) })).status).toBe(200);
    const unknown = await w.req(undefined, 'POST', '/conversations/nope/messages', { message: 'hi' });
    expect(unknown).toMatchObject({ status: 404, body: { status: false, error: expect.any(String) } });
    expect((await w.req(b.key, 'POST', `/conversations/${conv}/messages`, { message: 'hi' })).status).toBe(404);
    expect((await w.req(b.key, 'GET', `/conversations/${conv}`)).status).toBe(404);
    expect((await w.req(undefined, 'GET', '/conversations/nope')).body).toEqual({ status: false, error: expect.any(String) });
    expect((await w.req('bad', 'GET', `/conversations/${conv}`)).status).toBe(401);
  });

  it('400 top-up when the balance ran out; nothing is stored', async () => {
    const acct = await w.t.account(0.01);
    const asst = await w.assistant(acct.key);
    const conv = (await start(acct.key, { assistant_id: asst.uuid })).body.conversation_id as string;
    expect((await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'one' })).status).toBe(200);
    const res = await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'two' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: false, error: expect.stringMatching(/top up/i) });
    expect((await w.req(undefined, 'GET', `/conversations/${conv}`)).body.history).toHaveLength(3);
  });

  it('provider failing mid-stream: 400 failed-to-process, no charge, nothing stored', async () => {
    const asst = await w.assistant(a.key);
    const conv = (await start(a.key, { assistant_id: asst.uuid })).body.conversation_id as string;
    // Both the attempt and its one retry break after tokens were streamed / before finishing.
    w.llm.enqueue({ content: 'Partial answer that never ends', failAfterChunks: 3 }, { content: 'again', failAfterChunks: 2 });
    const before = await balanceMicros(w.t, a.id);
    const res = await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'hello?' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: false, error: expect.stringMatching(/^Failed to process message: /) });
    expect(await balanceMicros(w.t, a.id)).toBe(before);
    expect((await w.req(undefined, 'GET', `/conversations/${conv}`)).body.history).toHaveLength(1);
  });

  it('concurrent widget messages at a balance of a few cents never go negative', async () => {
    const acct = await w.t.account(0.03);
    const asst = await w.assistant(acct.key);
    const conv = (await start(acct.key, { assistant_id: asst.uuid })).body.conversation_id as string;
    w.llm.defaultResponse = { content: 'ok', delayMs: 20 };
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => w.t.call(undefined, 'POST', `/conversations/${conv}/messages`, { message: `m${i}` })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(3);
    expect(results.filter((r) => r.status === 400).every((r) => /top up/i.test(r.body.error))).toBe(true);
    expect(await balanceMicros(w.t, acct.id)).toBe(0);
  });
});

describe('AI hand-over', () => {
  it('disable-ai stops replies (no model call, no charge), enable-ai resumes them', async () => {
    const asst = await w.assistant(a.key);
    const conv = (await start(a.key, { assistant_id: asst.uuid })).body.conversation_id as string;
    expect(await w.req(a.key, 'POST', `/automate/conversations/${conv}/disable-ai`)).toMatchObject({
      status: 200,
      body: { status: true, ai_enabled: false },
    });
    const calls = w.llm.requests.length;
    const before = await balanceMicros(w.t, a.id);
    const res = await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'a human please' });
    expect(res.body).toEqual({ status: true, message: '', function_calls: [] });
    expect(w.llm.requests.length).toBe(calls);
    expect(await balanceMicros(w.t, a.id)).toBe(before);
    expect(await w.req(a.key, 'POST', `/automate/conversations/${conv}/enable-ai`)).toMatchObject({
      status: 200,
      body: { status: true, ai_enabled: true },
    });
    expect((await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'back' })).body.message).toBe('Hello from the stand-in.');
  });

  it('404 {status:false, error} for unknown or foreign conversations; 401 without a key', async () => {
    const asst = await w.assistant(a.key);
    const conv = (await start(a.key, { assistant_id: asst.uuid })).body.conversation_id as string;
    expect(await w.req(b.key, 'POST', `/automate/conversations/${conv}/disable-ai`)).toMatchObject({
      status: 404,
      body: { status: false, error: expect.any(String) },
    });
    expect((await w.req(a.key, 'POST', '/automate/conversations/nope/enable-ai')).status).toBe(404);
    expect((await w.req(undefined, 'POST', `/automate/conversations/${conv}/enable-ai`)).status).toBe(401);
  });
});

describe('keyless limits and the API document', () => {
  it('limits keyless chatbot requests per client address with {status:false, …, retry_after}', async () => {
    const asst = await w.assistant(a.key);
    const conv = (await start(a.key, { assistant_id: asst.uuid, type: 'test' })).body.conversation_id as string;
    let last = { status: 0, body: {} as Record<string, unknown> };
    for (let i = 0; i < 21; i++) last = await w.t.call(undefined, 'GET', `/conversations/${conv}`);
    expect(last.status).toBe(429);
    expect(last.body).toMatchObject({ status: false, message: expect.any(String), retry_after: expect.any(Number) });
  });

  it('every chat route is in /api/openapi.json', async () => {
    const doc = (await w.t.call(undefined, 'GET', '/api/openapi.json')).body;
    const paths = Object.keys(doc.paths);
    for (const p of ['/conversations', '/conversations/{uuid}', '/conversations/{uuid}/messages', '/automate/conversations/{uuid}/disable-ai', '/user/ai/generate-reply', '/user/whatsapp/send-freeform', '/user/whatsapp/session-status', '/webhooks/whatsapp/{sender_id}']) {
      expect(paths).toContain(p);
    }
  });
});

describe('remaining status codes of the chatbot and hand-over endpoints', () => {
  it('422 for malformed path or body values; 401 for a bad key on every chatbot route', async () => {
    const asst = await w.assistant(a.key);
    const conv = (await start(a.key, { assistant_id: asst.uuid, type: 'test' })).body.conversation_id as string;
    const long = 'x'.repeat(65);
    for (const [method, url] of [
      ['GET', `/conversations/${long}`],
      ['POST', `/automate/conversations/${long}/disable-ai`],
      ['POST', `/automate/conversations/${long}/enable-ai`],
    ] as const) {
      const res = await w.req(a.key, method, url);
      expect(res.status, url).toBe(422);
      expect(res.body, url).toMatchObject({ status: false, error: expect.any(String) });
    }
    expect((await start(a.key, { assistant_id: 'not-a-uuid' })).status).toBe(422);
    expect((await start(a.key, { assistant_id: asst.uuid, variables: 'x' })).status).toBe(422);
    expect((await w.req(a.key, 'POST', `/conversations/${conv}/messages`, { message: 42 })).status).toBe(422);
    expect((await w.req(a.key, 'GET', `/conversations/${conv}`)).body).toEqual({ status: true, history: expect.any(Array), variables: null });
    const bad = await w.req('sb_live_nope', 'POST', `/conversations/${conv}/messages`, { message: 'hi' });
    expect(bad.status).toBe(401);
    expect((await w.req('sb_live_nope', 'POST', `/automate/conversations/${conv}/disable-ai`)).status).toBe(401);
  });

  it('the hand-over flag is stored on the conversation and outlives the request', async () => {
    const asst = await w.assistant(a.key);
    const conv = (await start(a.key, { assistant_id: asst.uuid })).body.conversation_id as string;
    await w.req(a.key, 'POST', `/automate/conversations/${conv}/disable-ai`);
    const row = await w.t.ctx.store.db.selectFrom('conversations').select('ai_enabled').where('uuid', '=', conv).executeTakeFirstOrThrow();
    expect(row.ai_enabled).toBe(0);
    // Idempotent: disabling twice is still 200 and still disabled.
    expect((await w.req(a.key, 'POST', `/automate/conversations/${conv}/disable-ai`)).body).toEqual({ status: true, ai_enabled: false });
    const calls = w.llm.requests.length;
    for (const m of ['one', 'two']) {
      expect((await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: m })).body).toEqual({ status: true, message: '', function_calls: [] });
    }
    expect(w.llm.requests.length).toBe(calls);
    const history = (await w.req(a.key, 'GET', `/conversations/${conv}`)).body.history as { role: string; content: string }[];
    expect(history.slice(-2)).toEqual([{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }]);
    await w.req(a.key, 'POST', `/automate/conversations/${conv}/enable-ai`);
    w.llm.enqueue({ content: 'I am back.' });
    expect((await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'three' })).body.message).toBe('I am back.');
    // The model sees what the customer wrote while a human had the conversation.
    expect(w.llm.requests.at(-1)!.messages.slice(-3).map((m) => m.content)).toEqual(['one', 'two', 'three']);
  });
});
