import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatWorld, balanceMicros, type ChatWorld } from './helpers.ts';

let w: ChatWorld;
let a: { id: number; key: string };
beforeEach(async () => {
  w = await chatWorld();
  a = await w.t.account(1);
});
afterEach(() => w.close());

const gen = (key: string | undefined, body: Record<string, unknown>) => w.req(key, 'POST', '/user/ai/generate-reply', body);

describe('POST /user/ai/generate-reply', () => {
  it('keeps one conversation per customer, merges variables, keeps context, charges 0.01 per reply', async () => {
    const asst = await w.assistant(a.key);
    w.llm.enqueue({ content: 'Order 42 ships today.' }, { content: 'You are welcome, Ana.' });
    const first = await gen(a.key, { assistant_id: asst.id, customer_identifier: 'crm:7', message: 'Where is my order?', variables: { order_id: '42', company: 'Acme' } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      customer_identifier: 'crm:7',
      reply: 'Order 42 ships today.',
      function_calls: [],
      ai_disabled: false,
    });
    const before = await balanceMicros(w.t, a.id);
    const second = await gen(a.key, { assistant_id: asst.id, customer_identifier: 'crm:7', message: 'Thanks!', variables: { customer_name: 'Ana' } });
    expect(second.body.conversation_id).toBe(first.body.conversation_id);
    expect(before - await balanceMicros(w.t, a.id)).toBe(10_000);
    const req = w.llm.requests.at(-1)!;
    expect(req.messages.map((m) => m.content).slice(1)).toEqual(['Where is my order?', 'Order 42 ships today.', 'Thanks!']);
    expect(req.messages[0]!.content).toContain('You help customers of Acme.');
    const view = await w.req(a.key, 'GET', `/conversations/${first.body.conversation_id}`);
    expect(view.body.variables).toEqual({ order_id: '42', company: 'Acme', customer_name: 'Ana' });
    expect(view.body.external_identifier).toBe('crm:7');
    const other = await gen(a.key, { assistant_id: asst.id, customer_identifier: 'crm:8', message: 'Hi' });
    expect(other.body.conversation_id).not.toBe(first.body.conversation_id);
  });

  it('while AI is disabled: no model call, no charge, reply is the empty string', async () => {
    const asst = await w.assistant(a.key);
    const first = await gen(a.key, { assistant_id: asst.id, customer_identifier: 'c', message: 'hi' });
    await w.req(a.key, 'POST', `/automate/conversations/${first.body.conversation_id}/disable-ai`);
    const calls = w.llm.requests.length;
    const before = await balanceMicros(w.t, a.id);
    const res = await gen(a.key, { assistant_id: asst.id, customer_identifier: 'c', message: 'a human?' });
    expect(res.body).toEqual({ success: true, conversation_id: first.body.conversation_id, customer_identifier: 'c', reply: '', function_calls: [], ai_disabled: true });
    expect(w.llm.requests.length).toBe(calls);
    expect(await balanceMicros(w.t, a.id)).toBe(before);
  });

  it('402 INSUFFICIENT_BALANCE, 404 ASSISTANT_NOT_FOUND, 422 {message, errors}, 401', async () => {
    const poor = await w.t.account(0);
    const poorAsst = await w.assistant(poor.key);
    const asst = await w.assistant(a.key);
    const calls = w.llm.requests.length;
    const broke = await gen(poor.key, { assistant_id: poorAsst.id, customer_identifier: 'c', message: 'hi' });
    expect(broke.status).toBe(402);
    expect(broke.body).toEqual({ success: false, error: expect.stringMatching(/top up/i), error_code: 'INSUFFICIENT_BALANCE' });
    expect(w.llm.requests.length).toBe(calls);
    const missing = await gen(a.key, { assistant_id: 999_999, customer_identifier: 'c', message: 'hi' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: expect.any(String), error_code: 'ASSISTANT_NOT_FOUND' });
    expect((await gen(poor.key, { assistant_id: asst.id, customer_identifier: 'c', message: 'hi' })).body.error_code).toBe('ASSISTANT_NOT_FOUND');
    const invalid = await gen(a.key, { assistant_id: asst.id, customer_identifier: 'x'.repeat(256) });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toEqual({
      message: expect.any(String),
      errors: { customer_identifier: [expect.stringMatching(/255/)], message: ['The message field is required.'] },
    });
    expect((await gen(undefined, { assistant_id: asst.id, customer_identifier: 'c', message: 'hi' })).status).toBe(401);
  });

  it('429 {message, retry_after} past the rate limit', async () => {
    const asst = await w.assistant(a.key);
    let last = { status: 0, body: {} as Record<string, unknown> };
    for (let i = 0; i < 21; i++) last = await w.t.call(a.key, 'POST', '/user/ai/generate-reply', { assistant_id: asst.id, customer_identifier: 'c', message: `m${i}` });
    expect(last.status).toBe(429);
    expect(last.body).toEqual({ message: expect.any(String), retry_after: expect.any(Number) });
  });

  it('provider failure: PROVIDER_FAILED, nothing charged', async () => {
    const asst = await w.assistant(a.key);
    w.llm.enqueue({ status: 500 }, { status: 500 });
    const before = await balanceMicros(w.t, a.id);
    const res = await gen(a.key, { assistant_id: asst.id, customer_identifier: 'c', message: 'hi' });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ success: false, error_code: 'PROVIDER_FAILED' });
    expect(await balanceMicros(w.t, a.id)).toBe(before);
  });

  it('falls back to chat_llm_fallback_id when the primary model fails', async () => {
    const asst = await w.assistant(a.key, { chat_llm_fallback_id: 2 });
    w.llm.responder = (r) => (r.model === 'gpt-4o-mini' ? { status: 503 } : { content: `answered by ${r.model}` });
    const res = await gen(a.key, { assistant_id: asst.id, customer_identifier: 'c', message: 'hi' });
    expect(res.body.reply).toBe('answered by gpt-4o');
    expect(w.llm.requests.map((r) => r.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o']);
  });
});
