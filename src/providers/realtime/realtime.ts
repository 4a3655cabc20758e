/**
 * Realtime speech models (speech-to-speech or speech-to-text over one socket): one provider per
 * vendor, one connection per call, re-opened by the call session when it drops. Caller audio goes
 * in as the engine's 20 ms 16 kHz frames (or untouched G.711 μ-law when both sides speak it);
 * everything the model says comes back through one async iterable of events, model audio
 * included, so the session reads it on its own schedule and nothing flows through an emitter.
 */
import type { AudioFrame } from '../../audio/frame.ts';

/** `pcm24k` is the vendors' native 24 kHz PCM16; `pcmu`/`pcma` are 8 kHz G.711. */
export type RealtimeAudioFormat = 'pcm24k' | 'pcmu' | 'pcma';

export interface RealtimeCapabilities {
  audioFormats: RealtimeAudioFormat[];
  /** The model can be told how much of an answer was heard (`truncate`). */
  truncation: true;
  functionCalls: true;
  /** Answers in text only (dualplex speaks them through our own TTS). */
  textOutput: true;
}

export type RealtimeTurnDetection =
  | {
      type: 'server_vad';
      /** 0..1: higher needs louder speech to start a turn (noisy lines). */
      threshold?: number;
      silenceMs?: number;
      prefixPaddingMs?: number;
      /** Defaults (true) answer at the end of each turn and cancel a response on barge-in. */
      createResponse?: boolean;
      interruptResponse?: boolean;
    }
  | 'semantic'
  | null;

export interface RealtimeTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface RealtimeSessionConfig {
  instructions?: string;
  voice?: string;
  inputFormat?: RealtimeAudioFormat;
  outputFormat?: RealtimeAudioFormat;
  /** `text` for dualplex: the model's words come back as text and our TTS speaks them. */
  outputModalities?: 'audio' | 'text';
  /** undefined leaves the vendor's automatic default; null turns turn detection off. */
  turnDetection?: RealtimeTurnDetection;
  tools?: RealtimeTool[];
  toolChoice?: 'auto' | 'none' | 'required';
  /** Only sent where the protocol still accepts it (see the vendor file). */
  temperature?: number;
  /** Transcription model for the caller's audio (`user-transcript` events); off when unset. */
  inputTranscription?: { model: string; language?: string };
}

export interface RealtimeConnectOptions {
  model: string;
  apiKey: string;
  baseUrl?: string;
  session: RealtimeSessionConfig;
  /** Aborting closes the socket at once and ends the events with `closed`. */
  signal: AbortSignal;
}

export type FunctionArguments = { ok: true; value: unknown } | { ok: false; error: string; raw: string };

export interface RateLimit {
  name: string;
  limit?: number;
  remaining?: number;
  resetSeconds?: number;
}

/**
 * What the model did. Times are milliseconds of audio: `audioStartMs` counts the caller audio the
 * model received on this connection, `receivedMs` the model audio we received for an item.
 */
export type RealtimeEvent =
  | { type: 'session-updated' }
  | { type: 'speech-started'; audioStartMs: number; itemId: string }
  | { type: 'speech-stopped'; audioEndMs: number; itemId: string }
  | { type: 'response-started'; responseId: string }
  | {
      type: 'audio';
      responseId: string;
      itemId: string;
      contentIndex: number;
      /** 20 ms 16 kHz frames, when the output format is PCM. */
      frames?: AudioFrame[];
      /** 20 ms (160-byte) μ-law payloads, untouched, when the output format is pcmu. */
      mulaw?: Uint8Array[];
      /** Model audio received for this item so far, delta included. */
      receivedMs: number;
    }
  | { type: 'audio-done'; responseId: string; itemId: string; contentIndex: number; receivedMs: number }
  | { type: 'transcript-delta'; role: 'assistant'; text: string; itemId: string; responseId: string }
  | { type: 'transcript-done'; role: 'assistant'; text: string; itemId: string; responseId: string }
  | { type: 'text-delta'; text: string; itemId: string; responseId: string }
  | { type: 'text-done'; text: string; itemId: string; responseId: string }
  | { type: 'user-transcript'; itemId: string; text: string }
  | { type: 'function-call'; callId: string; name: string; itemId: string; responseId: string; arguments: FunctionArguments }
  | { type: 'response-done'; responseId: string; status: string; reason?: string; usage?: Record<string, unknown> }
  | { type: 'truncated'; itemId: string; audioEndMs: number }
  | { type: 'error'; code: string; message: string; retryable: boolean; param?: string }
  | { type: 'rate-limits'; limits: RateLimit[] }
  | {
      type: 'closed';
      code: number;
      reason: string;
      /** True when the socket dropped under us: reconnecting with the history makes sense. */
      retryable: boolean;
    };

