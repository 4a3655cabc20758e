/**
 * An OpenAI realtime server on 127.0.0.1 that speaks the real wire protocol, for provider tests
 * and the multimodal/dualplex call-session tests. The WebSocket handshake on `/v1/realtime` is
 * refused with 401 without `Authorization: Bearer KEY` and 400 without an accepted `?model=`.
 * It sends `session.created`, answers `session.update` with the merged `session.updated`,
 * decodes and records every `input_audio_buffer.append` (24 kHz PCM, μ-law or A-law per the
 * session's input format), runs an energy server-VAD (speech_started / speech_stopped /
 * committed, barge-in cancels the active response), validates `conversation.item.truncate`
 * against the audio it actually sent (an error past the end, like the real one) and records
 * every client event. Event names follow `dialect` (GA by default, or the beta names).
 *
 * It keeps the conversation the model would remember (`conversation`: items in order, as the
 * real server builds it): caller turns on commit, response output items, client-created items
 * (`conversation.item.create`, at `previous_item_id` or the end; `root` for the start; an
 * unknown previous id, a taken item id or a `function_call_output` whose `call_id` has no
 * `function_call` before it is an error and nothing is added), deletions
 * (`conversation.item.delete`, an error for an unknown id) and truncations (the audio item's
 * transcript is dropped, as the real server does).
 *
 * Responses come from a SCRIPT, one entry per response, consumed in order across connections
 * (a reconnect continues the script); once it runs out every response is `fallback` (by
 * default "Okay."). A response starts on `response.create` or, with server VAD and
 * `create_response` unset/true, when the caller stops speaking. Script entry (all fields optional):
 *   say:     words spoken (audio deltas, `chunkMs` each, with transcript deltas) or, with
 *            output_modalities ['text'], sent as text deltas word by word.
 *   calls:   [{name, arguments, callId?}] function calls after `say`; the response then ends and
 *            the model waits for the client's function_call_output and response.create.
 *   error:   {type, code?, message}: an `error` event instead of a response.
 *   before:  raw server events sent first (unknown events, rate_limits.updated, anything).
 *   dropAfterDeltas: terminate the socket (no close frame) after this many deltas.
 *   audio:   'flite' (real speech, the default; a tone if Flite cannot load) or 'tone'.
 * Pacing: `deltaIntervalMs` between deltas (0 = as fast as possible, `chunkMs` = real time).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { concatPcm, pcmFromBytes, pcmToBytes, rmsDbfs } from '../../src/audio/frame.ts';
import { resample } from '../../src/audio/resample.ts';
import { FliteTts } from '../../src/audio/tts-flite.ts';
import { alaw, ulaw } from '../../src/media/codecs/g711.ts';
import { parseFormat } from '../../src/providers/realtime/openai-session.ts';
import type { RealtimeAudioFormat } from '../../src/providers/realtime/realtime.ts';

type Json = Record<string, unknown>;

export interface StandInResponse {
  say?: string;
  calls?: { name: string; arguments: string | Json; callId?: string }[];
  error?: { type: string; code?: string; message: string };
  before?: Json[];
  dropAfterDeltas?: number;
  audio?: 'flite' | 'tone';
}

export interface RealtimeStandInOptions {
  apiKey?: string;
  /** Accepted `?model=` values; any non-empty model when unset. */
  models?: string[];
  script?: StandInResponse[];
  dialect?: 'ga' | 'beta';
  audio?: 'flite' | 'tone';
  chunkMs?: number;
  deltaIntervalMs?: number;
  /** Transcripts of the caller's turns (when the session asks for input transcription). */
  userTranscripts?: string[];
  /** Send `rate_limits.updated` after each `response.done`, as the real server does. */
  rateLimits?: boolean;
  /** What every response says once the script has run out (default: "Okay."). */
  fallback?: StandInResponse;
}

