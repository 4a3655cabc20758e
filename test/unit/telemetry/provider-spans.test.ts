/**
 * The provider decorators with a real SDK tracer (spans kept in memory): a realtime session and
 * an STT stream are spans from open to close, what the vendor code sends while opening carries
 * the span in `traceparent`, the stream keeps its optional capabilities (`skip`,
 * `copiesOnWrite`), and with tracing off the provider is returned as it is.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RealtimeConnection, RealtimeEvent, RealtimeProvider } from '../../../src/providers/realtime/realtime.ts';
import type { SttEvent, SttProvider, SttStream } from '../../../src/providers/stt/types.ts';
import { AsyncLocalContextManager } from '../../../src/telemetry/context-manager.ts';
import { traceRealtime, traceStt } from '../../../src/telemetry/provider-spans.ts';
import { setTracer, traceHeaders } from '../../../src/telemetry/spans.ts';

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;

function on(): void {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalContextManager());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracer(provider.getTracer('test'));
}

afterEach(async () => {
  setTracer(undefined);
  await provider?.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

async function* events<T>(list: T[]): AsyncGenerator<T> {
  for (const e of list) yield e;
}

describe('provider decorators', () => {
  it('with tracing off return the provider itself', () => {
    const stt = { label: 'x', capabilities: { interim: true, streaming: true }, open: () => ({}) as SttStream } as SttProvider;
    expect(traceStt(stt)).toBe(stt);
  });

  describe('with tracing on', () => {
    beforeEach(on);

    it('a realtime session is a span from connect to close, and the handshake carries it', async () => {
      let handshake: Record<string, string> = {};
      let closed = 0;
      const list: RealtimeEvent[] = [{ type: 'response-started', responseId: 'r1' }];
      const conn = { events: events(list), counters: { audioInMs: 400, audioOutMs: 900 }, close: () => void closed++, commit: () => {} } as unknown as RealtimeConnection;
      const inner: RealtimeProvider = {
        label: 'openai-realtime',
        capabilities: {} as RealtimeProvider['capabilities'],
        connect: async () => {
          handshake = traceHeaders();
          return conn;
        },
      };
      const traced = traceRealtime(inner);
      const c = await traced.connect({ model: 'gpt-realtime', apiKey: 'k', session: {} as never, signal: new AbortController().signal });
      c.commit();
      for await (const ev of c.events) expect(ev.type).toBe('response-started');
      c.close();
      expect(closed).toBe(1);
      const [span, ...more] = exporter.getFinishedSpans();
      expect(more).toEqual([]);
      expect(span!.name).toBe('realtime.session');
      expect(span!.attributes).toMatchObject({ 'gen_ai.request.model': 'gpt-realtime', 'switchboard.realtime.audio_out_ms': 900 });
      expect(span!.events.map((e) => e.name)).toEqual(['realtime.connected', 'realtime.response_started']);
      expect(handshake.traceparent).toBe(`00-${span!.spanContext().traceId}-${span!.spanContext().spanId}-01`);
    });

    it('a failed realtime connect ends its span with the error', async () => {
      const inner: RealtimeProvider = {
        label: 'openai-realtime',
        capabilities: {} as RealtimeProvider['capabilities'],
        connect: () => Promise.reject(new Error('refused the connection (HTTP 401)')),
      };
      await expect(traceRealtime(inner).connect({ model: 'm', apiKey: 'k', session: {} as never, signal: new AbortController().signal })).rejects.toThrow(/401/);
      const [span] = exporter.getFinishedSpans();
      expect(span!.status).toMatchObject({ code: 2, message: 'openai-realtime 401' });
    });

    it('an STT stream is a span until closed, counts finals and keeps skip and copiesOnWrite', async () => {
      const skipped: number[] = [];
      let handshake: Record<string, string> = {};
      const list: SttEvent[] = [{ type: 'interim', text: 'hel' }, { type: 'final', text: 'hello' }];
      const stream = {
        write() {},
        copiesOnWrite: true,
        skip: (ms: number) => void skipped.push(ms),
        finalize() {},
        close: async () => {},
        [Symbol.asyncIterator]: () => events(list),
      } satisfies SttStream;
      const inner: SttProvider = {
        label: 'deepgram',
        capabilities: { interim: true, streaming: true },
        open: () => {
          handshake = traceHeaders();
          return stream;
        },
      };
      const s = traceStt(inner).open({ language: 'en-US', sampleRate: 8000, signal: new AbortController().signal });
      expect(s.copiesOnWrite).toBe(true);
      s.skip?.(240);
      expect(skipped).toEqual([240]);
      const seen: string[] = [];
      for await (const ev of s) seen.push(ev.type);
      expect(seen).toEqual(['interim', 'final']);
      await s.close();
      const [span, ...more] = exporter.getFinishedSpans();
      expect(more).toEqual([]);
      expect(span!.name).toBe('stt.connection');
      expect(span!.attributes).toMatchObject({ 'switchboard.stt.sample_rate': 8000, 'switchboard.stt.finals': 1 });
      expect(handshake.traceparent).toContain(span!.spanContext().spanId);
    });
  });
});
