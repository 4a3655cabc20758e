/**
 * The realtime engine (multimodal and dualplex assistants): `runRealtime` runs one call on a media
 * seam and resolves when it is over, with the same result shape as the pipeline (transcript,
 * history, endedBy, recording), so the call layer's post-call work (billing, evaluation,
 * webhook: src/call/post-call/finishCall) treats both modes alike. `startRealtimeEngine` is the
 * call layer's entry, the counterpart of `startEngine` (src/call/engine.ts).
 *
 * Shared with the pipeline: CallRules (rules.ts, via callRulesOptions), Transcript, StereoRecorder,
 * heardText, SentenceSplitter, the agent's prompt and tools. Not yet shared: cascade/'s Speaker
 * and its settings/phrases have realtime twins here (player.ts, settings.ts) until cascade/ is
 * finished and the common parts can move to one module.
 */
import { callLogger } from '../cascade/deps.ts';
import type { AgentDeps, AgentTool, TurnMessage } from '../../agent/types.ts';
import type { Catalog } from '../../catalog/catalog.ts';
import type { RealtimeProvider, RealtimeSessionConfig } from '../../providers/realtime/realtime.ts';
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { Clock } from '../../util/clock.ts';
import type { EngineLogger } from '../cascade/deps.ts';
import type { WorkTracker } from '../cascade/work.ts';
import type { CascadeMetrics } from '../cascade/metrics.ts';
import type { CallSession } from '../call-session.ts';
import { EngineSetupError, livePublishing, type CallMedia, type EngineContext } from '../engine.ts';
import { recordingPath, type RecordingSink } from '../recorder.ts';
import type { TranscriptEntry } from '../transcript.ts';
import type { FailureListener } from '../failures.ts';
import { realtimeFunctionTools, type FallbackAgent, type ToolSources } from './function-calls.ts';
import { RealtimeCall } from './realtime-call.ts';
import { audioFormatFor, realtimeSettings, realtimeTools, sessionConfig, type RealtimeAssistant } from './settings.ts';
import type { RealtimeCallCounters, RealtimeTimelineEvent, RealtimeTimelineListener } from './timeline.ts';
import type { TtsVoice } from './tts-utterance.ts';

export type { RealtimeAssistant } from './settings.ts';
export type { RealtimeCallCounters, RealtimeTimelineEvent } from './timeline.ts';
export type { TtsVoice } from './tts-utterance.ts';

export interface RealtimeEngineDeps {
  clock: Clock;
  provider: RealtimeProvider;
  /** The vendor's model name (catalog multimodal model's `model`). */
  model: string;
  apiKey: string;
  baseUrl?: string;
  /** multimodal: the model's own voice (the catalog voice's `provider_voice`). */
  modelVoice?: string;
  /** dualplex: the assistant's TTS voice. */
  voice?: TtsVoice;
  /** The offline voice for the apology when the model cannot be reached. */
  fallbackVoice?: TtsVoice;
  /** BCP 47 tag of the assistant's language, for the engine's own lines (default English). */
  language?: string;
  tools?: ToolSources;
  /** Text agent for chat_llm_fallback_id; also the one that runs its tools. */
  fallbackAgent?: FallbackAgent;
  /** Caller transcription by the model; default gpt-4o-mini-transcribe, null turns it off. */
  inputTranscription?: RealtimeSessionConfig['inputTranscription'] | null;
  languageName?: (id: number) => string | undefined;
  connectAttempts?: number;
  work?: WorkTracker;
  logger?: EngineLogger;
  leadFrames?: number;
  recordingPath?: string;
  /** The call's recording across engine runs (then `recordingPath` is not used: its owner saves it). */
  recording?: RecordingSink;
  onEvent?: RealtimeTimelineListener;
  /** Each transcript line as it is added (the live call feed). */
  onTranscript?: (entry: TranscriptEntry) => void;
  onFailure?: FailureListener;
  /** /metrics counters shared with the pipeline (barge-ins in `switchboard_interruptions_total`). */
  metrics?: Pick<CascadeMetrics, 'interruptions'>;
  /** Call control: the conversation before this run, and a live view of it (see RealtimeDeps). */
  history?: readonly TurnMessage[];
  onHistory?: (history: readonly TurnMessage[]) => void;
}

