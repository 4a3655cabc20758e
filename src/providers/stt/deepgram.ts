/**
 * Deepgram live transcription over its WebSocket protocol (`/v1/listen`): raw linear16 audio as
 * binary messages, JSON `Results` back (interim, then `is_final`, with `speech_final` at an
 * endpoint), `KeepAlive` while we send no audio, `Finalize` to flush an utterance and
 * `CloseStream` to end (the server answers with the last finals and a `Metadata` message).
 *
 * Audio is a message every 40 ms per call, so the send path is kept to what the protocol needs:
 * the samples go to `ws` as a view of their own bytes (on little-endian hosts they already are
 * linear16), and `ws` copies them once into the masked frame it writes (a client must mask
 * every frame, RFC 6455 5.3; `ws` never masks a caller's Buffer in place). permessage-deflate is
 * not offered: raw PCM hardly compresses, and a negotiated extension would send every audio
 * message through zlib. With it off, `send` copies synchronously, so `write` keeps nothing of the
 * caller's samples once it returns (`copiesOnWrite`) unless it must hold them while connecting.
 *
 * The engine does not send a quiet line (`skip`, src/call/cascade/stt-reader.ts): Deepgram bills
 * and transcribes the audio it is sent, so it gets the speech with some silence around it, and
 * `KeepAlive` holds the socket in between. Its result times are of the audio it got; they are
 * mapped back onto the call's audio clock (the stretches left out added back) before they leave.
 */
import { traceHeaders } from '../../telemetry/spans.ts';
import WebSocket from 'ws';
import { pcmToBytes, type AudioFrame } from '../../audio/frame.ts';
import { ProviderError } from '../../util/errors.ts';
import { EventQueue } from './event-queue.ts';
import { checkSttRate, type SttEvent, type SttOpenOptions, type SttProvider, type SttSampleRate, type SttStream } from './types.ts';

export interface DeepgramOptions {
  apiKey?: string;
  /** `wss://api.deepgram.com` by default; http(s) URLs are accepted and mapped to ws(s). */
  baseUrl?: string;
  model?: string;
  /** Silence (ms) after which Deepgram marks `speech_final`; false leaves endpointing to us. */
  endpointingMs?: number | false;
  /** Extra query parameters (`smart_format`, `keyterm`, ...), passed through unchanged. */
  params?: Record<string, string>;
  connectTimeoutMs?: number;
  /** Deepgram closes a socket after 10 s without audio (NET-0001); its docs say 3-5 s keepalives. */
  keepAliveMs?: number;
  /** How long close() waits for the last finals and Metadata after CloseStream. */
  closeTimeoutMs?: number;
  /** A reconnected socket that stays up this long earns back its reconnect. */
  stableMs?: number;
  /** Audio held while (re)connecting; older audio is dropped beyond it (a stuck connect). */
  maxBufferedMs?: number;
}

/** The fields of a `Results` message we use. */
interface Results {
  start: number;
  duration: number;
  is_final: boolean | undefined;
  speech_final: boolean | undefined;
  from_finalize: boolean | undefined;
  /** The first alternative's. */
  transcript: string;
}

/**
 * A `Results` message's fields, or what is wrong with it. Checked by hand: a few messages a
 * second per call, and a schema library's pass copied every one of them (docs/bench-history.md).
 */
function readResults(m: Record<string, unknown>): Results | string {
  const { start, duration, is_final, speech_final, from_finalize, channel } = m;
  if (typeof start !== 'number') return 'start is not a number';
  if (typeof duration !== 'number') return 'duration is not a number';
  if (!optionalBoolean(is_final)) return 'is_final is not a boolean';
  if (!optionalBoolean(speech_final)) return 'speech_final is not a boolean';
  if (!optionalBoolean(from_finalize)) return 'from_finalize is not a boolean';
  const alternatives = typeof channel === 'object' && channel !== null ? (channel as { alternatives?: unknown }).alternatives : undefined;
  if (!Array.isArray(alternatives)) return 'channel.alternatives is not an array';
  let transcript = '';
  for (let i = 0; i < alternatives.length; i++) {
    const t = typeof alternatives[i] === 'object' && alternatives[i] !== null ? (alternatives[i] as { transcript?: unknown }).transcript : undefined;
    if (typeof t !== 'string') return `channel.alternatives[${i}].transcript is not a string`;
    if (i === 0) transcript = t;
  }
  return { start, duration, transcript, is_final, speech_final, from_finalize };
}

