/**
 * What happened in a realtime call, in ms from answer: facts the engine acted on, for tests, the
 * replay CLI and logs. Event names the pipeline also has (src/call/cascade/timeline.ts) mean the
 * same thing here, so one reader handles both.
 */
import type { AssistantTurnKind } from '../transcript.ts';

export type RealtimeTimelineEvent =
  | { type: 'answer'; atMs: number }
  | { type: 'model-connected'; atMs: number; connection: number }
  | { type: 'model-lost'; atMs: number; code: number; reason: string; retryable: boolean }
  | { type: 'model-error'; atMs: number; code: string; message: string }
  | { type: 'rate-limited'; atMs: number; names: string[] }
  /** The model's server VAD heard the caller start / stop (`atMs` when the engine learned it). */
  | { type: 'vad-speech-start'; atMs: number; audioStartMs: number }
  | { type: 'vad-speech-end'; atMs: number; audioEndMs: number }
  | { type: 'turn-start'; atMs: number; responseId: string; kind: AssistantTurnKind }
  | { type: 'assistant-audio-start'; atMs: number; key: string; kind: AssistantTurnKind }
  | { type: 'assistant-audio-stop'; atMs: number; key: string; kind: AssistantTurnKind; interrupted: boolean }
  /** Barge-in: the outbound queue was flushed at `atMs`; `sentMs` of the utterance had gone out. */
  | { type: 'interruption'; atMs: number; key: string; sentMs: number; heard: string }
  | { type: 'truncate'; atMs: number; itemId: string; audioEndMs: number }
  /** Dualplex barge-in: the model's text item replaced by the words the caller heard. */
  | { type: 'item-replaced'; atMs: number; itemId: string; heard: string }
  | { type: 'response-cancel'; atMs: number; responseId: string }
  | { type: 'function-call'; atMs: number; name: string; callId: string; ok: boolean; via: 'engine' | 'fallback-llm' }
  | { type: 'reengagement'; atMs: number; count: number; covering: 'silence' | 'tool' }
  | { type: 'dtmf'; atMs: number; digit: string }
  | { type: 'hang-up'; atMs: number; reason: string };

export type RealtimeTimelineListener = (event: RealtimeTimelineEvent) => void;

/** Per-call tallies: model errors and rate limits are logged and counted. */
export interface RealtimeCallCounters {
  modelErrors: number;
  rateLimitUpdates: number;
  /** Updates that showed a limit exhausted (remaining 0). */
  rateLimited: number;
  reconnects: number;
  functionCalls: number;
  interruptions: number;
}

export function newCounters(): RealtimeCallCounters {
  return { modelErrors: 0, rateLimitUpdates: 0, rateLimited: 0, reconnects: 0, functionCalls: 0, interruptions: 0 };
}

/** An `error` or `rate-limits` event from the model: counted, and what to log and record. */
export function modelTrouble(
  ev: { type: 'error'; code: string; message: string } | { type: 'rate-limits'; limits: { name: string; remaining?: number }[] },
  counters: RealtimeCallCounters,
  atMs: number,
): RealtimeTimelineEvent | undefined {
  if (ev.type === 'error') {
    counters.modelErrors++;
    return { type: 'model-error', atMs, code: ev.code, message: ev.message };
  }
  counters.rateLimitUpdates++;
  const out = ev.limits.filter((l) => l.remaining === 0).map((l) => l.name);
  if (out.length === 0) return undefined;
  counters.rateLimited++;
  return { type: 'rate-limited', atMs, names: out };
}
