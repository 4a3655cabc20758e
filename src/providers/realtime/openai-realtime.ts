/**
 * OpenAI's realtime speech model over its WebSocket protocol (`wss://api.openai.com/v1/realtime
 * ?model=…`, `Authorization: Bearer KEY`): JSON client events (`session.update`,
 * `input_audio_buffer.append`, `conversation.item.create|truncate`, `response.create|cancel`) and
 * JSON server events, audio as base64 inside them. Re-seeding and memory edits use
 * `conversation.item.create` (messages, `function_call` / `function_call_output` items,
 * `previous_item_id` to insert) and `conversation.item.delete`. Plain `ws` rather than the
 * SDK's realtime client: we need the raw close codes, our own connect deadline and a stand-in to
 * point it at.
 *
 * connect() resolves once the server has answered our `session.update` with `session.updated`,
 * so a bad session (unknown voice, wrong format) fails the connect instead of the first turn.
 */
import { traceHeaders } from '../../telemetry/spans.ts';
import WebSocket from 'ws';
import type { Logger } from 'pino';
import type { AudioFrame } from '../../audio/frame.ts';
import { ProviderError } from '../../util/errors.ts';
import { EventQueue } from '../stt/event-queue.ts';
import { InputEncoder } from './audio-edge.ts';
import { ServerEventTranslator } from './openai-events.ts';
import { changedFields, sessionObject, textItem, type OpenAiDialect } from './openai-session.ts';
import type {
  ItemPlacement,
  RealtimeCapabilities,
  RealtimeConnectOptions,
  RealtimeConnection,
  RealtimeCounters,
  RealtimeEvent,
  RealtimeProvider,
  RealtimeSessionConfig,
} from './realtime.ts';

export interface OpenAiRealtimeOptions {
  /** `ga` (default) speaks the GA protocol; `beta` the older preview one (`OpenAI-Beta` header). */
  dialect?: OpenAiDialect;
  /** Socket open + `session.created` + `session.updated`, all within this. */
  connectTimeoutMs?: number;
  /** A socket that misses a pong for this long is declared dropped (half-open TCP). */
  pingIntervalMs?: number;
  logger?: Pick<Logger, 'warn' | 'info' | 'debug'>;
}

/** Across every connection this provider opened: what the dashboards and alerts read. */
export interface RealtimeProviderTotals {
  connects: number;
  connectFailures: number;
  drops: number;
  errors: number;
  rateLimitUpdates: number;
}

const LABEL = 'openai-realtime';

export class OpenAiRealtime implements RealtimeProvider {
  readonly label = LABEL;
  readonly capabilities: RealtimeCapabilities = {
    audioFormats: ['pcm24k', 'pcmu', 'pcma'],
    truncation: true,
    functionCalls: true,
    textOutput: true,
  };
  readonly totals: RealtimeProviderTotals = { connects: 0, connectFailures: 0, drops: 0, errors: 0, rateLimitUpdates: 0 };

  constructor(readonly options: OpenAiRealtimeOptions = {}) {}

  url(baseUrl: string | undefined, model: string): string {
    const base = (baseUrl ?? 'wss://api.openai.com/v1').replace(/^http/, 'ws').replace(/\/+$/, '');
    return `${base}/realtime?${new URLSearchParams({ model })}`;
  }

  async connect(opts: RealtimeConnectOptions): Promise<RealtimeConnection> {
    opts.signal.throwIfAborted();
    const conn = new OpenAiRealtimeConnection(this, opts);
    try {
      await conn.open(this.url(opts.baseUrl, opts.model));
      this.totals.connects++;
      return conn;
    } catch (e) {
      this.totals.connectFailures++;
      conn.close();
      throw e;
    }
  }
}

class OpenAiRealtimeConnection implements RealtimeConnection {
  private readonly queue = new EventQueue<RealtimeEvent>();
  readonly counters: RealtimeCounters = {
    errors: 0,
    rateLimitUpdates: 0,
    lastRateLimits: [],
    unknownEvents: 0,
    audioInMs: 0,
    audioOutMs: 0,
    eventsIn: 0,
    eventsOut: 0,
  };
  private config: RealtimeSessionConfig;
  private readonly dialect: OpenAiDialect;
  private readonly encoder: InputEncoder;
  private readonly translator: ServerEventTranslator;
  private ws: WebSocket | undefined;
  private ended = false;
  private ready = false;
  /** Items the session truncated: late deltas for them are no longer wanted. */
  private readonly truncated = new Set<string>();
  private pingTimer: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private readonly onAbort = (): void => this.close('aborted');

