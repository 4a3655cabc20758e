/**
 * The assistant's fields (snake_case, spec units) → what a realtime call runs with: the model's
 * session (instructions, voice, turn detection, tools) and the same call-rule options the
 * pipeline reads. Pure, so a replay of an assistant JSON and a live call read fields alike.
 *
 * Rules go through `callRulesOptions` (src/call/rules.ts), the pipeline's own mapping: there is
 * one set of rules for every mode.
 */
import type { AssistantConfig } from '../../assistants/config.ts';
import { buildSystemPrompt } from '../../agent/prompt.ts';
import { fillTemplate, mergeVariables } from '../../agent/template.ts';
import type { AgentAssistant, AgentTool } from '../../agent/types.ts';
import type { RealtimeAudioFormat, RealtimeSessionConfig, RealtimeTool, RealtimeTurnDetection } from '../../providers/realtime/realtime.ts';
import { callRulesOptions, type CallRulesOptions } from '../rules.ts';

/** What the engine reads; an AssistantRecord satisfies it, and so does a replay's JSON file. */
export interface RealtimeAssistant extends AgentAssistant {
  config: Partial<AssistantConfig> & AgentAssistant['config'];
}

export type RealtimeMode = 'multimodal' | 'dualplex';

export interface RealtimeSettings {
  mode: RealtimeMode;
  initialMessage: string;
  waitForCustomer: boolean;
  rules: CallRulesOptions;
  record: boolean;
  variables: Record<string, unknown>;
  instructions: string;
  turnDetection: RealtimeTurnDetection;
  temperature: number | undefined;
  /** The end_call built-in, when configured (the description the model reads). */
  endCallTool: { description: string } | undefined;
  fill(text: string): string;
}

export function realtimeMode(mode: string): RealtimeMode {
  if (mode === 'multimodal' || mode === 'dualplex') return mode;
  throw new RangeError(`the realtime engine runs multimodal or dualplex assistants, not ${mode}`);
}

export function realtimeSettings(
  assistant: RealtimeAssistant,
  callVariables?: Record<string, unknown> | null,
  languageName?: (id: number) => string | undefined,
): RealtimeSettings {
  const c = assistant.config;
  const variables = mergeVariables(c.variables, callVariables);
  const fill = (text: string): string => fillTemplate(text, variables);
  const endCall = (c.tools ?? []).find((t) => t.type === 'end_call');
  const endCallData = endCall?.data as { description?: unknown } | undefined;
  const kbSearch = c.knowledgebase_id != null;
  return {
    mode: realtimeMode(assistant.mode),
    initialMessage: fill(c.initial_message ?? '').trim(),
    waitForCustomer: c.wait_for_customer ?? false,
    rules: callRulesOptions({
      max_duration: c.max_duration,
      max_silence_duration: c.max_silence_duration,
      reengagement_interval: c.reengagement_interval,
      reengagement_prompt: c.reengagement_prompt ? fill(c.reengagement_prompt) : null,
      max_initial_silence_duration: c.max_initial_silence_duration,
    }),
    record: c.record ?? false,
    variables,
    instructions: buildSystemPrompt({ config: c, variables, channel: 'voice', languageName, searchOffered: kbSearch }),
    turnDetection: turnDetectionFor(c.turn_detection_threshold),
    temperature: c.llm_temperature ?? undefined,
    endCallTool: endCall ? { description: typeof endCallData?.description === 'string' ? endCallData.description : '' } : undefined,
    fill,
  };
}

/**
 * turn_detection_threshold → the model's server VAD. Unset leaves the vendor's own (automatic)
 * threshold. The model opens a response at the end of each caller turn, but never cancels one on
 * its own: interruptions are always on and the engine cancels, flushes and truncates itself, so
 * the cancel, the flush and the truncation position all come from one decision.
 */
export function turnDetectionFor(threshold: number | null | undefined): RealtimeTurnDetection {
  const td: RealtimeTurnDetection = { type: 'server_vad', createResponse: true, interruptResponse: false };
  if (threshold != null && Number.isFinite(threshold)) td.threshold = Math.min(1, Math.max(0, threshold));
  return td;
}

export function realtimeTools(tools: Iterable<AgentTool>): RealtimeTool[] {
  return [...tools].map((t) => ({ name: t.spec.name, description: t.spec.description, parameters: t.spec.parameters as Record<string, unknown> }));
}

/** The session to open: dualplex asks for text only (our TTS speaks it), multimodal for audio. */
export function sessionConfig(
  s: RealtimeSettings,
  opts: {
    voice?: string | undefined;
    tools: RealtimeTool[];
    inputTranscription?: RealtimeSessionConfig['inputTranscription'];
    /** From `audioFormatFor`: `pcmu` passes the call's μ-law through; default 24 kHz PCM. */
    audioFormat?: 'pcm24k' | 'pcmu';
  },
): RealtimeSessionConfig {
  const format = opts.audioFormat ?? 'pcm24k';
  const config: RealtimeSessionConfig = {
    instructions: s.instructions,
    inputFormat: format,
    outputFormat: format,
    outputModalities: s.mode === 'dualplex' ? 'text' : 'audio',
    turnDetection: s.turnDetection,
    tools: opts.tools,
  };
  if (s.mode === 'multimodal' && opts.voice) config.voice = opts.voice;
  if (s.temperature !== undefined) config.temperature = s.temperature;
  if (opts.inputTranscription) config.inputTranscription = opts.inputTranscription;
  return config;
}

/**
 * The model's audio format for a call: G.711 μ-law when the call's codec is PCMU, the media can
 * take μ-law payloads as they are and the model speaks μ-law (no decode, resample or encode on
 * either path); otherwise (PCMA, G.722, Opus, virtual media) the model's native 24 kHz PCM.
 * In dualplex only the caller's side is audio, but the same rule holds for it.
 */
export function audioFormatFor(
  outbound: { readonly codec?: string | undefined; writeMulaw?: unknown },
  modelFormats: readonly RealtimeAudioFormat[],
): 'pcm24k' | 'pcmu' {
  return outbound.codec === 'PCMU' && typeof outbound.writeMulaw === 'function' && modelFormats.includes('pcmu') ? 'pcmu' : 'pcm24k';
}

/** A line the model must say verbatim (greeting, goodbye, filler in multimodal). */
export function verbatimInstructions(text: string): string {
  return `Say exactly the following to the caller, word for word, and nothing else: "${text}"`;
}

export function reengagementInstructions(prompt: string): string {
  return `(The caller has been silent for a while.) ${prompt}`;
}


