/**
 * Customer URLs through the engine's own paths: REST validation of webhook URLs, tool endpoints
 * and the calendar's custom endpoint; webhook delivery from the outbox; custom tools and the
 * calendar tool in a chat. The engine's default (no allow-list) refuses internal addresses;
 * names are resolved only at connect time, by a scripted DNS here.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { chatServices } from '../../../src/chat/services.ts';
import { createOutbound } from '../../../src/net/outbound/index.ts';
import { createLogger } from '../../../src/util/logger.ts';
import { EventPublisher } from '../../../src/webhooks/events.ts';
import { testApp, type TestApp } from '../../support/app.ts';
import { CalcomStandIn } from '../../support/calcom-stand-in.ts';
import { HttpSink } from '../../support/http-sink.ts';
import { internalAndOutside, ScriptedDns } from '../../support/outbound.ts';
import { assistantBody } from '../api/harness.ts';
import { chatWorld, type ChatWorld } from '../chat/helpers.ts';

const DEFAULT_CONFIG = { SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: '' };
const REFUSAL_TAIL = '(customer URLs may only reach public addresses)';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function app(env: Record<string, string>, opts: Parameters<typeof testApp>[1] = {}): Promise<TestApp> {
  const t = await testApp(env, opts);
  cleanup.push(async () => {
    await chatServices(t.ctx).stop();
    await t.close();
  });
  return t;
}

async function sink(): Promise<HttpSink> {
  const s = await HttpSink.start();
  cleanup.push(() => s.close());
  return s;
}

/** POST/PUT with the clock moved on, so a sequence stays under the REST rate limit. */
function req(t: TestApp, key: string) {
  return (method: 'POST' | 'PUT', url: string, body: unknown) => {
    t.clock.advance(600);
    return t.call(key, method, url, body);
  };
}

const calendarTool = (endpoint: string) => ({
  type: 'calendar_booking',
  calendar_api_key: 'cal_live_key',
  calendar_event_slug: 'intro',
  calendar_endpoint: 'custom',
  calendar_custom_endpoint: endpoint,
});

const toolBody = (endpoint: string) => ({
  name: 'lookup_order',
  description: 'Looks up an order',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } } },
  endpoint,
});