export interface RealtimeResult {
  transcript: TranscriptEntry[];
  timeline: RealtimeTimelineEvent[];
  history: TurnMessage[];
  endedBy: string;
  recording?: { path: string | undefined; durationMs: number; wav: () => Buffer };
  counters: RealtimeCallCounters;
}

export const DEFAULT_INPUT_TRANSCRIPTION = { model: 'gpt-4o-mini-transcribe' };

export async function runRealtime(
  media: CallMedia,
  deps: RealtimeEngineDeps,
  assistant: RealtimeAssistant,
  callVariables: Record<string, unknown> | undefined,
  signal: AbortSignal,
): Promise<RealtimeResult> {
  const settings = realtimeSettings(assistant, callVariables, deps.languageName);
  if (settings.mode === 'dualplex' && !deps.voice) throw new EngineSetupError(`assistant ${assistant.id}: dualplex needs a TTS voice`);
  const track = deps.work ?? { track: <T>(p: Promise<T>) => p };
  const tools = await track.track(realtimeFunctionTools(assistant, settings, deps.tools ?? {}));
  const transcription = deps.inputTranscription === undefined ? DEFAULT_INPUT_TRANSCRIPTION : deps.inputTranscription;
  const session = sessionConfig(settings, {
    voice: deps.modelVoice,
    tools: realtimeTools(tools.values()),
    audioFormat: audioFormatFor(media.outbound, deps.provider.capabilities.audioFormats),
    ...(transcription ? { inputTranscription: transcription } : {}),
  });
  const extraTools: AgentTool[] = deps.tools?.extraTools ?? [];
  const call = new RealtimeCall(
    media,
    {
      clock: deps.clock,
      provider: deps.provider,
      model: deps.model,
      apiKey: deps.apiKey,
      ...(deps.baseUrl ? { baseUrl: deps.baseUrl } : {}),
      session,
      tools,
      ...(deps.voice ? { voice: deps.voice } : {}),
      ...(deps.fallbackVoice ? { fallbackVoice: deps.fallbackVoice } : {}),
      ...(deps.language ? { language: deps.language } : {}),
      ...(deps.fallbackAgent ? { fallbackAgent: deps.fallbackAgent, fallbackExtraTools: extraTools } : {}),
      ...(deps.connectAttempts !== undefined ? { connectAttempts: deps.connectAttempts } : {}),
      ...(deps.work ? { work: deps.work } : {}),
      ...(deps.logger ? { logger: deps.logger } : {}),
      ...(deps.leadFrames !== undefined ? { leadFrames: deps.leadFrames } : {}),
      ...(deps.onEvent ? { onEvent: deps.onEvent } : {}),
      ...(deps.onTranscript ? { onTranscript: deps.onTranscript } : {}),
      ...(deps.onFailure ? { onFailure: deps.onFailure } : {}),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ...(deps.recording ? { recording: deps.recording } : {}),
      ...(deps.history ? { history: deps.history } : {}),
      ...(deps.onHistory ? { onHistory: deps.onHistory } : {}),
    },
    assistant,
    settings,
    signal,
  );
  await call.run();
  const result: RealtimeResult = {
    transcript: call.conversation.transcript.toJSON(),
    timeline: call.timeline,
    history: call.conversation.history,
    endedBy: call.endedBy ?? 'caller-hangup',
    counters: call.counters,
  };
  const rec = call.recorder;
  if (rec) {
    if (deps.recordingPath) await track.track(rec.save(deps.recordingPath));
    result.recording = { path: deps.recordingPath, durationMs: rec.durationMs, wav: () => rec.toWav() };
  }
  return result;
}

/** What `startRealtimeEngine` needs beyond the pipeline's EngineContext. */
export interface RealtimeEngineContext extends Omit<EngineContext, 'catalog'> {
  catalog: Pick<Catalog, 'voice' | 'language' | 'synthesizerProvider' | 'multimodalModel'>;
  realtime: { provider: RealtimeProvider; apiKey: string; baseUrl?: string };
  /** Custom tools and knowledge search (as the agent resolves them). */
  agentDeps?: AgentDeps;
  /** Voice built-ins of this call (transfer, DTMF...), built by the call layer. */
  voiceTools?: AgentTool[];
  languageName?: (id: number) => string | undefined;
}

/**
 * Run a multimodal or dualplex assistant on an answered call; resolves when the call is over.
 * The result feeds the call record and finishCall exactly as the pipeline's does.
 */
