/**
 * finishCall plus a marker on the record saying the post-call work is done, so the sweeper
 * (sweeper.ts) can find the calls still owed it with one query instead of re-running finishCall
 * on every ended call forever. finishCall is idempotent on its own; the marker only saves work.
 *
 * A run with failed steps is not marked finished, so the next sweep tries again, up to
 * MAX_FINISH_ATTEMPTS (then it is marked with its errors: an operator can see why, and a broken
 * webhook URL does not cost a sweep every 15 s forever).
 */
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { Call } from '../../store/repos/calls.ts';
import { iso } from '../../store/json.ts';
import { finishCall, type FinishReport, type PostCallDeps, type PostCallTranscript } from '../post-call/index.ts';
import type { TranscriptEntry } from '../transcript.ts';

export const FINISH_MARKER = 'post_call';
export const MAX_FINISH_ATTEMPTS = 5;

interface Marker {
  attempts?: number;
  finished_at?: string;
  errors?: Record<string, string>;
}

export async function finishAndMark(
  deps: PostCallDeps,
  call: Call,
  assistant: AssistantRecord | null,
  transcript: PostCallTranscript | null,
  recordingPath: string | null | undefined,
): Promise<FinishReport> {
  const report = await finishCall(deps, { callRecord: call, assistant, transcript, recordingPath });
  // Re-read: finishCall wrote cost, evaluation and the webhook marker into the same record.
  const fresh = (await deps.calls.getById(call.id)) ?? call;
  const prev = fresh.details?.[FINISH_MARKER] as Marker | undefined;
  const attempts = (prev?.attempts ?? 0) + 1;
  const failed = Object.keys(report.errors).length > 0;
  const marker: Marker = { attempts };
  if (!failed || attempts >= MAX_FINISH_ATTEMPTS) marker.finished_at = iso(deps.clock.now()) ?? undefined;
  if (failed) marker.errors = report.errors;
  await deps.calls.update(call.id, { details: { ...(fresh.details ?? {}), [FINISH_MARKER]: marker } });
  return report;
}

/**
 * The transcript as the call record keeps it: snake_case like the rest of the API, with each
 * reply's latency parts (the webhook carries the shorter view finishCall builds).
 */
export function recordTranscript(entries: readonly TranscriptEntry[]): Record<string, unknown>[] {
  return [...entries]
    .sort((a, b) => a.startMs - b.startMs)
    .map((e) => ({
      speaker: e.speaker,
      text: e.text,
      start_ms: Math.round(e.startMs),
      end_ms: Math.round(e.endMs),
      ...(e.kind ? { kind: e.kind } : {}),
      ...(e.interrupted ? { interrupted: true, full_text: e.fullText ?? null } : {}),
      ...(e.fillers?.length ? { fillers: e.fillers } : {}),
      ...(e.latency ? { latency: latencyView(e.latency) } : {}),
      ...(e.functionCalls?.length ? { function_calls: e.functionCalls } : {}),
    }));
}

function latencyView(l: NonNullable<TranscriptEntry['latency']>): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (k: string, v: number | undefined): void => {
    if (v !== undefined) out[k] = Math.round(v);
  };
  put('endpointing_ms', l.endpointingMs);
  put('stt_final_ms', l.sttFinalMs);
  put('llm_first_token_ms', l.llmFirstTokenMs);
  put('tts_first_audio_ms', l.ttsFirstAudioMs);
  put('first_frame_out_ms', l.firstFrameOutMs);
  put('total_ms', l.totalMs);
  return out;
}
