import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatWorld, type ChatWorld } from './helpers.ts';

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
});