export async function startRealtimeEngine(
  session: CallSession,
  assistant: AssistantRecord,
  ctx: RealtimeEngineContext,
  callVariables?: Record<string, unknown>,
  control?: {
    media?: CallMedia;
    voiceTools?: AgentTool[];
    signal?: AbortSignal;
    recording?: RecordingSink;
    /** Call control: the conversation so far (an earlier assistant's) and a live view of this run's. */
    history?: readonly TurnMessage[];
    onHistory?: (history: readonly TurnMessage[]) => void;
  },
): Promise<RealtimeResult> {
  // Under call control (src/call/control) the engine runs on the conductor's view of the session
  // (which can end without a BYE: transfer, assistant swap) with the call's voice tools.
  const voiceTools = control?.voiceTools ?? ctx.voiceTools;
  const c = assistant.config;
  const model = c.multimodal_model_id != null ? ctx.catalog.multimodalModel(c.multimodal_model_id) : undefined;
  if (!model) throw new EngineSetupError(`assistant ${assistant.id}: multimodal model ${String(c.multimodal_model_id)} is not in the catalog`);
  const voice = ctx.catalog.voice(c.voice_id, assistant.accountId);
  if (!voice) throw new EngineSetupError(`assistant ${assistant.id}: voice ${c.voice_id} not found`);
  const language = ctx.catalog.language(c.language_id)?.code ?? 'en-US';
  const deps: RealtimeEngineDeps = {
    clock: ctx.clock,
    provider: ctx.realtime.provider,
    model: model.model,
    apiKey: ctx.realtime.apiKey,
    ...(ctx.realtime.baseUrl ? { baseUrl: ctx.realtime.baseUrl } : {}),
    logger: callLogger(ctx.logger, session.uuid),
    onFailure: (failure, fatal) => session.reportFailure(failure, fatal),
    ...(ctx.metrics ? { metrics: ctx.metrics } : {}),
    language,
    inputTranscription: { ...DEFAULT_INPUT_TRANSCRIPTION, language: language.split('-')[0]! },
    tools: { ...(ctx.agentDeps ? { agentDeps: ctx.agentDeps } : {}), ...(voiceTools ? { extraTools: voiceTools } : {}) },
    fallbackAgent: ctx.agent,
    ...(ctx.fallbackVoice ? { fallbackVoice: ctx.fallbackVoice } : {}),
    ...(ctx.languageName ? { languageName: ctx.languageName } : {}),
    ...(control?.recording
      ? { recording: control.recording }
      : ctx.dataDir && c.record
        ? { recordingPath: recordingPath(ctx.dataDir, session.uuid) }
        : {}),
    ...(control?.history ? { history: control.history } : {}),
    ...(control?.onHistory ? { onHistory: control.onHistory } : {}),
    ...livePublishing(ctx.live, session),
  };
  if (assistant.mode === 'multimodal') {
    deps.modelVoice = voice.provider_voice;
  } else if (assistant.mode === 'dualplex') {
    const synthId = c.synthesizer_provider_id ?? voice.synthesizer_provider_id;
    const synth = synthId != null ? ctx.catalog.synthesizerProvider(synthId) : undefined;
    if (!synth) throw new EngineSetupError(`assistant ${assistant.id}: voice ${c.voice_id} has no synthesizer for dualplex`);
    deps.voice = {
      provider: ctx.speech.synthesizer(synth),
      voice: voice.provider_voice,
      options: { speed: c.speech_speed, stability: c.voice_stability, similarity: c.voice_similarity, emotion: c.tts_emotion_enabled, language },
    };
  } else {
    throw new EngineSetupError(`assistant ${assistant.id} is ${assistant.mode}, not multimodal or dualplex`);
  }
  const ctl = new AbortController();
  const onEnded = (): void => ctl.abort(new Error('call ended'));
  session.once('ended', onEnded);
  const owner = control?.signal;
  const onOwner = (): void => ctl.abort(owner?.reason);
  if (owner?.aborted) onOwner();
  else owner?.addEventListener('abort', onOwner, { once: true });
  try {
    return await runRealtime(control?.media ?? session, deps, assistant, callVariables, ctl.signal);
  } finally {
    session.off('ended', onEnded);
    owner?.removeEventListener('abort', onOwner);
  }
}
