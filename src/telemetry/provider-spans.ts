/**
 * Provider requests as spans, by decorating the provider interfaces where the composition root
 * builds them (src/providers/registry.ts, src/providers/llm/registry.ts, the realtime wiring):
 * `llm.request`, `tts.request`, `stt.connection`, `realtime.session`. Each runs the vendor's
 * work in its span's context, so the HTTP request or WebSocket handshake it makes carries the
 * span in `traceparent`. With tracing off at construction the provider is returned as it is;
 * a decorated one calls straight through once tracing has been shut down.
 */
import { context, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { AudioFrame } from '../audio/frame.ts';
import type { LlmProvider, LlmRequest } from '../providers/llm/types.ts';
import type { RealtimeConnection, RealtimeEvent, RealtimeProvider } from '../providers/realtime/realtime.ts';
import type { SttEvent, SttProvider, SttStream } from '../providers/stt/types.ts';
import type { TtsProvider } from '../providers/tts/types.ts';
import { failSpan, startSpan, traced, tracingOn } from './spans.ts';

export function traceLlm(inner: LlmProvider): LlmProvider {
  if (!tracingOn()) return inner;
  return {
    label: inner.label,
    capabilities: inner.capabilities,
    complete(req: LlmRequest) {
      if (!tracingOn()) return inner.complete(req);
      const attrs = { 'switchboard.provider': inner.label, 'gen_ai.request.model': req.model, 'switchboard.llm.tools': req.tools?.length ?? 0 };
      return traced('llm.request', attrs, async (span) => {
        const onToken = req.onToken;
        let first = true;
        const tapped = onToken
          ? (delta: string): void => {
              if (first) {
                first = false;
                span.addEvent('llm.first_token');
              }
              onToken(delta);
            }
          : undefined;
        const result = await inner.complete(tapped ? { ...req, onToken: tapped } : req);
        span.setAttributes({ 'gen_ai.response.finish_reasons': [result.finishReason ?? ''], 'switchboard.llm.tool_calls': result.toolCalls.length });
        return result;
      }, { provider: inner.label });
    },
  };
}

export function traceTts(inner: TtsProvider): TtsProvider {
  if (!tracingOn()) return inner;
  return {
    label: inner.label,
    capabilities: inner.capabilities,
    synthesize(text, opts) {
      if (!tracingOn()) return inner.synthesize(text, opts);
      const span = startSpan('tts.request', { 'switchboard.provider': inner.label, 'switchboard.tts.voice': opts.voice, 'switchboard.tts.chars': text.length })!;
      const ctx = trace.setSpan(context.active(), span);
      return tracedFrames(span, ctx, opts.signal, inner.label, () => inner.synthesize(text, opts));
    },
  };
}

async function* tracedFrames(span: Span, ctx: Context, signal: AbortSignal, provider: string, open: () => AsyncIterable<AudioFrame>): AsyncGenerator<AudioFrame> {
  let frames = 0;
  const it = context.with(ctx, () => open()[Symbol.asyncIterator]());
  let done = false;
  try {
    for (;;) {
      const r = await context.with(ctx, () => it.next());
      if (r.done) {
        done = true;
        break;
      }
      if (frames++ === 0) span.addEvent('tts.first_byte');
      yield r.value;
    }
  } catch (err) {
    done = true;
    if (!signal.aborted) failSpan(span, err, provider);
    throw err;
  } finally {
    // Stopped early (barge-in): the vendor's iterator is told too, as a plain for-await would.
    if (!done) await it.return?.();
    span.setAttributes({ 'switchboard.tts.frames': frames, ...(signal.aborted && { 'switchboard.aborted': true }) });
    span.end();
  }
}

export function traceStt(inner: SttProvider): SttProvider {
  if (!tracingOn()) return inner;
  return {
    label: inner.label,
    capabilities: inner.capabilities,
    open(opts) {
      if (!tracingOn()) return inner.open(opts);
      const span = startSpan('stt.connection', { 'switchboard.provider': inner.label, 'switchboard.stt.language': opts.language, 'switchboard.stt.sample_rate': opts.sampleRate })!;
      const ctx = trace.setSpan(context.active(), span);
      return tracedSttStream(context.with(ctx, () => inner.open(opts)), span, opts.signal, inner.label);
    },
  };
}

function tracedSttStream(stream: SttStream, span: Span, signal: AbortSignal, provider: string): SttStream {
  let ended = false;
  let finals = 0;
  const end = (): void => {
    if (ended) return;
    ended = true;
    span.setAttributes({ 'switchboard.stt.finals': finals, ...(signal.aborted && { 'switchboard.aborted': true }) });
    span.end();
  };
  const note = (ev: SttEvent): void => {
    if (ev.type === 'final' && ev.text) {
      finals++;
      span.addEvent('stt.final');
    } else if (ev.type === 'error') failSpan(span, ev.error, provider);
  };
  async function* events(): AsyncGenerator<SttEvent> {
    try {
      for await (const ev of stream) {
        note(ev);
        yield ev;
      }
    } finally {
      end();
    }
  }
  const traced: SttStream = {
    write: (frame) => stream.write(frame),
    finalize: () => stream.finalize(),
    async close() {
      try {
        await stream.close();
      } finally {
        end();
      }
    },
    [Symbol.asyncIterator]: () => events(),
  };
  if (stream.copiesOnWrite !== undefined) Object.defineProperty(traced, 'copiesOnWrite', { get: () => stream.copiesOnWrite });
  if (stream.skip) traced.skip = (ms) => stream.skip!(ms);
  return traced;
}

export function traceRealtime(inner: RealtimeProvider): RealtimeProvider {
  if (!tracingOn()) return inner;
  return {
    label: inner.label,
    capabilities: inner.capabilities,
    async connect(opts) {
      if (!tracingOn()) return inner.connect(opts);
      const attrs: Attributes = { 'switchboard.provider': inner.label, 'gen_ai.request.model': opts.model };
      const span = startSpan('realtime.session', attrs)!;
      const ctx = trace.setSpan(context.active(), span);
      let conn: RealtimeConnection;
      try {
        conn = await context.with(ctx, () => inner.connect(opts));
      } catch (err) {
        failSpan(span, err, inner.label);
        span.end();
        throw err;
      }
      span.addEvent('realtime.connected');
      return tracedConnection(conn, span, inner.label);
    },
  };
}

function tracedConnection(conn: RealtimeConnection, span: Span, provider: string): RealtimeConnection {
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    span.setAttributes({ 'switchboard.realtime.audio_in_ms': conn.counters.audioInMs, 'switchboard.realtime.audio_out_ms': conn.counters.audioOutMs });
    span.end();
  };
  const note = (ev: RealtimeEvent): void => {
    // The vendor's code only ("server_error"), never its message.
    if (ev.type === 'error' && !ev.retryable) span.setStatus({ code: SpanStatusCode.ERROR, message: `${provider} ${/^[\w.-]{1,64}$/.test(ev.code) ? ev.code : 'error'}` });
    else if (ev.type === 'response-started') span.addEvent('realtime.response_started');
  };
  async function* events(): AsyncGenerator<RealtimeEvent> {
    try {
      for await (const ev of conn.events) {
        note(ev);
        yield ev;
      }
    } finally {
      end();
    }
  }
  const wrapped = events();
  return new Proxy(conn, {
    get(target, prop) {
      if (prop === 'events') return wrapped;
      if (prop === 'close')
        return () => {
          target.close();
          end();
        };
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