function optionalBoolean(v: unknown): v is boolean | undefined {
  return v === undefined || typeof v === 'boolean';
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Options of every audio message: binary, and never compressed (nothing is negotiated anyway). */
const AUDIO_MESSAGE = { binary: true, compress: false } as const;
/** How far back (ms of stream) a left-out stretch is still remembered for mapping result times. */
const GAP_MEMORY_MS = 60_000;

/** The samples' own bytes (linear16 on little-endian hosts), not a copy: only for a synchronous send. */
function viewBytes(samples: Int16Array): Buffer {
  return LITTLE_ENDIAN ? Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength) : pcmToBytes(samples);
}

export class DeepgramStt implements SttProvider {
  readonly label = 'deepgram';
  readonly capabilities = { interim: true, streaming: true };
  private readonly base: string;

  constructor(readonly options: DeepgramOptions = {}) {
    this.base = (options.baseUrl ?? 'wss://api.deepgram.com').replace(/^http/, 'ws').replace(/\/+$/, '');
  }

  open(opts: SttOpenOptions): SttStream {
    checkSttRate(opts.sampleRate, 'Deepgram');
    return new DeepgramStream(this.options, this.url(opts.language, opts.sampleRate), opts.signal, opts.sampleRate);
  }

  /** The `/v1/listen` URL for a stream of linear16 at `sampleRate` (the call's own: 8 kHz on G.711 lines). */
  url(language: string, sampleRate: SttSampleRate = 16000): string {
    const o = this.options;
    const q = new URLSearchParams({
      model: o.model ?? 'nova-3',
      language,
      encoding: 'linear16',
      sample_rate: String(sampleRate),
      channels: '1',
      interim_results: 'true',
      punctuate: 'true',
      endpointing: o.endpointingMs === false ? 'false' : String(o.endpointingMs ?? 300),
      ...o.params,
    });
    return `${this.base}/v1/listen?${q}`;
  }
}

class DeepgramStream implements SttStream {
  readonly copiesOnWrite = true;
  private readonly events = new EventQueue<SttEvent>();
  private ws: WebSocket | undefined;
  private connecting: WebSocket | undefined;
  /** Audio waiting for a socket, with the stream time of its first sample. */
  private pending: Buffer[] = [];
  private pendingMs = 0;
  private pendingFinalize = false;
  /** Stream time (ms of audio) handed to sockets so far: the next socket's t=0 sits here. */
  private sentMs = 0;
  private offsetMs = 0;
  /**
   * Call audio left out (skip): pairs of [stream ms where it was left out, ms left out up to and
   * including there], oldest first; `gapsBefore` is the total of pairs already dropped.
   */
  private gaps: number[] = [];
  private gapsBefore = 0;
  private lastSendAt = Date.now();
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private stableTimer: NodeJS.Timeout | undefined;
  private canReconnect = true;
  private closing = false;
  private closePromise: Promise<void> | undefined;
  private readonly onAbort = () => this.shutdown();

  constructor(
    private readonly o: DeepgramOptions,
    private readonly url: string,
    private readonly signal: AbortSignal,
    private readonly sampleRate: SttSampleRate,
  ) {
    if (signal.aborted) {
      this.events.end();
      return;
    }
    signal.addEventListener('abort', this.onAbort, { once: true });
    void this.connectWithRetry(true);
  }

  [Symbol.asyncIterator](): AsyncIterator<SttEvent> {
    return this.events[Symbol.asyncIterator]();
  }

  write(frame: AudioFrame): void {
    if (this.closing || this.events.isEnded) return;
    if (frame.sampleRate !== this.sampleRate) throw new RangeError(`Deepgram stream at ${this.sampleRate} Hz got ${frame.sampleRate} Hz audio`);
    const ms = (frame.samples.length * 1000) / this.sampleRate;
    const ws = this.ws;
    if (ws && ws.readyState === WebSocket.OPEN) {
      this.send(ws, viewBytes(frame.samples), ms);
      return;
    }
    // Held for a socket to come: a copy, since the caller may reuse its array (copiesOnWrite).
    const bytes = pcmToBytes(frame.samples);
    this.pending.push(bytes);
    this.pendingMs += ms;
    const max = this.o.maxBufferedMs ?? 10_000;
    while (this.pendingMs > max && this.pending.length > 1) {
      // Dropped audio still advances stream time, so later transcripts keep their true times.
      const dropped = this.pending.shift()!;
      const droppedMs = (dropped.length / 2 / this.sampleRate) * 1000;
      this.pendingMs -= droppedMs;
      this.sentMs += droppedMs;
    }
  }