export interface StandInConnection {
  id: number;
  headers: IncomingMessage['headers'];
  query: Record<string, string>;
  /** Every client event, parsed, in arrival order. */
  clientEvents: Json[];
  /** Every server event sent. */
  sent: Json[];
  /** The effective session (session.created defaults merged with every session.update). */
  session: Json;
  /** Raw bytes of each append, exactly as decoded from base64. */
  appends: Buffer[];
  /** All input audio decoded to PCM at the input format's own rate (24 kHz or 8 kHz). */
  inputPcm(): Int16Array;
  inputMs: number;
  /** Server-VAD turns in input-audio ms. */
  turns: { startMs: number; endMs?: number; itemId: string }[];
  /** Assistant audio sent per item, in ms: what truncation is checked against. */
  audioSentMs: Map<string, number>;
  truncations: { itemId: string; contentIndex: number; audioEndMs: number }[];
  functionOutputs: { callId: string; output: string }[];
  /** The conversation as the model would remember it, in order. */
  conversation: Json[];
  /** Item ids the client deleted. */
  deleted: string[];
  responses: { id: string; status: string; instructions?: string }[];
  end?: 'client' | 'dropped';
  ws: WebSocket;
}

interface Conn extends StandInConnection {
  pcm: Int16Array[];
  active?: { id: string; cancelled?: string };
  vad: { inSpeech: boolean; aboveMs: number; belowMs: number; itemId: string };
  pendingAppendMs: number;
}

let sharedFlite: Promise<FliteTts | undefined> | undefined;
const speechCache = new Map<string, Int16Array>();
let seq = 0;
const nextId = (p: string): string => `${p}_${(++seq).toString(36).padStart(6, '0')}`;

/** 16 kHz speech for `text`: Flite when it loads, else a tone about as long as the words. */
export async function standInSpeech(text: string, source: 'flite' | 'tone' = 'flite'): Promise<Int16Array> {
  const key = `${source}:${text}`;
  const hit = speechCache.get(key);
  if (hit) return hit;
  sharedFlite ??= FliteTts.load().catch(() => undefined);
  const engine = source === 'flite' ? await sharedFlite : undefined;
  let pcm: Int16Array;
  if (engine) pcm = (await engine.synthesize(text)).samples;
  else {
    pcm = new Int16Array(Math.max(4800, text.length * 960)); // ~60 ms a character
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16_000));
  }
  speechCache.set(key, pcm);
  return pcm;
}

function encode(pcm16k: Int16Array, format: RealtimeAudioFormat): Buffer {
  if (format === 'pcm24k') return pcmToBytes(resample(pcm16k, 16_000, 24_000));
  return (format === 'pcmu' ? ulaw : alaw).encode(resample(pcm16k, 16_000, 8000));
}

const PCM = { type: 'audio/pcm', rate: 24000 };
const RATE_LIMITS = [{ name: 'requests', limit: 1000, remaining: 999, reset_seconds: 60 }, { name: 'tokens', limit: 50000, remaining: 49900, reset_seconds: 1.2 }];
const BETA_NAMES: Record<string, string> = {
  'response.output_audio.delta': 'response.audio.delta', 'response.output_audio.done': 'response.audio.done',
  'response.output_audio_transcript.delta': 'response.audio_transcript.delta', 'response.output_audio_transcript.done': 'response.audio_transcript.done',
  'response.output_text.delta': 'response.text.delta', 'response.output_text.done': 'response.text.done', 'conversation.item.added': 'conversation.item.created',
};
const bytesPerMs = (f: RealtimeAudioFormat): number => (f === 'pcm24k' ? 48 : 8);
const sleep = (ms: number): Promise<void> => new Promise((r) => (ms > 0 ? setTimeout(r, ms) : setImmediate(r)));

export class RealtimeStandIn {
  readonly connections: StandInConnection[] = [];
  readonly script: StandInResponse[];
  private scriptAt = 0;
  private userTurns = 0;
  private readonly wss = new WebSocketServer({ noServer: true });

  private constructor(
    private readonly server: Server,
    readonly options: RealtimeStandInOptions,
  ) {
    this.script = [...(options.script ?? [])];
  }

