/**
 * What one realtime call needs from outside, all injected: the clock, the model connection
 * details, the session already built from the assistant, the tools, and the voices. Built by
 * `runRealtime` (index.ts) from the engine context; tests build it around the stand-in.
 */
import type { FailureListener } from '../failures.ts';
import type { AgentTool, TurnMessage } from '../../agent/types.ts';
import type { RealtimeProvider, RealtimeSessionConfig } from '../../providers/realtime/realtime.ts';
import type { Clock } from '../../util/clock.ts';
import type { RecordingSink } from '../recorder.ts';
import type { EngineLogger } from '../cascade/deps.ts';
import type { CascadeMetrics } from '../cascade/metrics.ts';
import type { WorkTracker } from '../cascade/work.ts';
import type { FallbackAgent } from './function-calls.ts';
import type { RealtimeTimelineListener } from './timeline.ts';
import type { TranscriptEntry } from '../transcript.ts';
import type { TtsVoice } from './tts-utterance.ts';

export interface RealtimeDeps {
  clock: Clock;
  provider: RealtimeProvider;
  model: string;
  apiKey: string;
  baseUrl?: string;
  /** Built by `sessionConfig` (settings.ts): instructions, voice, turn detection, tools. */
  session: RealtimeSessionConfig;
  /** The functions offered in `session.tools`, by name. */
  tools: ReadonlyMap<string, AgentTool>;
  /** dualplex: the assistant's TTS voice (synthesizer, speech_speed...). */
  voice?: TtsVoice;
  /** Speaks the apology when the model is gone (the offline Flite voice). */
  fallbackVoice?: TtsVoice;
  /** BCP 47 tag of the assistant's language, for the engine's own lines (spoken-lines.ts). */
  language?: string;
  /** Text agent for chat_llm_fallback_id (tool-heavy turns). */
  fallbackAgent?: FallbackAgent;
  /** Voice built-ins handed to the fallback agent (it builds custom/KB tools itself). */
  fallbackExtraTools?: AgentTool[];
  /** Connection attempts per (re)connect; default 2. */
  connectAttempts?: number;
  work?: WorkTracker;
  logger?: EngineLogger;
  leadFrames?: number;
  onEvent?: RealtimeTimelineListener;
  /** Each transcript line as it is added (the live call feed). */
  onTranscript?: (entry: TranscriptEntry) => void;
  /** A provider failed (logged and, when fatal, kept for the call record by the session). */
  onFailure?: FailureListener;
  /** The engine's /metrics counters shared with the pipeline: barge-ins count in `switchboard_interruptions_total`. */
  metrics?: Pick<CascadeMetrics, 'interruptions'>;
  /** The call's recording (one per call, across engine runs); without it `record` keeps one for this run. */
  recording?: RecordingSink;
  // ---- call control (src/call/control): one conversation across assistant swaps ----
  /** The conversation before this engine run: the model gets it as conversation items on connect. */
  history?: readonly TurnMessage[];
  /** Given the call's live history once, at start (read for a warm transfer's briefing and at a swap). */
  onHistory?: (history: readonly TurnMessage[]) => void;
}
