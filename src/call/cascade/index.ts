/**
 * The pipeline engine (VAD → STT → agent → TTS): `runCascade` runs one call on a media seam and
 * resolves when the call is over, with its transcript, timeline and recording.
 */
import type { CallMedia } from '../engine.ts';
import type { TranscriptEntry } from '../transcript.ts';
import { CascadeCall } from './cascade-call.ts';
import type { CascadeDeps } from './deps.ts';
import type { CascadeAssistant } from './options.ts';
import type { TimelineEvent } from './timeline.ts';

export type { CascadeDeps, EngineLogger } from './deps.ts';
export type { CascadeAssistant } from './options.ts';
export type { TimelineEvent } from './timeline.ts';
export { createCascadeMetrics, type CascadeMetrics } from './metrics.ts';

export interface CascadeResult {
  transcript: TranscriptEntry[];
  timeline: TimelineEvent[];
  history: { role: 'user' | 'assistant'; content: string }[];
  /** Who ended the call: `caller-hangup`, `end-call-tool`, `initial-silence`, `max-duration`, … */
  endedBy: string;
  /** Set when `record` is on: the stereo WAV written (caller left, assistant right). */
  recording?: { path: string | undefined; durationMs: number; wav: () => Buffer };
}

export async function runCascade(
  media: CallMedia,
  deps: CascadeDeps,
  assistant: CascadeAssistant,
  callVariables: Record<string, unknown> | undefined,
  signal: AbortSignal,
): Promise<CascadeResult> {
  const call = new CascadeCall(media, deps, assistant, callVariables, signal);
  await call.run();
  const result: CascadeResult = {
    transcript: call.transcript.toJSON(),
    timeline: call.timeline,
    history: call.history,
    endedBy: call.endedBy ?? 'caller-hangup',
  };
  const rec = call.recorder;
  if (rec) {
    if (deps.recordingPath) await (deps.work ?? { track: <T>(p: Promise<T>) => p }).track(rec.save(deps.recordingPath));
    result.recording = { path: deps.recordingPath, durationMs: rec.durationMs, wav: () => rec.toWav() };
  }
  return result;
}
