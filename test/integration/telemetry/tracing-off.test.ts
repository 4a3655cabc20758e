/**
 * Tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT, the default): a call with a tool round and a
 * post-call webhook runs with no tracer installed, nothing is exported to a listening OTLP
 * receiver, and no request the engine makes (LLM, TTS, the STT handshake, the tool, the
 * webhook) carries a `traceparent`.
 */
import { trace, ProxyTracerProvider } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracingOn } from '../../../src/telemetry/spans.ts';
import { OtlpReceiver } from '../../support/otlp-receiver.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { fixture8k, firstAudible, listen, speak, startWorld, waitQuiet, waitUntil, type World } from '../e2e/world.ts';

let receiver: OtlpReceiver;
let w: World | undefined;
let phone: TestPhone;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  // The receiver listens where a collector would, but nothing tells the engine about it.
  // A busy test machine must not get the call shed (the event-loop delay guard).
  w = await startWorld({ deepgram: { script: ['Where is my order seven?'] }, env: { SWITCHBOARD_MAX_LOOP_DELAY_MS: '0' } });
  phone = await TestPhone.create();
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await w?.close();
  await receiver?.close();
});

describe('tracing off by default', () => {
  it('installs no tracer, exports nothing and adds no traceparent to any outgoing request', async () => {
    const world = w!;
    expect(world.engine.ctx.config.tracing?.enabled).toBe(false);
    expect(tracingOn()).toBe(false);
    // The API's global provider is still the proxy over the no-op one: no SDK registered.
    const provider = trace.getTracerProvider() as ProxyTracerProvider;
    expect(provider).toBeInstanceOf(ProxyTracerProvider);
    expect(provider.getDelegate().constructor.name).toBe('NoopTracerProvider');

    const tool = await world.api('POST', '/user/tools', {
      name: 'lookup_order',
      description: 'Looks up an order',
      parameters: { type: 'object', properties: { order_id: { type: 'string' } } },
      endpoint: `${world.sink.url}/orders`,
    });
    await world.assistant({ tool_ids: [tool.body.data.id], is_webhook_active: true, webhook_url: `${world.sink.url}/hooks/calls` });
    world.chat.enqueue({ toolCalls: [{ name: 'lookup_order', arguments: '{"order_id":"7"}' }] }, { content: 'Your order ships tomorrow morning.' });

    const call = await phone.dial(world.target());
    const heard = listen(call);
    expect((await call.outcome).status).toBe(200);
    const answeredAt = performance.now();
    await waitUntil(() => firstAudible(heard, answeredAt) !== undefined, 4000, 'greeting');
    await waitQuiet(heard, answeredAt, 800, 15_000);
    await speak(call, fixture8k('utt-opening-hours'));
    const askedAt = performance.now();
    await waitUntil(() => firstAudible(heard, askedAt) !== undefined, 8000, 'answer');
    await call.hangup();
    await waitUntil(() => world.sink.received.some((d) => d.path === '/hooks/calls'), 15_000, 'webhook');
    await world.close();
    w = undefined;

    // The same requests as with tracing on were made ...
    expect(world.chat.requests).toHaveLength(2);
    expect(world.sink.received.some((d) => d.path === '/orders')).toBe(true);
    expect(world.audio.requests.some((r) => r.path.endsWith('/audio/speech'))).toBe(true);
    expect(world.deepgram.connections.length).toBeGreaterThan(0);
    // ... and none of them carried trace context.
    expect(world.chat.requests.map((r) => r.traceparent)).toEqual([undefined, undefined]);
    expect(world.audio.requests.filter((r) => r.headers.traceparent !== undefined)).toEqual([]);
    expect(world.deepgram.connections.filter((c) => c.headers.traceparent !== undefined)).toEqual([]);
    expect(world.sink.received.filter((d) => d.headers.traceparent !== undefined)).toEqual([]);
    expect(receiver.requests).toEqual([]);
  }, 120_000);
});
