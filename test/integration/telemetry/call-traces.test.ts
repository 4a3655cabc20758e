/**
 * Tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set): a real loopback call into the real engine, with
 * its providers, a custom tool and the post-call webhook on protocol stand-ins, exports its
 * spans over OTLP/HTTP to a receiver that decodes what the exporter sends. One trace holds the
 * call, its turns (with the latency parts as events) and every provider request and tool call
 * under the turn that made it; the requests the stand-ins receive carry a `traceparent` naming
 * the span that made them. The webhook delivery is a trace of its own, and so is its header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtlpReceiver, type ReceivedSpan } from '../../support/otlp-receiver.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { fixture8k, firstAudible, listen, speak, startWorld, waitQuiet, waitUntil, type World } from '../e2e/world.ts';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

let receiver: OtlpReceiver;
let w: World | undefined;
let phone: TestPhone;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  w = await startWorld({
    deepgram: { script: ['Where is my order seven?'] },
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: 'switchboard-test',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      // A busy test machine must not get the call shed (the event-loop delay guard).
      SWITCHBOARD_MAX_LOOP_DELAY_MS: '0',
    },
  });
  phone = await TestPhone.create();
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await w?.close();
  await receiver?.close();
});

function parentOf(header: unknown): { traceId: string; spanId: string } {
  const m = TRACEPARENT.exec(String(header));
  if (!m) throw new Error(`not a sampled W3C traceparent: ${String(header)}`);
  return { traceId: m[1]!, spanId: m[2]! };
}

const named = (spans: ReceivedSpan[], name: string): ReceivedSpan[] => spans.filter((s) => s.name === name);

describe('OpenTelemetry traces of a call', () => {
  it('exports the call, its turns and provider/tool spans in one trace, and stamps outgoing requests with traceparent', async () => {
    const world = w!;
    const tool = await world.api('POST', '/user/tools', {
      name: 'lookup_order',
      description: 'Looks up an order',
      parameters: { type: 'object', properties: { order_id: { type: 'string' } } },
      endpoint: `${world.sink.url}/orders`,
    });
    expect(tool.status).toBe(201);
    const assistantId = await world.assistant({ tool_ids: [tool.body.data.id], is_webhook_active: true, webhook_url: `${world.sink.url}/hooks/calls` });
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
    await waitQuiet(heard, askedAt, 600, 15_000);
    await call.hangup();
    await waitUntil(() => world.sink.received.some((d) => d.path === '/hooks/calls'), 15_000, 'webhook');
    // The engine's close flushes the batch; the receiver then holds every span.
    await world.close();
    w = undefined;

    const spans = receiver.spans;
    expect(receiver.requests.every((r) => r.status === 200 && r.contentType === 'application/json' && r.path === '/v1/traces')).toBe(true);
    const [callSpan, ...moreCalls] = named(spans, 'call');
    expect(moreCalls).toEqual([]);
    expect(callSpan).toBeDefined();
    const traceId = callSpan!.traceId;
    expect(callSpan!.parentSpanId).toBeUndefined();
    expect(callSpan!.resource['service.name']).toBe('switchboard-test');
    expect(callSpan!.attributes).toMatchObject({
      'switchboard.call.uuid': expect.any(String),
      'switchboard.call.direction': 'inbound',
      'switchboard.call.mode': 'pipeline',
      'switchboard.call.trunk': expect.any(String),
      'switchboard.assistant.id': assistantId,
      'switchboard.call.end_cause': 'remote-hangup',
    });
    expect(callSpan!.status.code).not.toBe(2);

    // Turns: children of the call, a greeting and the reply with its latency parts as events.
    const turns = named(spans, 'call.turn');
    expect(turns.every((t) => t.traceId === traceId && t.parentSpanId === callSpan!.spanId)).toBe(true);
    const greeting = turns.find((t) => t.attributes['switchboard.turn.kind'] === 'greeting')!;
    const reply = turns.find((t) => t.attributes['switchboard.turn.kind'] === 'reply')!;
    expect(greeting).toBeDefined();
    expect(reply).toBeDefined();
    const events = reply.events.map((e) => e.name);
    for (const part of ['stt.final', 'end_of_turn', 'llm.first_token', 'tts.first_byte', 'rtp.first_packet']) expect(events, part).toContain(part);
    const at = (name: string): bigint => reply.events.find((e) => e.name === name)!.timeNs;
    // In the order a reply happens, inside the turn's span.
    expect(at('stt.final') <= at('llm.first_token')).toBe(true);
    expect(at('end_of_turn') <= at('llm.first_token')).toBe(true);
    expect(at('llm.first_token') <= at('tts.first_byte')).toBe(true);
    expect(at('tts.first_byte') <= at('rtp.first_packet')).toBe(true);
    expect(reply.startNs <= at('end_of_turn') && at('rtp.first_packet') <= reply.endNs).toBe(true);
    expect(reply.attributes).toMatchObject({
      'switchboard.latency.endpointing_ms': expect.any(Number),
      'switchboard.latency.llm_first_token_ms': expect.any(Number),
      'switchboard.latency.first_frame_out_ms': expect.any(Number),
      'switchboard.latency.total_ms': expect.any(Number),
    });

    // Provider requests and the tool call: children of the turn that made them.
    const llm = named(spans, 'llm.request');
    expect(llm).toHaveLength(2); // the tool round and the answer
    expect(llm.every((s) => s.traceId === traceId && s.parentSpanId === reply.spanId)).toBe(true);
    expect(llm.some((s) => s.events.some((e) => e.name === 'llm.first_token'))).toBe(true);
    const toolSpans = named(spans, 'tool.call');
    expect(toolSpans).toHaveLength(1);
    expect(toolSpans[0]).toMatchObject({ traceId, parentSpanId: reply.spanId, attributes: { 'switchboard.tool.name': 'lookup_order' } });
    const tts = named(spans, 'tts.request');
    expect(tts.some((s) => s.parentSpanId === greeting.spanId)).toBe(true);
    expect(tts.some((s) => s.parentSpanId === reply.spanId)).toBe(true);
    expect(tts.every((s) => s.traceId === traceId && turns.some((t) => t.spanId === s.parentSpanId))).toBe(true);
    const stt = named(spans, 'stt.connection');
    expect(stt).toHaveLength(1);
    expect(stt[0]).toMatchObject({ traceId, parentSpanId: callSpan!.spanId });
    expect(stt[0]!.events.map((e) => e.name)).toContain('stt.final');

    // What the stand-ins received: traceparent naming the span that sent it.
    const chatRequests = world.chat.requests;
    expect(chatRequests).toHaveLength(2);
    for (const r of chatRequests) {
      const p = parentOf(r.traceparent);
      expect(p.traceId).toBe(traceId);
      expect(llm.map((s) => s.spanId)).toContain(p.spanId);
    }
    const speech = world.audio.requests.filter((r) => r.path.endsWith('/audio/speech'));
    expect(speech.length).toBeGreaterThan(0);
    for (const r of speech) {
      const p = parentOf(r.headers.traceparent);
      expect(p.traceId).toBe(traceId);
      expect(tts.map((s) => s.spanId)).toContain(p.spanId);
    }
    const dg = world.deepgram.connections;
    expect(dg.length).toBeGreaterThan(0);
    expect(parentOf(dg[0]!.headers.traceparent)).toEqual({ traceId, spanId: stt[0]!.spanId });
    const toolHit = world.sink.received.find((d) => d.path === '/orders')!;
    expect(parentOf(toolHit.headers.traceparent)).toEqual({ traceId, spanId: toolSpans[0]!.spanId });

    // The webhook: a delivery span of its own trace, named in the request it made.
    const deliveries = named(spans, 'webhook.delivery');
    expect(deliveries.length).toBeGreaterThan(0);
    const hook = world.sink.received.find((d) => d.path === '/hooks/calls')!;
    const hp = parentOf(hook.headers.traceparent);
    const delivery = deliveries.find((s) => s.spanId === hp.spanId)!;
    expect(delivery).toMatchObject({ traceId: hp.traceId, parentSpanId: undefined, attributes: { 'http.response.status_code': 200 } });
    expect(delivery.traceId).not.toBe(traceId);
  }, 120_000);
});
