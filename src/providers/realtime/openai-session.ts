/**
 * RealtimeSessionConfig → the `session` object of OpenAI's `session.update`, in the GA shape
 * (`type: 'realtime'`, nested `audio.input` / `audio.output`, MIME-style formats,
 * `output_modalities`) or the older beta shape (flat `input_audio_format: 'pcm16'`, `modalities`,
 * `temperature`) for deployments still on it. Pure, so the mapping is tested without a socket.
 */
import type { RealtimeAudioFormat, RealtimeSessionConfig, RealtimeTurnDetection } from './realtime.ts';

export type OpenAiDialect = 'ga' | 'beta';

type Json = Record<string, unknown>;

export function gaFormat(format: RealtimeAudioFormat): Json {
  if (format === 'pcm24k') return { type: 'audio/pcm', rate: 24_000 };
  return { type: format === 'pcmu' ? 'audio/pcmu' : 'audio/pcma' };
}

export function betaFormat(format: RealtimeAudioFormat): string {
  return format === 'pcm24k' ? 'pcm16' : format === 'pcmu' ? 'g711_ulaw' : 'g711_alaw';
}

/** Our format from either dialect's spelling (the stand-in and tests read formats back). */
export function parseFormat(f: unknown): RealtimeAudioFormat | undefined {
  const t = typeof f === 'string' ? f : typeof f === 'object' && f !== null ? (f as Json).type : undefined;
  if (t === 'audio/pcm' || t === 'pcm16') return 'pcm24k';
  if (t === 'audio/pcmu' || t === 'g711_ulaw') return 'pcmu';
  if (t === 'audio/pcma' || t === 'g711_alaw') return 'pcma';
  return undefined;
}

export function turnDetection(td: RealtimeTurnDetection): Json | null {
  if (td === null) return null;
  if (td === 'semantic') return { type: 'semantic_vad' };
  const out: Json = { type: 'server_vad' };
  // The vendor documents threshold as 0..1; clamp rather than let a bad config fail the call.
  if (td.threshold !== undefined) out.threshold = Math.min(1, Math.max(0, td.threshold));
  if (td.prefixPaddingMs !== undefined) out.prefix_padding_ms = Math.round(td.prefixPaddingMs);
  if (td.silenceMs !== undefined) out.silence_duration_ms = Math.round(td.silenceMs);
  if (td.createResponse !== undefined) out.create_response = td.createResponse;
  if (td.interruptResponse !== undefined) out.interrupt_response = td.interruptResponse;
  return out;
}

function tools(config: Partial<RealtimeSessionConfig>): Json[] | undefined {
  return config.tools?.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters }));
}

/** Beta sessions take temperature in [0.6, 1.2]; out-of-range values are an error there. */
function betaTemperature(t: number): number {
  return Math.min(1.2, Math.max(0.6, t));
}

/**
 * Only the fields present in `config` are mapped: the server updates just those, so a partial
 * update (new instructions mid-call) leaves the rest alone. `voice` goes out only when present,
 * because the vendor refuses a voice change once the model has spoken.
 */
export function sessionObject(config: Partial<RealtimeSessionConfig>, dialect: OpenAiDialect): Json {
  return dialect === 'ga' ? gaSession(config) : betaSession(config);
}

function gaSession(c: Partial<RealtimeSessionConfig>): Json {
  const s: Json = { type: 'realtime' };
  if (c.instructions !== undefined) s.instructions = c.instructions;
  if (c.outputModalities !== undefined) s.output_modalities = [c.outputModalities];
  const input: Json = {};
  if (c.inputFormat !== undefined) input.format = gaFormat(c.inputFormat);
  if (c.turnDetection !== undefined) input.turn_detection = turnDetection(c.turnDetection);
  if (c.inputTranscription !== undefined) input.transcription = { ...c.inputTranscription };
  const output: Json = {};
  if (c.outputFormat !== undefined) output.format = gaFormat(c.outputFormat);
  if (c.voice !== undefined) output.voice = c.voice;
  const audio: Json = {};
  if (Object.keys(input).length > 0) audio.input = input;
  if (Object.keys(output).length > 0) audio.output = output;
  if (Object.keys(audio).length > 0) s.audio = audio;
  const t = tools(c);
  if (t !== undefined) s.tools = t;
  if (c.toolChoice !== undefined) s.tool_choice = c.toolChoice;
  else if (t !== undefined && t.length > 0) s.tool_choice = 'auto';
  // The GA session object has no temperature (only the beta one did): sending it is rejected.
  return s;
}

function betaSession(c: Partial<RealtimeSessionConfig>): Json {
  const s: Json = {};
  if (c.instructions !== undefined) s.instructions = c.instructions;
  // Beta's audio modality always came with a text transcript, hence the pair.
  if (c.outputModalities !== undefined) s.modalities = c.outputModalities === 'audio' ? ['audio', 'text'] : ['text'];
  if (c.inputFormat !== undefined) s.input_audio_format = betaFormat(c.inputFormat);
  if (c.outputFormat !== undefined) s.output_audio_format = betaFormat(c.outputFormat);
  if (c.voice !== undefined) s.voice = c.voice;
  if (c.turnDetection !== undefined) s.turn_detection = turnDetection(c.turnDetection);
  if (c.inputTranscription !== undefined) s.input_audio_transcription = { ...c.inputTranscription };
  const t = tools(c);
  if (t !== undefined) s.tools = t;
  if (c.toolChoice !== undefined) s.tool_choice = c.toolChoice;
  else if (t !== undefined && t.length > 0) s.tool_choice = 'auto';
  if (c.temperature !== undefined) s.temperature = betaTemperature(c.temperature);
  return s;
}

/** A text message item for re-seeding; GA calls assistant text `output_text`, beta `text`. */
export function textItem(role: 'user' | 'assistant', text: string, dialect: OpenAiDialect): Json {
  const type = role === 'user' ? 'input_text' : dialect === 'ga' ? 'output_text' : 'text';
  return { type: 'message', role, content: [{ type, text }] };
}

/**
 * The fields of `next` that differ from `prev`, for updateSession: formats ride along with any
 * other audio change so the nested `audio` object never loses them on a vendor that replaces it.
 */
export function changedFields(prev: RealtimeSessionConfig, partial: Partial<RealtimeSessionConfig>): Partial<RealtimeSessionConfig> {
  const out: Partial<RealtimeSessionConfig> = {};
  for (const [k, v] of Object.entries(partial) as [keyof RealtimeSessionConfig, unknown][]) {
    if (v === undefined) continue;
    if (JSON.stringify(prev[k]) !== JSON.stringify(v)) (out as Record<string, unknown>)[k] = v;
  }
  const audioInput = out.turnDetection !== undefined || out.inputTranscription !== undefined;
  if (audioInput && out.inputFormat === undefined && prev.inputFormat !== undefined) out.inputFormat = prev.inputFormat;
  if (out.voice !== undefined && out.outputFormat === undefined && prev.outputFormat !== undefined) out.outputFormat = prev.outputFormat;
  return out;
}
