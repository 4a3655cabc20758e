/**
 * Spans leave the process (OTLP), so a provider failure is told in them by its provider label
 * and short reason only: a proxy at OPENAI_BASE_URL that answers 401 echoing the whole bearer
 * key must not put the key into any exported span (status, events, attributes), nor may an STT
 * error, a failed realtime connect or a realtime error event whose message quotes it.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiLlmProvider } from '../../../src/providers/llm/openai.ts';
import type { RealtimeConnection, RealtimeEvent, RealtimeProvider } from '../../../src/providers/realtime/realtime.ts';
import type { SttEvent, SttProvider, SttStream } from '../../../src/providers/stt/types.ts';
import { AsyncLocalContextManager } from '../../../src/telemetry/context-manager.ts';
import { traceLlm, traceRealtime, traceStt } from '../../../src/telemetry/provider-spans.ts';
import { setTracer } from '../../../src/telemetry/spans.ts';
import { OpenAiStandIn } from '../../support/openai-stand-in.ts';

const KEY = 'sk-proj-LEAKME0123456789abcdefSECRET';
const BARE = 'LEAKME0123456789abcdefSECRET';

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;
let llm: OpenAiStandIn | undefined;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalContextManager());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracer(provider.getTracer('test'));
});

afterEach(async () => {
  setTracer(undefined);
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
  await llm?.close();
  llm = undefined;
});

/** Everything an exporter would send of the finished spans. */
function exported(): string {
  return JSON.stringify(exporter.getFinishedSpans().map((s: ReadableSpan) => ({ name: s.name, status: s.status, attributes: s.attributes, events: s.events })));
}

async function* events<T>(list: T[]): AsyncGenerator<T> {
  for (const e of list) yield e;
}

describe('provider failures in spans carry no secret', () => {
  it('llm.request: a 401 echoing the bearer key gives status "openai 401" and no key', async () => {
    llm = await OpenAiStandIn.start();
    llm.responder = (req) => ({ status: 401, errorMessage: `Invalid token: ${req.authorization}` });
    const traced = traceLlm(new OpenAiLlmProvider({ apiKey: KEY, baseUrl: llm.baseUrl, retries: 0 }));
    await expect(traced.complete({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })).rejects.toThrow();
    expect(llm.requests[0]?.authorization).toBe(`Bearer ${KEY}`);
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('llm.request');
    expect(span!.status).toEqual({ code: 2, message: 'openai 401' });
    expect(span!.events.map((e) => e.name)).toEqual(['exception']);
    expect(Object.keys(span!.events[0]!.attributes ?? {})).toEqual(['exception.type']);
    expect(exported()).not.toContain(BARE);
  });

  it('stt.connection, realtime connect and realtime error events: no vendor message', async () => {
    const sttEvents: SttEvent[] = [{ type: 'error', error: new Error(`closed (HTTP 401): bad key ${KEY}`) } as SttEvent];
    const stream = { write() {}, finalize() {}, close: async () => {}, [Symbol.asyncIterator]: () => events(sttEvents) } as unknown as SttStream;
    const stt: SttProvider = { label: 'deepgram', capabilities: { interim: true, streaming: true }, open: () => stream } as unknown as SttProvider;
    const s = traceStt(stt).open({ language: 'en', sampleRate: 16000, signal: new AbortController().signal } as never);
    for await (const _ of s) void _;

    const refused: RealtimeProvider = {
      label: 'openai-realtime',
      capabilities: {} as RealtimeProvider['capabilities'],
      connect: () => Promise.reject(new Error(`refused the connection (HTTP 401): Incorrect API key provided: ${KEY}`)),
    };
    await expect(traceRealtime(refused).connect({ model: 'm', apiKey: KEY, session: {} as never, signal: new AbortController().signal })).rejects.toThrow();

    const rtEvents: RealtimeEvent[] = [{ type: 'error', code: 'invalid_api_key', message: `Incorrect API key provided: ${KEY}`, retryable: false }];
    const conn = { events: events(rtEvents), counters: { audioInMs: 0, audioOutMs: 0 }, close() {} } as unknown as RealtimeConnection;
    const rt: RealtimeProvider = { label: 'openai-realtime', capabilities: {} as RealtimeProvider['capabilities'], connect: async () => conn };
    const c = await traceRealtime(rt).connect({ model: 'm', apiKey: KEY, session: {} as never, signal: new AbortController().signal });
    for await (const _ of c.events) void _;

    const byName = exporter.getFinishedSpans().map((sp) => [sp.name, sp.status.message]);
    expect(byName).toEqual([
      ['stt.connection', 'deepgram 401'],
      ['realtime.session', 'openai-realtime 401'],
      ['realtime.session', 'openai-realtime invalid_api_key'],
    ]);
    expect(exported()).not.toContain(BARE);
  });
});
