/**
 * OpenAI realtime server events → RealtimeEvents. Accepts the GA names
 * (`response.output_audio.delta`, `response.output_audio_transcript.*`, `response.output_text.*`)
 * and the beta ones (`response.audio.delta`, `response.audio_transcript.*`, `response.text.*`),
 * since both are in service. Payloads are checked with zod; an event we do not know, or one that
 * fails its schema, is counted and skipped rather than failing the call: the protocol grows.
 */
import { z } from 'zod';
import { bytesPerMs, OutputDecoder } from './audio-edge.ts';
import type { FunctionArguments, RealtimeAudioFormat, RealtimeCounters, RealtimeEvent } from './realtime.ts';

const str = z.string();
const delta = z.object({ response_id: str, item_id: str, content_index: z.number().default(0), delta: str });
const schemas = {
  speechStarted: z.object({ audio_start_ms: z.number(), item_id: str }),
  speechStopped: z.object({ audio_end_ms: z.number(), item_id: str }),
  responseCreated: z.object({ response: z.object({ id: str }) }),
  audioDone: z.object({ response_id: str, item_id: str, content_index: z.number().default(0) }),
  transcriptDone: z.object({ response_id: str, item_id: str, transcript: str }),
  textDone: z.object({ response_id: str, item_id: str, text: str }),
  userTranscript: z.object({ item_id: str, transcript: str }),
  itemAdded: z.object({ item: z.object({ id: str.optional(), type: str, name: str.optional(), call_id: str.optional() }) }),
  argsDone: z.object({ response_id: str, item_id: str, call_id: str, name: str.optional(), arguments: str }),
  responseDone: z.object({
    response: z.object({
      id: str,
      status: str.default('completed'),
      status_details: z.object({ reason: str.nullish(), type: str.nullish() }).nullish(),
      usage: z.record(str, z.unknown()).nullish(),
      output: z.array(z.object({ id: str.optional(), type: str, name: str.optional(), call_id: str.optional(), arguments: str.optional() })).default([]),
    }),
  }),
  truncated: z.object({ item_id: str, audio_end_ms: z.number() }),
  error: z.object({ error: z.object({ type: str.nullish(), code: str.nullish(), message: str.nullish(), param: str.nullish() }) }),
  rateLimits: z.object({
    rate_limits: z.array(z.object({ name: str, limit: z.number().optional(), remaining: z.number().optional(), reset_seconds: z.number().optional() })),
  }),
};

/** Events we read elsewhere or deliberately ignore: not counted as unknown. */
const QUIET = new Set([
  'session.created',
  'conversation.created',
  'conversation.item.created',
  'conversation.item.added',
  'conversation.item.done',
  'conversation.item.deleted',
  'conversation.item.input_audio_transcription.delta',
  'conversation.item.input_audio_transcription.failed',
  'input_audio_buffer.committed',
  'input_audio_buffer.cleared',
  'response.content_part.added',
  'response.content_part.done',
  'response.output_item.done',
  'response.function_call_arguments.delta',
  'output_audio_buffer.started',
  'output_audio_buffer.stopped',
  'output_audio_buffer.cleared',
]);

/** Error codes worth a retry of the same request or a reconnect; the rest are our own mistakes. */
const RETRYABLE_TYPES = new Set(['server_error', 'rate_limit_error']);
const RETRYABLE_CODES = new Set(['rate_limit_exceeded', 'server_error', 'session_expired']);

export function parseArguments(raw: string): FunctionArguments {
  try {
    return { ok: true, value: raw.trim() === '' ? {} : JSON.parse(raw) };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e), raw };
  }
}

interface ItemAudio {
  decoder: OutputDecoder;
  bytes: number;
  responseId: string;
}

export class ServerEventTranslator {
  private readonly audio = new Map<string, ItemAudio>();
  /** Received model audio per item, kept after the item ends so late truncations still clamp. */
  private readonly received = new Map<string, number>();
  private readonly callNames = new Map<string, string>();
  private readonly callsEmitted = new Set<string>();
  private readonly msPerByte: number;

  constructor(
    private readonly outputFormat: RealtimeAudioFormat,
    private readonly counters: RealtimeCounters,
  ) {
    this.msPerByte = 1 / bytesPerMs(outputFormat);
  }

  receivedMs(itemId: string): number {
    return this.received.get(itemId) ?? 0;
  }

