/**
 * Provider requests and first-byte latency on /metrics, by kind (stt, llm, tts, realtime) and
 * provider (its `label`: openai, deepgram, flite). Each provider kind is instrumented at one seam,
 * where the composition root builds it: the wrappers below put a provider behind the same
 * interface, so the engine never knows it is measured.
 *
 * What "first byte" means per kind (the moment the caller's wait depends on):
 * - llm: from the request to its first content token (or the whole answer when none streamed);
 * - tts: from synthesize() to the first audio frame;
 * - stt: from the engine's end-of-speech flush (finalize) to the next final transcript;
 * - realtime: from a response being asked for (createResponse, or the model's own end of the
 *   caller's speech) to its first audio.
 *
 * Outcomes: ok, error, cancelled (we aborted it: barge-in, the call ended).
 */
import client from 'prom-client';
import type { LlmProvider, LlmRequest } from '../providers/llm/types.ts';
import type { RealtimeConnection, RealtimeEvent, RealtimeProvider } from '../providers/realtime/realtime.ts';
import type { SttEvent, SttProvider, SttStream } from '../providers/stt/types.ts';
import type { TtsProvider } from '../providers/tts/types.ts';
import type { AudioFrame } from '../audio/frame.ts';

export type ProviderKind = 'stt' | 'llm' | 'tts' | 'realtime';
export type ProviderOutcome = 'ok' | 'error' | 'cancelled';

/** One request to a provider: its first byte and its end are each counted once. */
export interface ProviderRequest {
  firstByte(): void;
  done(outcome: ProviderOutcome): void;
}

export interface ProviderMetrics {
  /** A request starts now (the clock is the process's monotonic one). */
  start(kind: ProviderKind, provider: string): ProviderRequest;
  /** A latency measured by the caller (STT and realtime, where the wait starts mid-stream). */
  firstByteSeconds(kind: ProviderKind, provider: string, seconds: number): void;
}

const now = (): number => performance.now();

/** Counters on `registry` (the engine's /metrics); unregistered ones without it. */
export function createProviderMetrics(registry?: client.Registry): ProviderMetrics {
  const registers = registry ? [registry] : [];
  const requests = new client.Counter({
    name: 'switchboard_provider_requests_total',
    help: 'Requests to AI providers by kind (stt, llm, tts, realtime), provider and outcome (ok, error, cancelled)',
    labelNames: ['kind', 'provider', 'outcome'] as const,
    registers,
  });
  const firstByte = new client.Histogram({
    name: 'switchboard_provider_first_byte_seconds',
    help: 'Time to the first useful byte of a provider answer (first token, audio frame, final transcript after end of speech)',
    labelNames: ['kind', 'provider'] as const,
    buckets: [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
    registers,
  });
  const firstByteSeconds = (kind: ProviderKind, provider: string, seconds: number): void => {
    if (Number.isFinite(seconds) && seconds >= 0) firstByte.observe({ kind, provider }, seconds);
  };
  return {
    firstByteSeconds,
    start(kind, provider) {
      const startedAt = now();
      let sawFirst = false;
      let ended = false;
      return {
        firstByte() {
          if (sawFirst || ended) return;
          sawFirst = true;
          firstByteSeconds(kind, provider, (now() - startedAt) / 1000);
        },
        done(outcome) {
          if (ended) return;
          ended = true;
          requests.inc({ kind, provider, outcome });
        },
      };
    },
  };
}

/** `target` with some members replaced; everything else is the target's own, bound to it. */
function override<T extends object>(target: T, members: Partial<Record<keyof T | symbol, unknown>>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.hasOwn(members, prop)) return (members as Record<string | symbol, unknown>)[prop];
      const v: unknown = Reflect.get(t, prop, t);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

export function instrumentLlm(provider: LlmProvider, metrics: ProviderMetrics): LlmProvider {
  return override(provider, {
    async complete(request: LlmRequest) {
      const req = metrics.start('llm', provider.label);
      const onToken = request.onToken;
      const measured: LlmRequest = {
        ...request,
        onToken: (delta: string) => {
          if (delta) req.firstByte();
          onToken?.(delta);
        },
      };
      try {
        // Without onToken the request is not streamed: its first byte is its whole answer.
        const result = await provider.complete(onToken ? measured : request);
        req.firstByte();
        req.done('ok');
        return result;
      } catch (err) {
        req.done(request.signal?.aborted ? 'cancelled' : 'error');
        throw err;
      }
    },
  });
}

export function instrumentTts(provider: TtsProvider, metrics: ProviderMetrics): TtsProvider {
  return override(provider, {
    synthesize(text: string, opts: Parameters<TtsProvider['synthesize']>[1]): AsyncIterable<AudioFrame> {
      return (async function* () {
        const req = metrics.start('tts', provider.label);
        let outcome: ProviderOutcome = 'ok';
        try {
          for await (const frame of provider.synthesize(text, opts)) {
            req.firstByte();
            yield frame;
          }
        } catch (err) {
          outcome = 'error';
          throw err;
        } finally {
          req.done(opts.signal.aborted ? 'cancelled' : outcome);
        }
      })();
    },
  });
}

export function instrumentStt(provider: SttProvider, metrics: ProviderMetrics): SttProvider {
  return override(provider, {
    open(opts: Parameters<SttProvider['open']>[0]): SttStream {
      const req = metrics.start('stt', provider.label);
      const stream = provider.open(opts);
      let flushedAt: number | undefined;
      let failed = false;
      const events = async function* (): AsyncGenerator<SttEvent> {
        try {
          for await (const event of stream) {
            if (event.type === 'error') failed = true;
            else if (event.type === 'final' && flushedAt !== undefined) {
              metrics.firstByteSeconds('stt', provider.label, (now() - flushedAt) / 1000);
              flushedAt = undefined;
            }
            yield event;
          }
        } catch (err) {
          failed = true;
          throw err;
        } finally {
          req.done(failed ? 'error' : 'ok');
        }
      };
      return override(stream, {
        finalize() {
          flushedAt ??= now();
          stream.finalize();
        },
        [Symbol.asyncIterator]: () => events()[Symbol.asyncIterator](),
      });
    },
  });
}

export function instrumentRealtime(provider: RealtimeProvider, metrics: ProviderMetrics): RealtimeProvider {
  return override(provider, {
    async connect(opts: Parameters<RealtimeProvider['connect']>[0]): Promise<RealtimeConnection> {
      const req = metrics.start('realtime', provider.label);
      let conn: RealtimeConnection;
      try {
        conn = await provider.connect(opts);
      } catch (err) {
        req.done(opts.signal?.aborted ? 'cancelled' : 'error');
        throw err;
      }
      let askedAt: number | undefined;
      const observe = (event: RealtimeEvent): void => {
        if (event.type === 'speech-stopped') askedAt ??= now();
        else if (event.type === 'audio' && askedAt !== undefined) {
          metrics.firstByteSeconds('realtime', provider.label, (now() - askedAt) / 1000);
          askedAt = undefined;
        } else if (event.type === 'closed') req.done(event.retryable ? 'error' : 'ok');
      };
      const events = (async function* () {
        try {
          for await (const event of conn.events) {
            observe(event);
            yield event;
          }
        } finally {
          req.done('ok');
        }
      })();
      return override(conn, {
        events,
        createResponse(o?: { instructions?: string }) {
          askedAt ??= now();
          conn.createResponse(o);
        },
      });
    },
  });
}
