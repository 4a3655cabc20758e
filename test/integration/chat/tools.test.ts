import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatWorld, type ChatWorld } from './helpers.ts';
import { CalcomStandIn } from '../../support/calcom-stand-in.ts';

let w: ChatWorld;
let a: { id: number; key: string };
beforeEach(async () => {
  w = await chatWorld();
  a = await w.t.account(1);
});
afterEach(() => w.close());

async function tool(over: Record<string, unknown> = {}): Promise<number> {
  const res = await w.req(a.key, 'POST', '/user/tools', {
    name: 'lookup_order',
    description: 'Look up an order by id',
    parameters: { type: 'object', properties: { order_id: { type: 'string', minLength: 1 } }, required: ['order_id'] },
    endpoint: `${w.sink.url}/orders`,
    method: 'POST',
    headers: { 'x-api-key': 'tool-secret' },
    ...over,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data?.id ?? res.body.id;
}

async function converse(assistantUuid: string, message: string) {
  const conv = (await w.req(a.key, 'POST', '/conversations', { assistant_id: assistantUuid, type: 'test' })).body.conversation_id as string;
  return { conv, res: await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message }) };
}

describe('custom tools', () => {
  it('calls the endpoint with the model’s arguments and feeds the result back', async () => {
    const id = await tool();
    const asst = await w.assistant(a.key, { tool_ids: [id] });
    w.sink.responder = (d) => (d.path === '/orders' ? { status: 200, body: { status: 'shipped', eta: 'tomorrow' } } : undefined);
    w.llm.enqueue({ toolCalls: [{ name: 'lookup_order', arguments: { order_id: '42' } }] }, { content: 'Your order ships tomorrow.' });
    const { res } = await converse(asst.uuid, 'Where is order 42?');
    expect(res.body).toEqual({
      status: true,
      message: 'Your order ships tomorrow.',
      function_calls: [{ name: 'lookup_order', arguments: { order_id: '42' }, result: { status: 'shipped', eta: 'tomorrow' } }],
    });
    const hit = w.sink.received.find((d) => d.path === '/orders')!;
    expect(JSON.parse(hit.body)).toEqual({ order_id: '42' });
    expect(hit.headers['x-api-key']).toBe('tool-secret');
    const [first, second] = w.llm.requests.slice(-2);
    expect(first!.tools?.map((t) => t.function.name)).toEqual(['lookup_order']);
    expect(second!.messages.at(-1)).toMatchObject({ role: 'tool', content: JSON.stringify({ status: 'shipped', eta: 'tomorrow' }) });
    expect(second!.messages.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [expect.objectContaining({ function: { name: 'lookup_order', arguments: '{"order_id":"42"}' } })] });
  });

  it('sends the real header values, sealed at rest and masked on read, after a PUT that echoed the masked ones', async () => {
    const secret = 'tool-secret-7e6d5c4b';
    const id = await tool({ headers: { 'x-api-key': secret, Authorization: `Bearer ${secret}` } });
    const read = (await w.req(a.key, 'GET', `/user/tools/${id}`)).body;
    expect(read.headers).toEqual({ 'x-api-key': '********5c4b', Authorization: '********5c4b' });
    expect((await w.req(a.key, 'PUT', `/user/tools/${id}`, { headers: read.headers, description: 'Look up an order' })).status).toBe(200);
    expect(JSON.stringify(w.t.ctx.store.sqlite.prepare('SELECT headers FROM tools').all())).not.toContain(secret);
    const asst = await w.assistant(a.key, { tool_ids: [id] });
    w.sink.responder = (d) => (d.path === '/orders' ? { status: 200, body: { status: 'shipped' } } : undefined);
    w.llm.enqueue({ toolCalls: [{ name: 'lookup_order', arguments: { order_id: '42' } }] }, { content: 'Shipped.' });
    expect((await converse(asst.uuid, 'Where is order 42?')).res.status).toBe(200);
    const hit = w.sink.received.find((d) => d.path === '/orders')!;
    expect(hit.headers['x-api-key']).toBe(secret);
    expect(hit.headers.authorization).toBe(`Bearer ${secret}`);
  });

  it('a tool row an older build stored with headers in clear still sends them', async () => {
    const id = await tool();
    w.t.ctx.store.sqlite.prepare('UPDATE tools SET headers = ? WHERE id = ?').run(JSON.stringify({ 'x-api-key': 'legacy-plain-secret' }), id);
    const asst = await w.assistant(a.key, { tool_ids: [id] });
    w.llm.enqueue({ toolCalls: [{ name: 'lookup_order', arguments: { order_id: '1' } }] }, { content: 'Done.' });
    expect((await converse(asst.uuid, 'order 1?')).res.status).toBe(200);
    expect(w.sink.received.find((d) => d.path === '/orders')!.headers['x-api-key']).toBe('legacy-plain-secret');
  });

  it('invalid arguments and failing endpoints come back to the model as errors', async () => {
    const id = await tool();
    const asst = await w.assistant(a.key, { tool_ids: [id] });
    w.sink.responder = () => ({ status: 503, body: { down: true } });
    w.llm.enqueue(
      { toolCalls: [{ name: 'lookup_order', arguments: { order_id: 42 } }, { name: 'lookup_order', arguments: '{not json' }] },
      { toolCalls: [{ name: 'lookup_order', arguments: { order_id: '7' } }] },
      { content: 'Sorry, the order system is down.' },
    );
    const { res } = await converse(asst.uuid, 'order?');
    expect(res.status).toBe(200);
    const calls = res.body.function_calls as { result: { error?: string } }[];
    expect(calls).toHaveLength(3);
    expect(calls[0]!.result.error).toMatch(/^Invalid arguments: order_id must be string/);
    expect(calls[1]!.result.error).toMatch(/not valid JSON/);
    expect(calls[2]!.result).toMatchObject({ error: 'The tool answered HTTP 503.', status: 503, body: { down: true } });
    expect(w.sink.received.filter((d) => d.path === '/orders')).toHaveLength(1);
    expect(res.body.message).toBe('Sorry, the order system is down.');
    // Each error went back to the model as the tool's answer, in call order.
    const toolMsgs = w.llm.requests.at(-1)!.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content!) as { error: string });
    expect(toolMsgs.map((m) => m.error)).toEqual(calls.map((c) => c.result.error));
  });

  it('an endpoint slower than timeout_ms gives the model a timeout error; the turn still answers', async () => {
    const id = await tool({ timeout_ms: 100 });
    const asst = await w.assistant(a.key, { tool_ids: [id] });
    w.sink.delayMs = 1_000;
    w.llm.enqueue({ toolCalls: [{ name: 'lookup_order', arguments: { order_id: '9' } }] }, { content: 'The order system is slow, sorry.' });
    const { res } = await converse(asst.uuid, 'order 9?');
    expect(res.body).toEqual({
      status: true,
      message: 'The order system is slow, sorry.',
      function_calls: [{ name: 'lookup_order', arguments: { order_id: '9' }, result: { error: 'The tool did not answer within 100 ms.' } }],
    });
    expect(w.llm.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: 'tool', content: JSON.stringify({ error: 'The tool did not answer within 100 ms.' }) });
  });

  it('executed calls are kept in the history as {name, arguments, result}', async () => {
    const id = await tool();
    const asst = await w.assistant(a.key, { tool_ids: [id] });
    w.sink.responder = () => ({ status: 200, body: { status: 'shipped' } });
    w.llm.enqueue({ content: 'Checking.', toolCalls: [{ name: 'lookup_order', arguments: { order_id: '1' } }] }, { content: 'Shipped.' });
    const { conv } = await converse(asst.uuid, 'order 1?');
    const view = await w.req(a.key, 'GET', `/conversations/${conv}`);
    expect(view.body.history.slice(1)).toEqual([
      { role: 'user', content: 'order 1?' },
      {
        role: 'assistant',
        content: 'Checking.\n\nShipped.',
        function_calls: [{ name: 'lookup_order', arguments: { order_id: '1' }, result: { status: 'shipped' } }],
      },
    ]);
  });
});