  static async start(options: RealtimeStandInOptions = {}): Promise<RealtimeStandIn> {
    const server = createServer((_req, res) => res.writeHead(426).end());
    const self = new RealtimeStandIn(server, options);
    server.on('upgrade', (req, socket, head) => self.upgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  /** For the provider's `baseUrl` (it appends `/realtime?model=`). */
  get baseUrl(): string {
    const addr = this.server.address();
    if (!addr || typeof addr === 'string') throw new Error('not listening');
    return `ws://127.0.0.1:${addr.port}/v1`;
  }

  get apiKey(): string {
    return this.options.apiKey ?? 'sk-test';
  }

  get last(): StandInConnection {
    const c = this.connections.at(-1);
    if (!c) throw new Error('no realtime connection yet');
    return c;
  }

  /** Client events of one type on a connection (the last one by default). */
  eventsOf(type: string, conn: StandInConnection = this.last): Json[] {
    return conn.clientEvents.filter((e) => e.type === type);
  }

  /** Push any server event now (errors, rate limits, unknown events). */
  send(event: Json, conn: StandInConnection = this.last): void {
    this.emit(conn as Conn, event);
  }

  /** While set, every handshake is refused with this HTTP status (a model that stays down or refuses the key). */
  refuseAll: number | undefined;

  /** Close the socket with a close frame of this code (1011: the server failed mid-session). */
  closeWith(code: number, conn: StandInConnection = this.last): void {
    conn.end = 'dropped';
    conn.ws.close(code, 'server error');
  }

  /** Drop the socket without a close frame, like a network failure. */
  drop(conn: StandInConnection = this.last): void {
    conn.end = 'dropped';
    conn.ws.terminate();
  }

  async waitFor(predicate: () => boolean, timeoutMs = 3000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > until) throw new Error('RealtimeStandIn.waitFor timed out');
      await sleep(5);
    }
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.ws.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const refuse = (status: number, message: string): void => {
      const body = JSON.stringify({ error: { message, type: 'invalid_request_error' } });
      socket.end(`HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    };
    const model = url.searchParams.get('model') ?? '';
    if (this.refuseAll !== undefined) return refuse(this.refuseAll, 'refused by the test');
    if (url.pathname !== '/v1/realtime') return refuse(404, 'not found');
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) return refuse(401, 'Incorrect API key provided');
    if (model === '' || (this.options.models && !this.options.models.includes(model))) return refuse(400, `model ${model} not found`);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req, url));
  }

  private accept(ws: WebSocket, req: IncomingMessage, url: URL): void {
    const pcm: Int16Array[] = [];
    const vad = { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 };
    const model = url.searchParams.get('model');
    // The vendor's defaults, in the shape of the dialect spoken.
    const session: Json = this.beta
      ? { id: nextId('sess'), model, modalities: ['text', 'audio'], voice: 'alloy', input_audio_format: 'pcm16', output_audio_format: 'pcm16', turn_detection: vad }
      : { type: 'realtime', id: nextId('sess'), model, output_modalities: ['audio'],
          audio: { input: { format: PCM, turn_detection: vad }, output: { format: PCM, voice: 'alloy' } } };
    const c: Conn = {
      id: this.connections.length, headers: req.headers, query: Object.fromEntries(url.searchParams), clientEvents: [], sent: [], session,
      appends: [], pcm, inputPcm: () => concatPcm(pcm), inputMs: 0, turns: [], audioSentMs: new Map(), truncations: [],
      functionOutputs: [], conversation: [], deleted: [], responses: [], ws, vad: { inSpeech: false, aboveMs: 0, belowMs: 0, itemId: '' }, pendingAppendMs: 0,
    };
    this.connections.push(c);
    ws.on('close', () => (c.end ??= 'client'));
    ws.on('message', (data) => this.onClientEvent(c, data.toString()));
    this.emit(c, { type: 'session.created', session: c.session });
  }

  private emit(c: Conn, event: Json): void {
    if (c.ws.readyState !== c.ws.OPEN) return;
    const full = { event_id: nextId('event'), ...event };
    c.sent.push(full);
    c.ws.send(JSON.stringify(full));
  }

  private error(c: Conn, code: string, message: string, type = 'invalid_request_error'): void {
    this.emit(c, { type: 'error', error: { type, code, message, param: null, event_id: null } });
  }

  private get beta(): boolean {
    return this.options.dialect === 'beta';
  }

  private name(ga: string): string {
    return (this.beta && BETA_NAMES[ga]) || ga;
  }

  /** Where a setting lives: `audio.input.format` in GA, `input_audio_format` in beta. */
  private setting(c: Conn, dir: 'input' | 'output', ga: string, beta: string): unknown {
    if (this.beta) return c.session[beta];
    return ((c.session.audio as Record<string, Json | undefined> | undefined)?.[dir] ?? {})[ga];
  }

  private format(c: Conn, dir: 'input' | 'output'): RealtimeAudioFormat {
    return parseFormat(this.setting(c, dir, 'format', `${dir}_audio_format`)) ?? 'pcm24k';
  }

  private turnDetection(c: Conn): Json | null {
    return (this.setting(c, 'input', 'turn_detection', 'turn_detection') ?? null) as Json | null;
  }

  private onClientEvent(c: Conn, text: string): void {
    let e: Json;
    try {
      e = JSON.parse(text) as Json;
    } catch {
      return this.error(c, 'invalid_json', 'The server could not parse the event as JSON');
    }
    c.clientEvents.push(e);
    switch (e.type) {
      case 'session.update': {
        const s = (e.session ?? {}) as Json;
        if (this.beta) c.session = { ...c.session, ...s };
        else if (s.type !== 'realtime') return this.error(c, 'missing_required_parameter', "Missing required parameter: 'session.type'.");
        else {
          // GA merges the nested audio settings field by field, like the real server.
          const [prev, next] = [c.session.audio, s.audio ?? {}] as Record<string, Json>[];
          c.session = { ...c.session, ...s, audio: { input: { ...prev!.input, ...next!.input }, output: { ...prev!.output, ...next!.output } } };
        }
        return this.emit(c, { type: 'session.updated', session: c.session });
      }
      case 'input_audio_buffer.append':
        return this.onAudio(c, Buffer.from(String(e.audio ?? ''), 'base64'));
      case 'input_audio_buffer.commit':
        if (c.pendingAppendMs < 100) return this.error(c, 'input_audio_buffer_commit_empty', 'buffer too small: at least 100ms of audio is required');
        c.pendingAppendMs = 0;
        return this.emit(c, { type: 'input_audio_buffer.committed', previous_item_id: null, item_id: nextId('item') });
      case 'input_audio_buffer.clear':
        c.pendingAppendMs = 0;
        return this.emit(c, { type: 'input_audio_buffer.cleared' });
      case 'conversation.item.create': {
        const item: Json = { id: nextId('item'), ...((e.item ?? {}) as Json) };
        const prev = e.previous_item_id as string | undefined;
        const at = prev === undefined ? c.conversation.length : prev === 'root' ? 0 : c.conversation.findIndex((i) => i.id === prev) + 1;
        if (at === 0 && prev !== undefined && prev !== 'root') return this.error(c, 'item_not_found', `Item with item_id '${prev}' not found`);
        if (c.conversation.some((i) => i.id === item.id)) return this.error(c, 'duplicate_item_id', `Item with id '${String(item.id)}' already exists`);
        if (item.type === 'function_call_output') {
          const call = c.conversation.slice(0, at).find((i) => i.type === 'function_call' && i.call_id === item.call_id);
          if (!call) return this.error(c, 'invalid_value', `No function call found for call_id '${String(item.call_id)}'`);
          c.functionOutputs.push({ callId: String(item.call_id), output: String(item.output) });
        }
        c.conversation.splice(at, 0, item);
        const previous = at > 0 ? c.conversation[at - 1]!.id : null;
        this.emit(c, { type: this.name('conversation.item.added'), previous_item_id: previous, item });
        if (!this.beta) this.emit(c, { type: 'conversation.item.done', previous_item_id: previous, item });
        return;
      }
      case 'conversation.item.delete': {
        const itemId = String(e.item_id);
        const at = c.conversation.findIndex((i) => i.id === itemId);
        if (at < 0) return this.error(c, 'item_not_found', `Item with item_id '${itemId}' not found`);
        c.conversation.splice(at, 1);
        c.deleted.push(itemId);
        return this.emit(c, { type: 'conversation.item.deleted', item_id: itemId });
      }
      case 'conversation.item.truncate': {
        const itemId = String(e.item_id), end = Number(e.audio_end_ms), sent = c.audioSentMs.get(itemId);
        if (sent === undefined) return this.error(c, 'item_not_found', `Item ${itemId} has no assistant audio`);
        if (!(end >= 0) || end > sent) return this.error(c, 'invalid_value', `audio_end_ms ${end} is past the audio's ${sent} ms`);
        c.truncations.push({ itemId, contentIndex: Number(e.content_index), audioEndMs: end });
        // The server drops the transcript of a truncated item: no text the caller never heard.
        const cut = c.conversation.find((i) => i.id === itemId);
        if (cut) cut.content = [{ type: 'output_audio', transcript: null, truncated_at_ms: end }];
        return this.emit(c, { type: 'conversation.item.truncated', item_id: itemId, content_index: e.content_index, audio_end_ms: end });
      }
      case 'response.create':
        if (c.active) return this.error(c, 'conversation_already_has_active_response', 'Conversation already has an active response');
        return void this.respond(c, ((e.response ?? {}) as Json).instructions as string | undefined);
      case 'response.cancel':
        if (!c.active) return this.error(c, 'response_cancel_not_active', 'Cancellation failed: no active response found');
        c.active.cancelled = 'client_cancelled';
        return;
      default:
        return this.error(c, 'invalid_type', `Invalid value: '${String(e.type)}'.`);
    }
  }

