/**
 * The seam between a call and its AI engine. `CallMedia` is the part of a CallSession an engine
 * may touch (CallSession satisfies it structurally; VirtualMedia implements it on a manual clock
 * for tests and replays). `startEngine` is the one function the call layer calls to run the
 * pipeline engine for an answered call.
 */
import type { AgentTool, TurnMessage } from '../agent/types.ts';
import type { AudioFrame } from '../audio/frame.ts';
import type { AmbientLibrary } from '../audio/ambient.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { OutboundAudio } from '../media/media-types.ts';
import type { SpeechProviders } from '../providers/registry.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import type { Clock } from '../util/clock.ts';
import { callLogger } from './cascade/deps.ts';
import { runCascade, type CascadeDeps, type CascadeMetrics, type CascadeResult, type EngineLogger } from './cascade/index.ts';
import type { TurnVoice } from './cascade/spoken-turn.ts';
import type { CallSession } from './call-session.ts';
import { recordingPath, type RecordingSink } from './recorder.ts';
import { currentCallTrace } from '../telemetry/call-trace.ts';
import { callPublisher, type LiveFeed } from './live/live-feed.ts';
import type { TranscriptEntry } from './transcript.ts';

export interface DtmfEvent {
  digit: string;
  durationMs: number;
}

/** Why the engine ends a call (a subset of the session's EndCause). */
export type EngineEndCause = 'local-hangup' | 'max-duration' | 'error';

export interface CallMedia {
  /** Caller audio: one 20 ms 16 kHz frame per 20 ms (silence included) until the call ends. */
  readonly inbound: AsyncIterable<AudioFrame>;
  readonly outbound: OutboundAudio;
  sendDtmf(digits: string): Promise<void>;
  on(event: 'dtmf', fn: (e: DtmfEvent) => void): unknown;
  off(event: 'dtmf', fn: (e: DtmfEvent) => void): unknown;
  /** Hang up (BYE). Idempotent; `inbound` ends afterwards. */
  close(cause: EngineEndCause): Promise<void>;
}

/** What `startEngine` needs from the composition root (a subset of AppContext plus models). */
export interface EngineContext {
  clock: Clock;
  logger: EngineLogger;
  catalog: Pick<Catalog, 'voice' | 'language' | 'synthesizerProvider' | 'transcriberProvider' | 'defaultTranscriberFor'>;
  speech: Pick<SpeechProviders, 'synthesizer' | 'transcriber'>;
  /** `new Agent(agentDeps(ctx, llm))`. */
  agent: CascadeDeps['agent'];
  vad: CascadeDeps['vad'];
  denoiser?: CascadeDeps['denoiser'];
  ambient?: AmbientLibrary;
  /** SWITCHBOARD_DATA_DIR: recordings go to <dataDir>/recordings/<call uuid>.wav. */
  dataDir?: string;
  metrics?: CascadeMetrics;
  /** The offline voice for apologies when the assistant's TTS is down. */
  fallbackVoice?: TurnVoice;
  /** Live calls' transcript lines and timeline events, for watchers (GET /user/calls/events). */
  live?: LiveFeed;
}

export class EngineSetupError extends Error {}

/** The engine's timeline and transcript lines go to the live feed as they happen (when there is one). */
export function livePublishing(feed: LiveFeed | undefined, session: Pick<CallSession, 'accountId' | 'recordId' | 'uuid'>) {
  const live = callPublisher(feed, session);
  if (!live) return {};
  return {
    onEvent: (event: { type: string; atMs: number }) => live.timeline(event),
    onTranscript: (entry: TranscriptEntry) => live.transcript(entry),
  };
}