describe('prompt building through the API', () => {
  it('assistant variables, overridden by conversation variables; language; llm_temperature', async () => {
    const asst = await w.assistant(a.key, {
      system_prompt: 'You work for {{company}} in {{city}}.',
      variables: { company: 'Default Corp', city: 'Lyon' },
      llm_temperature: 0.7,
      secondary_language_ids: [2],
    });
    const conv = (await w.req(a.key, 'POST', '/conversations', { assistant_id: asst.uuid, type: 'test', variables: { company: 'Acme', customer_name: 'Ana' } })).body;
    expect(conv.history).toEqual([{ role: 'assistant', content: 'Hi Ana, how can I help?' }]);
    await w.req(undefined, 'POST', `/conversations/${conv.conversation_id}/messages`, { message: 'hi' });
    const req = w.llm.requests.at(-1)!;
    expect(req.temperature).toBe(0.7);
    expect(req.messages[0]!.content).toContain('You work for Acme in Lyon.');
    expect(req.messages[0]!.content).toContain(
      'Respond in English (United States) (en-US). If the customer uses English (United Kingdom) (en-GB), answer in that language instead.',
    );
  });
});

describe('knowledge base and built-ins', () => {
  async function kb(): Promise<number> {
    const base = await w.req(a.key, 'POST', '/user/knowledge-bases', { name: 'Policies' });
    const kbId = base.body.data?.id ?? base.body.id;
    await w.req(a.key, 'POST', `/user/knowledge-bases/${kbId}/documents`, { title: 'Refund policy', content: 'Refunds are accepted within 30 days of purchase.' });
    await w.req(a.key, 'POST', `/user/knowledge-bases/${kbId}/documents`, { title: 'Shipping', content: 'We ship worldwide in 5 days.' });
    return kbId as number;
  }

  it('function_call mode offers search_knowledge_base and returns ranked passages', async () => {
    const asst = await w.assistant(a.key, { knowledgebase_id: await kb(), knowledgebase_mode: 'function_call' });
    w.llm.enqueue({ toolCalls: [{ name: 'search_knowledge_base', arguments: { query: 'refund' } }] }, { content: '30 days.' });
    const { res } = await converse(asst.uuid, 'Can I get a refund?');
    expect(res.body.function_calls).toEqual([
      { name: 'search_knowledge_base', arguments: { query: 'refund' }, result: { passages: [{ title: 'Refund policy', content: 'Refunds are accepted within 30 days of purchase.' }] } },
    ]);
  });

  it('prompt mode puts the passages for the message into the system prompt', async () => {
    const asst = await w.assistant(a.key, { knowledgebase_id: await kb(), knowledgebase_mode: 'prompt' });
    await converse(asst.uuid, 'How long does shipping take?');
    const req = w.llm.requests.at(-1)!;
    expect(req.messages[0]!.content).toContain('We ship worldwide in 5 days.');
    expect(req.tools).toBeUndefined();
  });

  it('end_call is offered as end_conversation in text; the conversation then ends', async () => {
    const asst = await w.assistant(a.key, { tools: [{ type: 'end_call', description: 'when the customer says goodbye' }] });
    w.llm.enqueue({ toolCalls: [{ name: 'end_conversation', arguments: {} }] }, { content: 'Goodbye!' });
    const { conv, res } = await converse(asst.uuid, 'bye');
    expect(res.body).toMatchObject({ message: 'Goodbye!', function_calls: [{ name: 'end_conversation', arguments: {}, result: { ended: true } }] });
    expect(w.llm.requests.at(-2)!.tools?.[0]?.function.description).toContain('when the customer says goodbye');
    const again = await w.req(undefined, 'POST', `/conversations/${conv}/messages`, { message: 'wait' });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ status: false, error: expect.stringMatching(/ended/) });
  });

  it('calendar booking works in text: check_availability then book_meeting; voice-only built-ins are not offered', async () => {
    const cal = await CalcomStandIn.start();
    try {
      const slot = Date.parse('2023-11-16T10:00:00Z'); // the manual clock starts on 14 Nov 2023
      cal.freeSlots = [slot];
      const asst = await w.assistant(a.key, {
        tools: [
          { type: 'calendar_booking', calendar_api_key: cal.apiKey, calendar_event_slug: 'intro', calendar_endpoint: 'custom', calendar_custom_endpoint: cal.baseUrl },
          { type: 'call_transfer', phone_number: '+14155550199' },
          { type: 'dtmf_input' },
        ],
      });
      w.llm.enqueue(
        { toolCalls: [{ name: 'check_availability', arguments: { start_date: '2023-11-16' } }] },
        { toolCalls: [{ name: 'book_meeting', arguments: { start: '2023-11-16T11:00:00.000+01:00', name: 'Ana Lima', email: 'ana@example.com' } }] },
        { content: 'Booked for Thursday at 11.' },
      );
      const { res } = await converse(asst.uuid, 'Can we meet Thursday?');
      expect(w.llm.requests.at(-3)!.tools?.map((t) => t.function.name).sort()).toEqual(['book_meeting', 'check_availability']);
      expect(res.body.message).toBe('Booked for Thursday at 11.');
      const [check, book] = res.body.function_calls as { name: string; result: Record<string, unknown> }[];
      expect(check).toMatchObject({ name: 'check_availability', result: { slots: ['2023-11-16T11:00:00.000+01:00'] } });
      expect(book).toMatchObject({ name: 'book_meeting', result: { booked: true } });
      expect(cal.bookings).toHaveLength(1);
      expect(cal.requests.every((r) => r.headers.authorization === `Bearer ${cal.apiKey}`)).toBe(true);
    } finally {
      await cal.close();
    }
  });
});