  /** Energy VAD over each append: the model's turn-taking, close enough for engine tests. */
  private onAudio(c: Conn, bytes: Buffer): void {
    const format = this.format(c, 'input');
    c.appends.push(bytes);
    const pcm = format === 'pcm24k' ? pcmFromBytes(bytes) : (format === 'pcmu' ? ulaw : alaw).decode(bytes);
    c.pcm.push(pcm);
    const ms = bytes.length / bytesPerMs(format);
    c.inputMs += ms;
    c.pendingAppendMs += ms;
    const td = this.turnDetection(c);
    if (!td) return;
    // threshold 0..1 → -70..-10 dBFS; the vendor default 0.5 lands on -40 dBFS.
    const thresholdDb = -70 + 60 * Number(td.threshold ?? 0.5);
    const loud = rmsDbfs(pcm) > thresholdDb;
    const v = c.vad;
    if (!v.inSpeech) {
      v.aboveMs = loud ? v.aboveMs + ms : 0;
      if (v.aboveMs < 60) return;
      v.inSpeech = true;
      v.belowMs = 0;
      v.itemId = nextId('item');
      const startMs = Math.max(0, Math.round(c.inputMs - v.aboveMs - Number(td.prefix_padding_ms ?? 300)));
      c.turns.push({ startMs, itemId: v.itemId });
      this.emit(c, { type: 'input_audio_buffer.speech_started', audio_start_ms: startMs, item_id: v.itemId });
      if (c.active && td.interrupt_response !== false) c.active.cancelled = 'turn_detected';
      return;
    }
    v.belowMs = loud ? 0 : v.belowMs + ms;
    if (v.belowMs < Number(td.silence_duration_ms ?? 500)) return;
    v.inSpeech = false;
    v.aboveMs = 0;
    const endMs = Math.round(c.inputMs - v.belowMs);
    c.turns.at(-1)!.endMs = endMs;
    this.emit(c, { type: 'input_audio_buffer.speech_stopped', audio_end_ms: endMs, item_id: v.itemId });
    this.emit(c, { type: 'input_audio_buffer.committed', previous_item_id: null, item_id: v.itemId });
    c.pendingAppendMs = 0;
    const item = { id: v.itemId, type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_audio', transcript: null }] };
    c.conversation.push(item);
    this.emit(c, { type: this.name('conversation.item.added'), previous_item_id: null, item });
    if (this.setting(c, 'input', 'transcription', 'input_audio_transcription') != null) {
      const transcript = this.options.userTranscripts?.[this.userTurns++] ?? 'Hello.';
      this.emit(c, { type: 'conversation.item.input_audio_transcription.completed', item_id: v.itemId, content_index: 0, transcript });
    }
    if (td.create_response !== false && !c.active) void this.respond(c);
  }

  private async respond(c: Conn, instructions?: string): Promise<void> {
    const step = this.script[this.scriptAt++] ?? this.options.fallback ?? { say: 'Okay.' };
    const id = nextId('resp');
    const active: NonNullable<Conn['active']> = { id };
    c.active = active;
    const record = { id, status: 'in_progress', ...(instructions !== undefined ? { instructions } : {}) };
    c.responses.push(record);
    for (const e of step.before ?? []) this.emit(c, e);
    if (step.error) {
      c.active = undefined;
      record.status = 'failed';
      return this.error(c, step.error.code ?? step.error.type, step.error.message, step.error.type);
    }
    this.emit(c, { type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress', output: [] } });
    const output: Json[] = [];
    let deltas = 0;
    const pace = async (): Promise<boolean> => {
      deltas++;
      if (step.dropAfterDeltas !== undefined && deltas >= step.dropAfterDeltas) {
        this.drop(c);
        return false;
      }
      await sleep(this.options.deltaIntervalMs ?? 0);
      return c.ws.readyState === c.ws.OPEN;
    };
    const text = ((this.beta ? c.session.modalities : c.session.output_modalities) as string[] | undefined)?.[0] === 'text';
    if (step.say) {
      const itemId = nextId('item');
      const base = { response_id: id, item_id: itemId, output_index: 0, content_index: 0 };
      const item: Json = { id: itemId, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
      this.emit(c, { type: 'response.output_item.added', response_id: id, output_index: 0, item });
      c.conversation.push(item);
      this.emit(c, { type: this.name('conversation.item.added'), previous_item_id: null, item });
      const words = step.say.split(/(?<=\s)/);
      const format = this.format(c, 'output');
      const audio = text ? Buffer.alloc(0) : encode(await standInSpeech(step.say, step.audio ?? this.options.audio), format);
      const chunk = (this.options.chunkMs ?? 100) * bytesPerMs(format);
      // Text goes out word by word; audio chunk by chunk, its transcript's words spread over the chunks.
      const n = text ? words.length : Math.ceil(audio.length / chunk);
      if (!text) c.audioSentMs.set(itemId, 0);
      for (let i = 0; i < n && !active.cancelled; i++) {
        const ws = words.slice(Math.floor((i * words.length) / n), Math.floor(((i + 1) * words.length) / n)).join('');
        if (text) this.emit(c, { type: this.name('response.output_text.delta'), ...base, delta: ws });
        else {
          if (ws) this.emit(c, { type: this.name('response.output_audio_transcript.delta'), ...base, delta: ws });
          const part = audio.subarray(i * chunk, (i + 1) * chunk);
          this.emit(c, { type: this.name('response.output_audio.delta'), ...base, delta: part.toString('base64') });
          c.audioSentMs.set(itemId, c.audioSentMs.get(itemId)! + part.length / bytesPerMs(format));
        }
        if (!(await pace())) return;
      }
      if (text && !active.cancelled) this.emit(c, { type: this.name('response.output_text.done'), ...base, text: step.say });
      if (!text && !active.cancelled) {
        this.emit(c, { type: this.name('response.output_audio.done'), ...base });
        this.emit(c, { type: this.name('response.output_audio_transcript.done'), ...base, transcript: step.say });
      }
      const done = { ...item, status: active.cancelled ? 'incomplete' : 'completed', content: [{ type: text ? 'output_text' : 'output_audio', [text ? 'text' : 'transcript']: step.say }] };
      // The remembered item gets its content (a client edit meanwhile — truncation, deletion — stands).
      const kept = c.conversation.find((i) => i.id === itemId);
      if (kept) Object.assign(kept, { status: done.status }, kept.content === item.content ? { content: done.content } : {});
      this.emit(c, { type: 'response.output_item.done', response_id: id, output_index: 0, item: done });
      output.push(done);
    }
    for (const call of active.cancelled ? [] : (step.calls ?? [])) {
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      const item = { id: nextId('item'), object: 'realtime.item', type: 'function_call', status: 'in_progress', name: call.name, call_id: call.callId ?? nextId('call'), arguments: '' };
      const where = { response_id: id, item_id: item.id, output_index: output.length, call_id: item.call_id };
      this.emit(c, { type: 'response.output_item.added', response_id: id, output_index: output.length, item });
      this.emit(c, { type: 'response.function_call_arguments.delta', ...where, delta: args });
      this.emit(c, { type: 'response.function_call_arguments.done', ...where, name: call.name, arguments: args });
      const done = { ...item, status: 'completed', arguments: args };
      c.conversation.push(done);
      this.emit(c, { type: 'response.output_item.done', response_id: id, output_index: output.length, item: done });
      output.push(done);
    }
    record.status = active.cancelled ? 'cancelled' : 'completed';
    const details = active.cancelled ? { type: 'cancelled', reason: active.cancelled } : null;
    const usage = { total_tokens: 100, input_tokens: 60, output_tokens: 40 };
    this.emit(c, { type: 'response.done', response: { id, object: 'realtime.response', status: record.status, status_details: details, output, usage } });
    if (c.active === active) c.active = undefined;
    if (this.options.rateLimits !== false) this.emit(c, { type: 'rate_limits.updated', rate_limits: RATE_LIMITS });
  }
}