/** Catalog ids on the assistant → the providers and voice options of one call. */
export function resolveSpeech(assistant: Pick<AssistantRecord, 'id' | 'accountId' | 'config'>, ctx: Pick<EngineContext, 'catalog' | 'speech'>): Pick<CascadeDeps, 'voice' | 'stt' | 'language'> {
  const c = assistant.config;
  const voice = ctx.catalog.voice(c.voice_id, assistant.accountId);
  const synthId = c.synthesizer_provider_id ?? voice?.synthesizer_provider_id ?? undefined;
  const synth = synthId != null ? ctx.catalog.synthesizerProvider(synthId) : undefined;
  const trans =
    c.transcriber_provider_id != null ? ctx.catalog.transcriberProvider(c.transcriber_provider_id) : ctx.catalog.defaultTranscriberFor(c.language_id);
  if (!voice || !synth) throw new EngineSetupError(`assistant ${assistant.id}: voice ${c.voice_id} has no synthesizer`);
  if (!trans) throw new EngineSetupError(`assistant ${assistant.id}: no transcriber for a pipeline call`);
  const language = ctx.catalog.language(c.language_id)?.code ?? 'en-US';
  return {
    voice: {
      provider: ctx.speech.synthesizer(synth),
      voice: voice.provider_voice,
      options: {
        speed: c.speech_speed,
        stability: c.voice_stability,
        similarity: c.voice_similarity,
        emotion: c.tts_emotion_enabled,
        language,
      },
    },
    stt: ctx.speech.transcriber(trans),
    language,
  };
}

/**
 * Run the pipeline engine on an answered call; resolves when the call is over (hung up by
 * either side). The result carries the transcript, timeline and recording for the call record,
 * post-call evaluation and webhooks.
 */
export async function startEngine(
  session: CallSession,
  assistant: AssistantRecord,
  ctx: EngineContext,
  callVariables?: Record<string, unknown>,
  signal?: AbortSignal,
  control?: {
    media?: CallMedia;
    voiceTools?: AgentTool[];
    recording?: RecordingSink;
    /** Call control: the conversation so far (an earlier assistant's) and a live view of this run's. */
    history?: readonly TurnMessage[];
    onHistory?: (history: readonly TurnMessage[]) => void;
  },
): Promise<CascadeResult> {
  if (assistant.mode !== 'pipeline') throw new EngineSetupError(`assistant ${assistant.id} is ${assistant.mode}, not pipeline`);
  // The session's inbound ends when the call does (either side): that is the engine's stop
  // signal. The AbortSignal is for the owner to stop it early (drain on shutdown). Under call
  // control (src/call/control) the engine gets the conductor's view of the session instead,
  // which can end without a BYE (transfer, assistant swap), and the call's voice tools.
  const media: CallMedia = control?.media ?? session;
  const trace = currentCallTrace();
  const deps: CascadeDeps = {
    clock: ctx.clock,
    logger: callLogger(ctx.logger, session.uuid),
    agent: ctx.agent,
    ...resolveSpeech(assistant, ctx),
    vad: ctx.vad,
    ...(ctx.denoiser ? { denoiser: ctx.denoiser } : {}),
    ...(ctx.ambient ? { ambient: ctx.ambient } : {}),
    ...(ctx.metrics ? { metrics: ctx.metrics } : {}),
    ...(ctx.fallbackVoice ? { fallbackVoice: ctx.fallbackVoice } : {}),
    onFailure: (failure, fatal) => session.reportFailure(failure, fatal),
    ...(control?.voiceTools ? { voiceTools: control.voiceTools } : {}),
    ...(control?.history ? { history: control.history } : {}),
    ...(control?.onHistory ? { onHistory: control.onHistory } : {}),
    ...(trace ? { trace } : {}),
    ...livePublishing(ctx.live, session),
    // A call-level recording (the call runner's, across assistant swaps) is saved by its owner.
    ...(control?.recording
      ? { recording: control.recording }
      : ctx.dataDir && assistant.config.record
        ? { recordingPath: recordingPath(ctx.dataDir, session.uuid) }
        : {}),
  };
  return runCascade(media, deps, assistant, callVariables, signal ?? new AbortController().signal);
}