  skip(ms: number): void {
    if (this.closing || this.events.isEnded || !(ms > 0)) return;
    const g = this.gaps;
    const at = this.sentMs + this.pendingMs;
    const total = (g.length > 0 ? g[g.length - 1]! : this.gapsBefore) + ms;
    if (g.length > 0 && g[g.length - 2] === at) g[g.length - 1] = total;
    else g.push(at, total);
    // Results come for the last seconds of audio; a minute back is never asked for.
    while (g.length > 2 && g[2]! < at - GAP_MEMORY_MS) this.gapsBefore = g.splice(0, 2)[1]!;
  }

  /**
   * Where stream time `ms` (audio written to this stream) is on the call's audio clock. A start
   * at a gap's place is after the gap; an end there (`end`) is before it.
   */
  private callMs(ms: number, end = false): number {
    const g = this.gaps;
    for (let i = g.length - 2; i >= 0; i -= 2) if (g[i]! < ms || (!end && g[i] === ms)) return ms + g[i + 1]!;
    return ms + this.gapsBefore;
  }

  finalize(): void {
    if (this.closing || this.events.isEnded) return;
    const ws = this.ws;
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'Finalize' }));
    else this.pendingFinalize = true;
  }

  close(): Promise<void> {
    this.closePromise ??= this.closeGracefully();
    return this.closePromise;
  }

  private async closeGracefully(): Promise<void> {
    this.closing = true;
    // A connect in progress is waited for (bounded by its own timeout) so buffered audio is
    // still transcribed; with no socket at all there is nothing left to flush.
    const ws = this.ws ?? (this.connecting ? await this.waitOpen(this.connecting) : undefined);
    if (!ws || ws.readyState !== WebSocket.OPEN || this.events.isEnded) {
      this.shutdown();
      return;
    }
    this.flushPending(ws);
    ws.send(JSON.stringify({ type: 'CloseStream' }));
    // The server sends the last finals and Metadata, then closes the socket; that ends the stream.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.o.closeTimeoutMs ?? 3000);
      ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.shutdown();
  }

  private waitOpen(ws: WebSocket): Promise<WebSocket | undefined> {
    return new Promise((resolve) => {
      const done = () => resolve(this.ws === ws ? ws : undefined);
      ws.once('open', () => setImmediate(done));
      ws.once('close', done);
    });
  }

  /** Ends everything at once (abort, or after close): no events after this. */
  private shutdown(): void {
    this.closing = true;
    clearInterval(this.keepAliveTimer);
    clearTimeout(this.stableTimer);
    this.signal.removeEventListener('abort', this.onAbort);
    for (const ws of [this.ws, this.connecting]) ws?.terminate();
    this.ws = undefined;
    this.connecting = undefined;
    this.pending = [];
    this.events.end();
  }

  private async connectWithRetry(firstConnect: boolean): Promise<void> {
    // The first connect gets one retry on a transient failure; a reconnect after a drop is
    // itself the retry, so it gets a single attempt.
    const attempts = firstConnect ? 2 : 1;
    for (let i = 0; i < attempts; i++) {
      try {
        const ws = await this.connect();
        if (this.events.isEnded) {
          ws.terminate();
          return;
        }
        this.attach(ws);
        return;
      } catch (err) {
        if (this.events.isEnded || this.signal.aborted) return;
        const pe = err as ProviderError;
        if (!pe.retryable || i === attempts - 1) {
          this.events.push({ type: 'error', error: pe });
          this.shutdown();
          return;
        }
      }
    }
  }

  private connect(): Promise<WebSocket> {
    // Without a key Deepgram can only refuse us: say so at once, without a lookup or a handshake.
    if (!this.o.apiKey) return Promise.reject(new ProviderError('Deepgram: no API key configured (DEEPGRAM_API_KEY)', 'deepgram', false));
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url, { headers: { Authorization: `Token ${this.o.apiKey ?? ''}`, ...traceHeaders() }, perMessageDeflate: false });
      this.connecting = ws;
      const timeoutMs = this.o.connectTimeoutMs ?? 5000;
      const fail = (e: ProviderError) => {
        clearTimeout(timer);
        if (this.connecting === ws) this.connecting = undefined;
        ws.removeAllListeners('open');
        ws.terminate();
        reject(e);
      };
      const timer = setTimeout(() => fail(new ProviderError(`Deepgram connect timed out after ${timeoutMs} ms`, 'deepgram', true)), timeoutMs);
      // ws reports the failure twice (error, close); the first one decides.
      ws.on('error', (e) => fail(new ProviderError(`Deepgram connect failed: ${e.message}`, 'deepgram', true)));
      ws.once('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        // 401/403/400 mean a bad key or bad parameters: retrying cannot help.
        fail(new ProviderError(`Deepgram refused the connection: HTTP ${status}`, 'deepgram', status >= 500 || status === 429));
      });
      ws.once('open', () => {
        clearTimeout(timer);
        if (this.connecting === ws) this.connecting = undefined;
        resolve(ws);
      });
    });
  }

  private attach(ws: WebSocket): void {
    this.ws = ws;
    this.offsetMs = this.sentMs;
    ws.removeAllListeners('error');
    ws.on('error', () => {}); // a 'close' always follows and is where drops are handled
    ws.on('message', (data, isBinary) => {
      if (!isBinary && this.ws === ws) this.onMessage(String(data));
    });
    ws.on('close', (code) => this.onClosed(ws, code));
    this.flushPending(ws);
    clearInterval(this.keepAliveTimer);
    const every = this.o.keepAliveMs ?? 4000;
    // Checked at a quarter of the period so a keepalive goes out at most every..every*1.25 ms.
    this.keepAliveTimer = setInterval(() => {
      if (ws.readyState === WebSocket.OPEN && Date.now() - this.lastSendAt >= every) {
        ws.send(JSON.stringify({ type: 'KeepAlive' }));
        this.lastSendAt = Date.now();
      }
    }, Math.max(10, every / 4));
  }

  private flushPending(ws: WebSocket): void {
    const pending = this.pending;
    this.pending = [];
    this.pendingMs = 0;
    for (const b of pending) this.send(ws, b, (b.length / 2 / this.sampleRate) * 1000);
    if (this.pendingFinalize) {
      this.pendingFinalize = false;
      ws.send(JSON.stringify({ type: 'Finalize' }));
    }
  }

  private send(ws: WebSocket, bytes: Buffer, ms: number): void {
    ws.send(bytes, AUDIO_MESSAGE);
    this.sentMs += ms;
    this.lastSendAt = Date.now();
  }

  private onClosed(ws: WebSocket, code: number): void {
    if (this.ws !== ws) return;
    this.ws = undefined;
    clearInterval(this.keepAliveTimer);
    clearTimeout(this.stableTimer);
    if (this.closing || this.events.isEnded) return;
    if (!this.canReconnect) {
      this.events.push({
        type: 'error',
        error: new ProviderError(`Deepgram socket closed (code ${code}) and the reconnect was already used`, 'deepgram', true),
      });
      this.shutdown();
      return;
    }
    // A dropped socket loses at most what was in flight; audio written meanwhile is buffered and
    // sent on the new socket, whose clock restarts at 0 (hence offsetMs).
    this.canReconnect = false;
    void this.connectWithRetry(false).then(() => {
      if (!this.ws) return;
      this.stableTimer = setTimeout(() => (this.canReconnect = true), this.o.stableMs ?? 10_000);
    });
  }

  private onMessage(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return; // not ours to interpret; Deepgram only sends JSON text frames
    }
    // Metadata, SpeechStarted, UtteranceEnd: not for us (checked by hand, one schema pass per message).
    if (typeof json !== 'object' || json === null || (json as { type?: unknown }).type !== 'Results') return;
    const m = readResults(json as Record<string, unknown>);
    if (typeof m === 'string') {
      this.events.push({ type: 'error', error: new ProviderError(`Deepgram sent a malformed Results message: ${m}`, 'deepgram', false) });
      return;
    }
    const text_ = m.transcript.trim();
    const startMs = this.callMs(Math.round(m.start * 1000) + this.offsetMs);
    const endMs = this.callMs(Math.round((m.start + m.duration) * 1000) + this.offsetMs, true);
    if (!m.is_final) {
      if (text_ !== '') this.events.push({ type: 'interim', text: text_, startMs, endMs });
      return;
    }
    // A Finalize answer ends the utterance as far as we are concerned: finalize() is called by
    // our own endpointing, which already decided the caller stopped.
    const speechFinal = m.speech_final === true || m.from_finalize === true;
    // Empty finals are silence; they matter only when they carry the end of an utterance.
    if (text_ === '' && !speechFinal) return;
    this.events.push({ type: 'final', text: text_, startMs, endMs, speechFinal });
  }
}