  constructor(
    private readonly provider: OpenAiRealtime,
    private readonly opts: RealtimeConnectOptions,
  ) {
    this.config = { ...opts.session };
    this.dialect = provider.options.dialect ?? 'ga';
    this.encoder = new InputEncoder(this.config.inputFormat ?? 'pcm24k');
    this.translator = new ServerEventTranslator(this.config.outputFormat ?? 'pcm24k', this.counters);
  }

  get events(): AsyncIterable<RealtimeEvent> {
    return this.queue;
  }

  get session(): Readonly<RealtimeSessionConfig> {
    return this.config;
  }

  open(url: string): Promise<void> {
    const timeoutMs = this.provider.options.connectTimeoutMs ?? 10_000;
    const headers: Record<string, string> = { Authorization: `Bearer ${this.opts.apiKey}`, ...traceHeaders() };
    if (this.dialect === 'beta') headers['OpenAI-Beta'] = 'realtime=v1';
    const ws = new WebSocket(url, { headers, handshakeTimeout: timeoutMs });
    this.ws = ws;
    this.opts.signal.addEventListener('abort', this.onAbort, { once: true });
    return new Promise<void>((resolve, reject) => {
      const fail = (e: ProviderError): void => {
        clearTimeout(timer);
        // The caller gave up: they want their abort reason back, not a network error.
        reject(this.opts.signal.aborted ? this.opts.signal.reason : e);
      };
      const timer = setTimeout(() => fail(new ProviderError(`${LABEL} connect timed out after ${timeoutMs} ms`, LABEL, true)), timeoutMs);
      ws.on('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        fail(new ProviderError(`${LABEL} refused the connection (HTTP ${status})`, LABEL, status >= 500 || status === 429));
      });
      ws.on('error', (e) => {
        if (!this.ready) fail(new ProviderError(`${LABEL} connect failed: ${e.message}`, LABEL, true));
        else this.provider.options.logger?.warn({ err: e.message }, 'realtime socket error');
      });
      ws.on('open', () => this.startPings());
      ws.on('pong', () => (this.awaitingPong = false));
      ws.on('close', (code, reason) => {
        if (!this.ready) fail(new ProviderError(`${LABEL} closed during connect (${code} ${reason.toString()})`, LABEL, code !== 1008));
        this.onSocketClose(code, reason.toString());
      });
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        const msg = parseJson(data.toString());
        if (!msg) {
          this.counters.unknownEvents++;
          return;
        }
        this.counters.eventsIn++;
        if (!this.ready) {
          if (msg.type === 'session.created') this.send({ type: 'session.update', session: sessionObject(this.config, this.dialect) });
          else if (msg.type === 'session.updated') {
            this.ready = true;
            clearTimeout(timer);
            resolve();
          } else if (msg.type === 'error') {
            const err = (msg.error ?? {}) as { message?: string; code?: string };
            fail(new ProviderError(`${LABEL} rejected the session: ${err.message ?? err.code ?? 'error'}`, LABEL, false));
          }
        }
        this.dispatch(msg);
      });
    });
  }

  appendAudio(frame: AudioFrame): void {
    if (!this.isOpen()) return;
    this.appendBytes(this.encoder.frame(frame), (frame.samples.length * 1000) / frame.sampleRate);
  }

  appendMulaw(payload: Uint8Array): void {
    if (!this.isOpen()) return;
    this.appendBytes(this.encoder.mulaw(payload), payload.length / 8);
  }

  commit(): void {
    this.send({ type: 'input_audio_buffer.commit' });
  }

  clearInput(): void {
    this.send({ type: 'input_audio_buffer.clear' });
  }

  createResponse(opts: { instructions?: string } = {}): void {
    this.send(opts.instructions !== undefined ? { type: 'response.create', response: { instructions: opts.instructions } } : { type: 'response.create' });
  }

  cancelResponse(): void {
    this.send({ type: 'response.cancel' });
  }

  sendFunctionResult(callId: string, output: string): void {
    this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output } });
  }

  addFunctionCall(callId: string, name: string, args: string): void {
    this.send({ type: 'conversation.item.create', item: { type: 'function_call', call_id: callId, name, arguments: args } });
  }

  addUserText(text: string): void {
    this.send({ type: 'conversation.item.create', item: textItem('user', text, this.dialect) });
  }

  addAssistantText(text: string, placement: ItemPlacement = {}): void {
    const item = textItem('assistant', text, this.dialect);
    if (placement.id !== undefined) item.id = placement.id;
    this.send({ type: 'conversation.item.create', ...(placement.after !== undefined ? { previous_item_id: placement.after } : {}), item });
  }

  deleteItem(itemId: string): void {
    this.send({ type: 'conversation.item.delete', item_id: itemId });
  }

  truncate(itemId: string, contentIndex: number, audioEndMs: number): void {
    const received = this.translator.receivedMs(itemId);
    let at = Math.max(0, Math.round(audioEndMs));
    if (received > 0) at = Math.min(at, Math.floor(received));
    this.truncated.add(itemId);
    this.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: contentIndex, audio_end_ms: at });
  }

  receivedMs(itemId: string): number {
    return this.translator.receivedMs(itemId);
  }

  updateSession(partial: Partial<RealtimeSessionConfig>): void {
    const changed = changedFields(this.config, partial);
    // The encoder and decoders are built for the formats at connect; a mid-call change would
    // need both sides re-timed, which no caller needs: reconnect instead.
    for (const k of ['inputFormat', 'outputFormat'] as const) {
      if (partial[k] !== undefined && partial[k] !== this.config[k]) throw new RangeError(`${k} cannot change on an open realtime connection`);
    }
    if (Object.keys(changed).length === 0) return;
    this.config = { ...this.config, ...changed };
    this.send({ type: 'session.update', session: sessionObject(changed, this.dialect) });
  }

  close(reason = 'closed by client'): void {
    if (this.ended) return;
    const ws = this.ws;
    this.finish({ type: 'closed', code: 1000, reason, retryable: false });
    if (!ws) return;
    if (ws.readyState === WebSocket.OPEN) {
      ws.close(1000);
      // A peer that never answers the close handshake must not hold the socket open.
      setTimeout(() => ws.terminate(), 2000).unref();
    } else {
      ws.terminate();
    }
  }

  private isOpen(): boolean {
    return !this.ended && this.ws?.readyState === WebSocket.OPEN;
  }

  private appendBytes(bytes: Buffer, ms: number): void {
    this.counters.audioInMs += ms;
    this.send({ type: 'input_audio_buffer.append', audio: bytes.toString('base64') });
  }

  private send(event: Record<string, unknown>): void {
    if (!this.isOpen()) return;
    this.ws!.send(JSON.stringify(event));
    this.counters.eventsOut++;
  }

  private dispatch(msg: { type: string } & Record<string, unknown>): void {
    const before = { errors: this.counters.errors, rate: this.counters.rateLimitUpdates };
    for (const ev of this.translator.translate(msg)) {
      if (ev.type === 'audio' && this.truncated.has(ev.itemId)) continue;
      if (ev.type === 'error') this.provider.options.logger?.warn({ code: ev.code, message: ev.message }, 'realtime model error');
      else if (ev.type === 'rate-limits') this.provider.options.logger?.debug({ limits: ev.limits }, 'realtime rate limits');
      this.queue.push(ev);
    }
    this.provider.totals.errors += this.counters.errors - before.errors;
    this.provider.totals.rateLimitUpdates += this.counters.rateLimitUpdates - before.rate;
  }

  private onSocketClose(code: number, reason: string): void {
    if (this.ended) return;
    // Only an open session that we did not close counts as a drop worth reconnecting.
    if (this.ready) this.provider.totals.drops++;
    this.provider.options.logger?.warn({ code, reason }, 'realtime socket dropped');
    this.finish({ type: 'closed', code, reason, retryable: code !== 1008 });
  }

  private finish(closed: RealtimeEvent & { type: 'closed' }): void {
    this.ended = true;
    clearInterval(this.pingTimer);
    this.opts.signal.removeEventListener('abort', this.onAbort);
    this.queue.push(closed);
    this.queue.end();
  }

  private startPings(): void {
    const every = this.provider.options.pingIntervalMs ?? 15_000;
    if (every <= 0) return;
    this.pingTimer = setInterval(() => {
      const ws = this.ws;
      if (!ws || ws.readyState !== WebSocket.OPEN) return;
      if (this.awaitingPong) {
        ws.terminate();
        return;
      }
      this.awaitingPong = true;
      ws.ping();
    }, every);
    this.pingTimer.unref();
  }
}

function parseJson(text: string): ({ type: string } & Record<string, unknown>) | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string') return v as { type: string } & Record<string, unknown>;
  } catch {
    // fall through: counted by the caller
  }
  return undefined;
}
