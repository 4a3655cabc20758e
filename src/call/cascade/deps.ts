/**
 * What a pipeline call needs from outside, all injected: the clock, the agent, the speech
 * providers already chosen for the assistant, the shared VAD/denoiser models and ambient beds.
 * Production builds it in `startEngine` (src/call/engine.ts); tests and the replay build it from
 * stand-ins on a virtual clock.
 */
import type { AgentTool, TurnInput, TurnMessage, TurnResult } from '../../agent/types.ts';
import type { AmbientLibrary } from '../../audio/ambient.ts';
import type { SpeechDetectorOptions } from '../../audio/vad/detector.ts';
import type { SttProvider } from '../../providers/stt/types.ts';
import type { Clock } from '../../util/clock.ts';
import type { FailureListener } from '../failures.ts';
import type { RecordingSink } from '../recorder.ts';
import type { EndOfTurnClassifier } from '../turn-taking.ts';
import type { DenoiserFactory, VadFactory } from './listener.ts';
import type { CascadeMetrics } from './metrics.ts';
import type { TurnVoice } from './spoken-turn.ts';
import type { TimelineListener } from './timeline.ts';
import type { TranscriptEntry } from '../transcript.ts';
import type { WorkTracker } from './work.ts';
import type { TurnTracer } from '../../telemetry/call-trace.ts';

export interface EngineLogger {
  /** Turn-level lines (caller turns, replies with their latency); optional for stand-in loggers. */
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** `logger` with the call's uuid on every line (`call`, as CallSession.log has it). */
export function callLogger(logger: EngineLogger, uuid: string): EngineLogger {
  const maybeChild = (logger as { child?: (b: object) => EngineLogger }).child;
  if (typeof maybeChild === 'function') return maybeChild.call(logger, { call: uuid });
  return {
    debug: (o, m) => logger.debug?.({ call: uuid, ...o }, m),
    info: (o, m) => logger.info({ call: uuid, ...o }, m),
    warn: (o, m) => logger.warn({ call: uuid, ...o }, m),
    error: (o, m) => logger.error({ call: uuid, ...o }, m),
  };
}

export interface CascadeDeps {
  clock: Clock;
  /** `new Agent(agentDeps)` in production; anything with the same runTurn in tests. */
  agent: { runTurn(input: TurnInput): Promise<TurnResult> };
  voice: TurnVoice;
  /** Speaks the apology when `voice` itself failed (the offline Flite voice). */
  fallbackVoice?: TurnVoice;
  stt: SttProvider;
  /** BCP 47 tag (`en-US`) for STT and filler phrases. */
  language: string;
  vad: VadFactory;
  /**
   * The shared denoiser backend (spectral or RNNoise); used when the assistant enables noise
   * cancellation. In-thread backends answer each frame synchronously, the engine's worker-backed
   * one (src/audio/denoise-worker.ts) with a promise.
   */
  denoiser?: DenoiserFactory;
  ambient?: AmbientLibrary;
  /** Optional semantic end-of-turn model for endpoint_type `ai` (the heuristic runs without). */
  classifier?: EndOfTurnClassifier;
  work?: WorkTracker;
  logger?: EngineLogger;
  metrics?: CascadeMetrics;
  /** Where to write the stereo recording when the assistant has `record` on. */
  recordingPath?: string;
  /**
   * The call's recording, kept across engine runs by the call runner (src/call/call-recording.ts);
   * when given, the run writes into it instead of keeping (and saving) one of its own.
   */
  recording?: RecordingSink;
  random?: () => number;
  detector?: SpeechDetectorOptions;
  leadFrames?: number;
  /** Caller audio per write to the STT stream, ms (whole frames; default DEFAULT_STT_CHUNK_MS, 80). */
  sttChunkMs?: number;
  timeouts?: { llmFirstTokenMs?: number; ttsFirstFrameMs?: number; sttFinalWaitMs?: number };
  onEvent?: TimelineListener;
  /** Each transcript line as it is added (the live call feed). */
  onTranscript?: (entry: TranscriptEntry) => void;
  /** The call's trace (tracing on): turn spans from the timeline, the turn's work in its span. */
  trace?: TurnTracer;
  /** A provider failed (logged and, when fatal, kept for the call record by the session). */
  onFailure?: FailureListener;
  /**
   * The call's voice built-ins (src/call/tools buildVoiceTools over a live CallControl), given
   * to the agent as extraTools; without them only the engine's own end_call is offered.
   */
  voiceTools?: AgentTool[];
  // ---- call control (src/call/control): one conversation across assistant swaps ----
  /** The conversation before this engine run (an earlier assistant of the same call): the agent sees it first. */
  history?: readonly TurnMessage[];
  /** Given the call's live history once, at start (read for a warm transfer's briefing and at a swap). */
  onHistory?: (history: readonly TurnMessage[]) => void;
}