/**
 * What a reconnected conversation is re-seeded with, in order: text turns (what was said and
 * heard), and the function calls run with their results (`callId` ties an output to its call), so
 * the model still knows what its tools answered.
 */
export type RealtimeHistoryItem =
  /** `id`: our own id for the item (assistant text), to edit it later. */
  | { role: 'user' | 'assistant'; text: string; id?: string }
  | { type: 'function_call'; callId: string; name: string; arguments: string }
  | { type: 'function_call_output'; callId: string; output: string };

/** Where an item goes: our own id for it (to replace it later), and the item it follows. */
export interface ItemPlacement {
  /** Client-chosen item id (the protocol accepts ids from the client). */
  id?: string;
  /** Insert right after this item instead of at the end. */
  after?: string;
}

/** Per-connection tallies, for logs and metrics. */
export interface RealtimeCounters {
  errors: number;
  rateLimitUpdates: number;
  lastRateLimits: RateLimit[];
  unknownEvents: number;
  audioInMs: number;
  audioOutMs: number;
  eventsIn: number;
  eventsOut: number;
}

export interface RealtimeConnection {
  readonly events: AsyncIterable<RealtimeEvent>;
  readonly counters: Readonly<RealtimeCounters>;
  /** The session as last asked for (connect options merged with updates). */
  readonly session: Readonly<RealtimeSessionConfig>;
  /** Never blocks; dropped silently once the connection is closed. */
  appendAudio(frame: AudioFrame): void;
  /** 8 kHz μ-law from the caller: passed through byte for byte when the input format is pcmu. */
  appendMulaw(payload: Uint8Array): void;
  commit(): void;
  clearInput(): void;
  createResponse(opts?: { instructions?: string }): void;
  cancelResponse(): void;
  sendFunctionResult(callId: string, output: string): void;
  /** A function call the model made earlier (re-seeding); its result follows with sendFunctionResult. */
  addFunctionCall(callId: string, name: string, args: string): void;
  addUserText(text: string): void;
  addAssistantText(text: string, placement?: ItemPlacement): void;
  /** Remove an item from the model's conversation (what the caller never heard). */
  deleteItem(itemId: string): void;
  /**
   * The caller heard `audioEndMs` of the item: the model forgets the rest. Clamped to the audio
   * received for the item, because the vendor rejects a position past the end.
   */
  truncate(itemId: string, contentIndex: number, audioEndMs: number): void;
  /** Model audio received so far for an item (0 when unknown). */
  receivedMs(itemId: string): number;
  updateSession(partial: Partial<RealtimeSessionConfig>): void;
  /** Idempotent; ends the events with `closed` (retryable false). */
  close(): void;
}

export interface RealtimeProvider {
  readonly label: string;
  readonly capabilities: RealtimeCapabilities;
  connect(opts: RealtimeConnectOptions): Promise<RealtimeConnection>;
}

/**
 * Open a fresh connection and replay the conversation so far (text items, function calls and
 * their outputs, in order), so the model picks up where the dropped one left off. The session decides when (and whether) to call this.
 */
export async function reconnect(
  provider: RealtimeProvider,
  opts: RealtimeConnectOptions,
  history: readonly RealtimeHistoryItem[],
): Promise<RealtimeConnection> {
  const conn = await provider.connect(opts);
  for (const item of history) {
    if ('type' in item) {
      if (item.type === 'function_call') conn.addFunctionCall(item.callId, item.name, item.arguments);
      else conn.sendFunctionResult(item.callId, item.output);
      continue;
    }
    if (item.text.trim() === '') continue;
    if (item.role === 'user') conn.addUserText(item.text);
    else conn.addAssistantText(item.text, item.id !== undefined ? { id: item.id } : {});
  }
  return conn;
}
