/**
 * The shapes the calls pages read from the API: GET /user/calls(/:id) and the call tape
 * (GET /user/calls/:id/tape, docs/CALL-TAPE.md). Only what the pages use is typed.
 */

export interface TurnLatencyView {
  endpointing_ms?: number;
  stt_final_ms?: number;
  llm_first_token_ms?: number;
  tts_first_audio_ms?: number;
  first_frame_out_ms?: number;
  total_ms?: number;
}

export interface TranscriptLine {
  speaker: 'caller' | 'assistant';
  text: string;
  /** ms from the call's first engine run (the tape's first `engine-run`). */
  start_ms: number;
  end_ms: number;
  kind?: string;
  interrupted?: boolean;
  full_text?: string | null;
  fillers?: string[];
  latency?: TurnLatencyView;
  function_calls?: { name: string; arguments?: Record<string, unknown>; result?: Record<string, unknown> }[];
}

export interface CallView {
  id: number;
  uuid: string;
  direction: 'inbound' | 'outbound';
  status: string;
  assistant_id: number | null;
  campaign_id: number | null;
  from_number: string;
  to_number: string;
  started_at: string;
  answered_at: string | null;
  ended_at: string | null;
  duration_seconds: number | null;
  codec: string | null;
  end_cause: string | null;
  quality: Record<string, unknown> | null;
  transcript: TranscriptLine[];
  evaluation: Record<string, unknown> | null;
  recording_url: string | null;
  tape_url: string | null;
  cost: number;
}

export interface TapeEventView {
  atMs: number;
  type: string;
  [k: string]: unknown;
}

/** The parts of a call tape the pages read (packets are not used). */
export interface TapeView {
  startedAtMs: number;
  endedAtMs: number | null;
  truncated: boolean;
  events: TapeEventView[];
  timeline?: TapeEventView[];
}

export interface CallWebhookView {
  id: number;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_response_code: number | null;
  last_error: string | null;
  destination: string;
  created_at: string;
  delivered_at: string | null;
  next_attempt_at: string | null;
}

/** Statuses of a call still going on. */
export const LIVE_STATUSES = ['initiated', 'queued', 'ringing', 'in-progress'] as const;

export function isLive(status: string): boolean {
  return (LIVE_STATUSES as readonly string[]).includes(status);
}

/** Where the transcript's zero is on the recording's timeline (ms from answer). */
export function transcriptZeroMs(tape: Pick<TapeView, 'events'> | null | undefined): number {
  return tape?.events.find((e) => e.type === 'engine-run')?.atMs ?? 0;
}