describe('REST validation of customer URLs', () => {
  it('with the default config, webhook_url at the metadata service or at loopback is 422 and nothing is stored', async () => {
    const s = await sink();
    const t = await app(DEFAULT_CONFIG);
    const a = await t.account();
    const call = req(t, a.key);
    const metadata = await call('POST', '/user/assistant', assistantBody({ is_webhook_active: true, webhook_url: 'http://169.254.169.254/latest/meta-data/iam/' }));
    const message = 'The webhook url field must point to a public address: 169.254.169.254 is a link-local address.';
    expect(metadata.status).toBe(422);
    expect(metadata.body).toEqual({ message, errors: { webhook_url: [message] } });
    const loopback = await call('POST', '/user/assistant', assistantBody({ is_webhook_active: true, webhook_url: `http://127.0.0.1:${s.port}/hook` }));
    expect(loopback.status).toBe(422);
    expect(loopback.body.errors.webhook_url).toEqual(['The webhook url field must point to a public address: 127.0.0.1 is a loopback address.']);
    expect(await t.ctx.repos.assistants.list(a.id)).toHaveLength(0);
  });

  it('with the default config, every customer URL field refuses internal hosts, on create and on update', async () => {
    const t = await app(DEFAULT_CONFIG);
    const a = await t.account();
    const call = req(t, a.key);
    const bad = await call(
      'POST',
      '/user/assistant',
      assistantBody({
        conversation_ended_webhook_url: 'http://10.1.2.3/ended',
        tools: [calendarTool('http://192.168.0.10/cal')],
      }),
    );
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({
      conversation_ended_webhook_url: ['The conversation ended webhook url field must point to a public address: 10.1.2.3 is a private address.'],
      'tools.0.calendar_custom_endpoint': ['The calendar custom endpoint field must point to a public address: 192.168.0.10 is a private address.'],
    });
    // Names are not resolved at validation: they are checked when the engine connects.
    const ok = await call('POST', '/user/assistant', assistantBody({ is_webhook_active: true, webhook_url: 'https://hooks.customer.example/call?token=abc', tools: [calendarTool('https://cal.customer.example')] }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const put = await call('PUT', `/user/assistant/${ok.body.data.id}`, { webhook_url: 'http://localhost:8080/hook' });
    expect(put.status).toBe(422);
    expect(put.body.errors.webhook_url).toEqual(['The webhook url field must point to a public address: localhost resolves to 127.0.0.1, a loopback address.']);

    for (const endpoint of ['http://127.0.0.1:9/x', 'http://localhost/x', 'https://[::1]/x', 'https://169.254.169.254/x', 'https://[::ffff:10.0.0.1]/x', 'https://100.64.0.1/x']) {
      const res = await call('POST', '/user/tools', toolBody(endpoint));
      expect(res.status, endpoint).toBe(422);
      expect(res.body.errors.endpoint[0], endpoint).toMatch(/^The endpoint field must point to a public address: /);
    }
    const tool = await call('POST', '/user/tools', toolBody('https://tools.customer.example/orders'));
    expect(tool.status).toBe(201);
    const moved = await call('PUT', `/user/tools/${tool.body.data.id}`, { endpoint: 'https://192.168.1.1/orders' });
    expect(moved.status).toBe(422);
    expect(moved.body.errors.endpoint).toEqual(['The endpoint field must point to a public address: 192.168.1.1 is a private address.']);
  });

  it('the operator allow-list opens a loopback webhook and tool endpoint; the metadata service stays closed', async () => {
    const s = await sink();
    const t = await app({ SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8' });
    const a = await t.account();
    const call = req(t, a.key);
    expect((await call('POST', '/user/assistant', assistantBody({ is_webhook_active: true, webhook_url: `http://127.0.0.1:${s.port}/hook` }))).status).toBe(201);
    expect((await call('POST', '/user/tools', toolBody(`http://127.0.0.1:${s.port}/orders`))).status).toBe(201);
    expect((await call('POST', '/user/assistant', assistantBody({ webhook_url: 'http://169.254.169.254/' }))).status).toBe(422);
  });
});

describe('webhook delivery', () => {
  async function assistantWithWebhook(t: TestApp, key: string, url: string): Promise<string> {
    const res = await req(t, key)('POST', '/user/assistant', assistantBody({ is_webhook_active: true, webhook_url: url }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return (await t.ctx.repos.assistants.getById(res.body.data.id))!.config.webhook_url!;
  }

  it('a webhook_url whose name resolves to 127.0.0.1 is refused at connect time: failed at once with the reason, never retried, the sink receives nothing', async () => {
    const s = await sink();
    const dns = new ScriptedDns({ 'hooks.customer.test': ['127.0.0.1'] });
    const t = await app(DEFAULT_CONFIG, { outbound: createOutbound({ resolve: dns.resolve }) });
    const logs: string[] = [];
    t.ctx.logger = createLogger('info', new Writable({ write: (chunk: Buffer, _enc, done) => (logs.push(chunk.toString()), done()) }));
    const a = await t.account();
    const url = await assistantWithWebhook(t, a.key, `http://hooks.customer.test:${s.port}/hook?token=s3cret-token`);
    const delivery = chatServices(t.ctx).delivery;
    await new EventPublisher(t.ctx.repos.outbox, t.clock).publish(a.id, url, 'call.completed', { call: { id: 1 } });
    await delivery.runDue();
    const [row] = await t.ctx.repos.outbox.list(a.id);
    expect(row).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: `refused to connect: hooks.customer.test resolves to 127.0.0.1, a loopback address ${REFUSAL_TAIL}`,
    });
    t.clock.advance(3_600_000);
    await delivery.runDue();
    expect((await t.ctx.repos.outbox.list(a.id))[0]!.attempts).toBe(1);
    expect(s.received).toHaveLength(0);
    expect(dns.asked).toEqual(['hooks.customer.test']);
    // The log says why and where (origin only): not the path, not the token.
    const line = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'webhook delivery refused by the outbound guard');
    expect(line).toMatchObject({ target: `http://hooks.customer.test:${s.port}`, error: row!.lastError });
    expect(logs.join('')).not.toContain('s3cret-token');
  });

  it('DNS rebinding: a webhook name that answered a permitted address, then 127.0.0.1, gets the first event and not the second', async () => {
    const pair = await internalAndOutside();
    cleanup.push(() => pair.close());
    pair.outside.responder = () => ({ status: 204, body: '', headers: { connection: 'close' } });
    const dns = new ScriptedDns({ 'hooks.customer.test': ['127.0.0.2', '127.0.0.1'] });
    const t = await app(DEFAULT_CONFIG, { outbound: createOutbound({ allowCidrs: ['127.0.0.2/32'], resolve: dns.resolve }) });
    const a = await t.account();
    const url = await assistantWithWebhook(t, a.key, `http://hooks.customer.test:${pair.port}/hook`);
    const events = new EventPublisher(t.ctx.repos.outbox, t.clock);
    const delivery = chatServices(t.ctx).delivery;
    await events.publish(a.id, url, 'call.completed', { n: 1 });
    await delivery.runDue();
    await events.publish(a.id, url, 'call.completed', { n: 2 });
    await delivery.runDue();
    const rows = await t.ctx.repos.outbox.list(a.id);
    expect(rows.map((r) => r.status)).toEqual(['delivered', 'failed']);
    expect(rows[1]!.lastError).toContain('hooks.customer.test resolves to 127.0.0.1, a loopback address');
    expect(pair.outside.received.map((d) => JSON.parse(d.body).data)).toEqual([{ n: 1 }]);
    expect(pair.internal.received).toHaveLength(0);
  });

  it('the allow-list opens a loopback sink: the webhook is delivered, signed', async () => {
    const s = await sink();
    const t = await app({ SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' });
    const a = await t.account();
    const url = await assistantWithWebhook(t, a.key, `${s.url}/hook`);
    await new EventPublisher(t.ctx.repos.outbox, t.clock).publish(a.id, url, 'call.completed', { call: { id: 1 } });
    await chatServices(t.ctx).delivery.runDue();
    expect((await t.ctx.repos.outbox.list(a.id))[0]!.status).toBe('delivered');
    expect(s.received).toHaveLength(1);
    expect(s.received[0]!.headers['webhook-signature']).toMatch(/^v1,/);
  });
});

describe('tools in a chat', () => {
  let w: ChatWorld | undefined;
  afterEach(async () => {
    await w?.close();
    w = undefined;
  });

  async function converse(world: ChatWorld, key: string, uuid: string, message: string) {
    const conv = (await world.req(key, 'POST', '/conversations', { assistant_id: uuid, type: 'test' })).body.conversation_id as string;
    return world.req(undefined, 'POST', `/conversations/${conv}/messages`, { message });
  }

  it('a custom tool whose endpoint resolves to loopback, or was stored with a loopback address, gives the model a refusal; the server receives nothing', async () => {
    const dns = new ScriptedDns({ 'tools.customer.test': ['127.0.0.1'] });
    w = await chatWorld({ outbound: createOutbound({ resolve: dns.resolve }) });
    const a = await w.t.account(1);
    const byName = await w.req(a.key, 'POST', '/user/tools', toolBody(`https://tools.customer.test:${w.sink.port}/orders`));
    expect(byName.status).toBe(201);
    // A tool stored before the rule existed (or written around the API): the connection is still refused.
    const stored = await w.t.ctx.repos.tools.create(a.id, { name: 'legacy_lookup', description: 'Old', parameters: { type: 'object', properties: {} }, endpoint: `${w.sink.url}/legacy`, method: 'POST', headers: {}, timeoutMs: 5000 });
    const asst = await w.assistant(a.key, { tool_ids: [byName.body.data.id, stored.id] });
    w.llm.enqueue({ toolCalls: [{ name: 'lookup_order', arguments: { order_id: '42' } }, { name: 'legacy_lookup', arguments: {} }] }, { content: 'The order system is unavailable.' });
    const res = await converse(w, a.key, asst.uuid, 'Where is order 42?');
    expect(res.status).toBe(200);
    expect(res.body.function_calls.map((c: { result: unknown }) => c.result)).toEqual([
      { error: `The tool could not be reached: refused to connect: tools.customer.test resolves to 127.0.0.1, a loopback address ${REFUSAL_TAIL}` },
      { error: `The tool could not be reached: refused to connect: 127.0.0.1 is a loopback address ${REFUSAL_TAIL}` },
    ]);
    expect(w.sink.received).toHaveLength(0);
  });

  it("the calendar tool's custom endpoint resolving to loopback is refused; Cal.com's stand-in receives nothing", async () => {
    const cal = await CalcomStandIn.start();
    cleanup.push(() => cal.close());
    const port = new URL(cal.baseUrl).port;
    const dns = new ScriptedDns({ 'cal.customer.test': ['127.0.0.1'] });
    w = await chatWorld({ outbound: createOutbound({ resolve: dns.resolve }) });
    const a = await w.t.account(1);
    const asst = await w.assistant(a.key, { tools: [calendarTool(`https://cal.customer.test:${port}`)] });
    w.llm.enqueue({ toolCalls: [{ name: 'check_availability', arguments: { start_date: '2023-11-16' } }] }, { content: 'The calendar is unavailable.' });
    const res = await converse(w, a.key, asst.uuid, 'Can we meet Thursday?');
    expect(res.body.function_calls[0].result).toEqual({
      error: `The calendar could not be reached or refused: Cal.com could not be reached: refused to connect: cal.customer.test resolves to 127.0.0.1, a loopback address ${REFUSAL_TAIL}`,
    });
    expect(cal.requests).toHaveLength(0);
  });
});