  translate(msg: { type: string } & Record<string, unknown>): RealtimeEvent[] {
    switch (msg.type) {
      case 'session.updated':
        return [{ type: 'session-updated' }];
      case 'input_audio_buffer.speech_started':
        return this.map(schemas.speechStarted, msg, (e) => ({ type: 'speech-started', audioStartMs: e.audio_start_ms, itemId: e.item_id }));
      case 'input_audio_buffer.speech_stopped':
        return this.map(schemas.speechStopped, msg, (e) => ({ type: 'speech-stopped', audioEndMs: e.audio_end_ms, itemId: e.item_id }));
      case 'response.created':
        return this.map(schemas.responseCreated, msg, (e) => ({ type: 'response-started', responseId: e.response.id }));
      case 'response.output_audio.delta':
      case 'response.audio.delta':
        return this.audioDelta(msg);
      case 'response.output_audio.done':
      case 'response.audio.done':
        return this.audioDone(msg);
      case 'response.output_audio_transcript.delta':
      case 'response.audio_transcript.delta':
        return this.map(delta, msg, (e) => ({ type: 'transcript-delta', role: 'assistant', text: e.delta, itemId: e.item_id, responseId: e.response_id }));
      case 'response.output_audio_transcript.done':
      case 'response.audio_transcript.done':
        return this.map(schemas.transcriptDone, msg, (e) => ({ type: 'transcript-done', role: 'assistant', text: e.transcript, itemId: e.item_id, responseId: e.response_id }));
      case 'response.output_text.delta':
      case 'response.text.delta':
        return this.map(delta, msg, (e) => ({ type: 'text-delta', text: e.delta, itemId: e.item_id, responseId: e.response_id }));
      case 'response.output_text.done':
      case 'response.text.done':
        return this.map(schemas.textDone, msg, (e) => ({ type: 'text-done', text: e.text, itemId: e.item_id, responseId: e.response_id }));
      case 'conversation.item.input_audio_transcription.completed':
        return this.map(schemas.userTranscript, msg, (e) => ({ type: 'user-transcript', itemId: e.item_id, text: e.transcript }));
      case 'response.output_item.added':
        return this.map(schemas.itemAdded, msg, (e) => {
          // Beta's arguments.done carries no function name: remember it from the item.
          if (e.item.type === 'function_call' && e.item.call_id && e.item.name) this.callNames.set(e.item.call_id, e.item.name);
          return undefined;
        });
      case 'response.function_call_arguments.done':
        return this.map(schemas.argsDone, msg, (e) =>
          this.functionCall(e.call_id, e.name ?? this.callNames.get(e.call_id) ?? '', e.item_id, e.response_id, e.arguments),
        );
      case 'response.done':
        return this.responseDone(msg);
      case 'conversation.item.truncated':
        return this.map(schemas.truncated, msg, (e) => ({ type: 'truncated', itemId: e.item_id, audioEndMs: e.audio_end_ms }));
      case 'error':
        return this.map(schemas.error, msg, ({ error: e }) => {
          this.counters.errors++;
          const code = e.code ?? e.type ?? 'unknown';
          const retryable = RETRYABLE_TYPES.has(e.type ?? '') || RETRYABLE_CODES.has(e.code ?? '');
          return { type: 'error', code, message: e.message ?? code, retryable, ...(e.param ? { param: e.param } : {}) };
        });
      case 'rate_limits.updated':
        return this.map(schemas.rateLimits, msg, (e) => {
          const limits = e.rate_limits.map((r) => ({ name: r.name, limit: r.limit, remaining: r.remaining, resetSeconds: r.reset_seconds }));
          this.counters.rateLimitUpdates++;
          this.counters.lastRateLimits = limits;
          return { type: 'rate-limits', limits };
        });
      default:
        if (!QUIET.has(msg.type)) this.counters.unknownEvents++;
        return [];
    }
  }

  private map<S extends z.ZodType>(schema: S, msg: unknown, fn: (e: z.output<S>) => RealtimeEvent | RealtimeEvent[] | undefined): RealtimeEvent[] {
    const r = schema.safeParse(msg);
    if (!r.success) {
      this.counters.unknownEvents++;
      return [];
    }
    const out = fn(r.data);
    return out === undefined ? [] : Array.isArray(out) ? out : [out];
  }

  private audioDelta(msg: unknown): RealtimeEvent[] {
    return this.map(delta, msg, (e) => {
      let item = this.audio.get(e.item_id);
      if (!item) {
        item = { decoder: new OutputDecoder(this.outputFormat), bytes: 0, responseId: e.response_id };
        this.audio.set(e.item_id, item);
      }
      const bytes = Buffer.from(e.delta, 'base64');
      item.bytes += bytes.length;
      const ms = item.bytes * this.msPerByte;
      this.counters.audioOutMs += bytes.length * this.msPerByte;
      this.received.set(e.item_id, ms);
      return { type: 'audio', responseId: e.response_id, itemId: e.item_id, contentIndex: e.content_index, receivedMs: ms, ...item.decoder.push(bytes) };
    });
  }

  private audioDone(msg: unknown): RealtimeEvent[] {
    return this.map(schemas.audioDone, msg, (e) => {
      const item = this.audio.get(e.item_id);
      this.audio.delete(e.item_id);
      const receivedMs = this.receivedMs(e.item_id);
      const done: RealtimeEvent = { type: 'audio-done', responseId: e.response_id, itemId: e.item_id, contentIndex: e.content_index, receivedMs };
      if (!item) return done;
      const tail = item.decoder.flush();
      if ((tail.frames?.length ?? 0) + (tail.mulaw?.length ?? 0) === 0) return done;
      return [{ type: 'audio', responseId: e.response_id, itemId: e.item_id, contentIndex: e.content_index, receivedMs, ...tail }, done];
    });
  }

  private functionCall(callId: string, name: string, itemId: string, responseId: string, raw: string): RealtimeEvent | undefined {
    if (this.callsEmitted.has(callId)) return undefined;
    this.callsEmitted.add(callId);
    return { type: 'function-call', callId, name, itemId, responseId, arguments: parseArguments(raw) };
  }

  private responseDone(msg: unknown): RealtimeEvent[] {
    return this.map(schemas.responseDone, msg, ({ response: r }) => {
      const out: RealtimeEvent[] = [];
      // A call whose arguments.done we never saw (it is optional to stream) still gets run.
      for (const o of r.output) {
        if (o.type !== 'function_call' || !o.call_id) continue;
        const call = this.functionCall(o.call_id, o.name ?? this.callNames.get(o.call_id) ?? '', o.id ?? '', r.id, o.arguments ?? '');
        if (call) out.push(call);
      }
      // A cancelled answer's audio never gets its done event: drop what its decoders hold.
      for (const [itemId, item] of this.audio) if (item.responseId === r.id) this.audio.delete(itemId);
      const reason = r.status_details?.reason ?? undefined;
      out.push({ type: 'response-done', responseId: r.id, status: r.status, ...(reason ? { reason } : {}), ...(r.usage ? { usage: r.usage } : {}) });
      return out;
    });
  }
}
