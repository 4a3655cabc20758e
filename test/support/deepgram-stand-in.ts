/**
 * A Deepgram live-transcription server on 127.0.0.1 that speaks the real wire protocol: the
 * handshake is refused (401/400, like Deepgram) without `Authorization: Token KEY` or with bad
 * audio parameters; binary messages are linear16 audio; JSON Results go back with interim then
 * final (`is_final`, `speech_final`) segments and audio-time `start`/`duration`; KeepAlive,
 * Finalize and CloseStream (→ finals, Metadata, close 1000) behave as documented; no audio for
 * `idleTimeoutMs` closes with NET-0001. Used by provider tests, call-session tests and replay.
 *
 * Transcripts come from a script. By default an utterance starts when the audio gets louder than
 * `speechThresholdDbfs` and ends after the `endpointing` silence asked for in the URL; with
 * `trigger: {afterMs}` every that-many ms of audio (silence included) yields the next utterance.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { pcmFromBytes, rmsDbfs } from '../../src/audio/frame.ts';

export interface DeepgramUtterance {
  text: string;
  /** Interim transcripts in order; by default growing prefixes of `text`'s words. */
  interims?: string[];
}

export interface DeepgramStandInOptions {
  apiKey?: string;
  /** Consumed in order across connections; the last one repeats once the script runs out. */
  script?: (string | DeepgramUtterance)[];
  trigger?: 'energy' | { afterMs: number };
  speechThresholdDbfs?: number;
  /** An interim goes out for every this-many ms of speech. */
  interimEveryMs?: number;
  /** Wall-clock delay before a final is sent (the model's own latency). */
  finalLatencyMs?: number;
  /** Deepgram closes a socket that got neither audio nor KeepAlive for 10 s. */
  idleTimeoutMs?: number;
}

export interface DeepgramConnectionRecord {
  id: number;
  headers: IncomingMessage['headers'];
  query: Record<string, string>;
  audioBytes: number;
  /** Binary (audio) messages. */
  audioMessages: number;
  audioMs: number;
  /** Text (JSON) messages from the client: KeepAlive, Finalize, CloseStream. */
  controls: { type: string; at: number }[];
  /** Everything the stand-in sent, parsed. */
  sent: Record<string, unknown>[];
  /** How it ended: 'closed' after CloseStream, 'client' (client closed), 'dropped', 'idle'. */
  end?: 'closed' | 'client' | 'dropped' | 'idle';
  closeCode?: number;
}

interface ConnState {
  rec: DeepgramConnectionRecord;
  ws: WebSocket;
  sampleRate: number;
  endpointingMs: number | false;
  cursorMs: number;
  inSpeech: boolean;
  speechStartMs: number;
  lastLoudEndMs: number;
  lastInterimMs: number;
  interimCount: number;
  idleTimer?: NodeJS.Timeout;
}

export class DeepgramStandIn {
  readonly connections: DeepgramConnectionRecord[] = [];
  readonly rejected: { status: number; reason: string }[] = [];
  private readonly live = new Set<ConnState>();
  private readonly wss = new WebSocketServer({ noServer: true });
  private scriptIndex = 0;
  private handshakeFaults: number[] = [];
  private constructor(
    private readonly server: Server,
    readonly options: DeepgramStandInOptions & { apiKey: string },
  ) {}

  static async start(options: DeepgramStandInOptions = {}): Promise<DeepgramStandIn> {
    const server = createServer((_req, res) => res.writeHead(404).end());
    const s = new DeepgramStandIn(server, { apiKey: 'dg-test-key', ...options });
    server.on('upgrade', (req, socket, head) => s.onUpgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return s;
  }

  /** Base URL for DeepgramStt's `baseUrl` (the provider appends /v1/listen). */
  get url(): string {
    const addr = this.server.address();
    if (!addr || typeof addr === 'string') throw new Error('not listening');
    return `ws://127.0.0.1:${addr.port}`;
  }

  /** Kill every open socket without a close frame, as a network failure would (client sees 1006). */
  drop(): void {
    for (const c of this.live) {
      c.rec.end = 'dropped';
      c.ws.terminate();
    }
  }

  /** While set, every handshake answers with this status (a provider that stays down or refuses the key). */
  refuseAll: number | undefined;

  /** The next `count` handshakes answer with `status` (e.g. 503) instead of upgrading. */
  failHandshakes(count: number, status = 503): void {
    for (let i = 0; i < count; i++) this.handshakeFaults.push(status);
  }

  async waitFor(predicate: () => boolean, timeoutMs = 3000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > until) throw new Error('DeepgramStandIn.waitFor timed out');
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  async close(): Promise<void> {
    for (const c of this.live) c.ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const query = Object.fromEntries(url.searchParams);
    const refuse = (status: number, code: string, msg: string) => {
      this.rejected.push({ status, reason: msg });
      const body = JSON.stringify({ err_code: code, err_msg: msg, request_id: randomUUID() });
      socket.end(`HTTP/1.1 ${status} ${code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    };
    const fault = this.refuseAll ?? this.handshakeFaults.shift();
    if (fault !== undefined) return refuse(fault, 'Service Unavailable', 'simulated failure');
    if (url.pathname !== '/v1/listen') return refuse(404, 'Not Found', `no route ${url.pathname}`);
    if (req.headers.authorization !== `Token ${this.options.apiKey}`) return refuse(401, 'INVALID_AUTH', 'Invalid credentials.');
    // Raw audio needs its encoding and rate declared; containerised audio would not, but we only take raw.
    if (query.encoding !== 'linear16') return refuse(400, 'Bad Request', 'encoding must be linear16 for raw audio');
    const sampleRate = Number(query.sample_rate);
    if (!Number.isInteger(sampleRate) || sampleRate < 8000) return refuse(400, 'Bad Request', 'sample_rate is required with encoding');
    if ((query.channels ?? '1') !== '1') return refuse(400, 'Bad Request', 'the stand-in takes mono audio only');
    const ep = query.endpointing;
    const endpointingMs = ep === 'false' ? false : ep === undefined ? 10 : Number(ep);
    if (endpointingMs !== false && !(endpointingMs >= 0)) return refuse(400, 'Bad Request', 'endpointing must be false or ms');
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const rec: DeepgramConnectionRecord = {
        id: this.connections.length + 1, headers: req.headers, query, audioBytes: 0, audioMessages: 0, audioMs: 0, controls: [], sent: [],
      };
      this.connections.push(rec);
      const c: ConnState = {
        rec, ws, sampleRate, endpointingMs, cursorMs: 0, inSpeech: false, speechStartMs: 0, lastLoudEndMs: 0, lastInterimMs: 0, interimCount: 0,
      };
      this.live.add(c);
      this.touch(c);
      ws.on('message', (data, isBinary) => this.onMessage(c, data as Buffer, isBinary));
      ws.on('close', (code) => {
        this.live.delete(c);
        clearTimeout(c.idleTimer);
        c.rec.end ??= 'client';
        c.rec.closeCode = code;
      });
    });
  }

  private touch(c: ConnState): void {
    clearTimeout(c.idleTimer);
    c.idleTimer = setTimeout(() => {
      c.rec.end = 'idle';
      c.ws.close(1011, 'NET-0001');
    }, this.options.idleTimeoutMs ?? 10_000);
  }

  private onMessage(c: ConnState, data: Buffer, isBinary: boolean): void {
    this.touch(c);
    if (!isBinary) {
      let type = 'invalid';
      try {
        type = String((JSON.parse(data.toString()) as { type?: unknown }).type);
      } catch {
        /* recorded as invalid */
      }
      c.rec.controls.push({ type, at: Date.now() });
      if (type === 'Finalize') this.finishUtterance(c, { fromFinalize: true });
      if (type === 'CloseStream') {
        if (c.inSpeech) this.finishUtterance(c, { speechFinal: false });
        setTimeout(() => this.sendCloseStream(c), this.options.finalLatencyMs ?? 0);
      }
      return;
    }
    const samples = pcmFromBytes(data);
    const startMs = c.cursorMs;
    c.cursorMs += (samples.length * 1000) / c.sampleRate;
    c.rec.audioBytes += data.length;
    c.rec.audioMessages++;
    c.rec.audioMs = c.cursorMs;
    const trigger = this.options.trigger ?? 'energy';
    if (trigger !== 'energy') {
      if (!c.inSpeech) this.beginSpeech(c, startMs);
      c.lastLoudEndMs = c.cursorMs;
      this.maybeInterim(c);
      if (c.cursorMs - c.speechStartMs >= trigger.afterMs) this.finishUtterance(c, { speechFinal: true });
      return;
    }
    const loud = rmsDbfs(samples) > (this.options.speechThresholdDbfs ?? -40);
    if (loud) {
      if (!c.inSpeech) this.beginSpeech(c, startMs);
      c.lastLoudEndMs = c.cursorMs;
      this.maybeInterim(c);
    } else if (c.inSpeech && c.endpointingMs !== false && c.cursorMs - c.lastLoudEndMs >= c.endpointingMs) {
      this.finishUtterance(c, { speechFinal: true });
    }
  }

  private beginSpeech(c: ConnState, atMs: number): void {
    c.inSpeech = true;
    c.speechStartMs = atMs;
    c.lastInterimMs = atMs;
    c.interimCount = 0;
  }

  private current(): DeepgramUtterance {
    const script = this.options.script ?? ['hello'];
    const item = script[Math.min(this.scriptIndex, script.length - 1)] ?? '';
    return typeof item === 'string' ? { text: item } : item;
  }

  private maybeInterim(c: ConnState): void {
    if (c.rec.query.interim_results !== 'true') return;
    if (c.cursorMs - c.lastInterimMs < (this.options.interimEveryMs ?? 200)) return;
    c.lastInterimMs = c.cursorMs;
    const u = this.current();
    const words = u.text.split(/\s+/).filter(Boolean);
    const text = u.interims
      ? (u.interims[Math.min(c.interimCount, u.interims.length - 1)] ?? '')
      : words.slice(0, Math.max(1, Math.min(c.interimCount + 1, words.length - 1))).join(' ');
    c.interimCount++;
    this.sendResults(c, text, c.speechStartMs, c.cursorMs, { isFinal: false, speechFinal: false });
  }

  private finishUtterance(c: ConnState, how: { speechFinal?: boolean; fromFinalize?: boolean }): void {
    let text = '';
    let start = c.lastLoudEndMs;
    let end = c.cursorMs;
    if (c.inSpeech) {
      text = this.current().text;
      this.scriptIndex++;
      start = c.speechStartMs;
      end = c.lastLoudEndMs;
      c.inSpeech = false;
    }
    // Deepgram answers Finalize even with nothing buffered; endpointing never fires on silence.
    if (text === '' && !how.fromFinalize) return;
    const flags = { isFinal: true, speechFinal: how.speechFinal ?? false, fromFinalize: how.fromFinalize };
    setTimeout(() => this.sendResults(c, text, start, end, flags), this.options.finalLatencyMs ?? 0);
  }

  private sendResults(c: ConnState, transcript: string, startMs: number, endMs: number, f: { isFinal: boolean; speechFinal: boolean; fromFinalize?: boolean }): void {
    const words = transcript.split(/\s+/).filter(Boolean);
    const span = (endMs - startMs) / 1000 / Math.max(1, words.length);
    this.send(c, {
      type: 'Results',
      channel_index: [0, 1],
      duration: (endMs - startMs) / 1000,
      start: startMs / 1000,
      is_final: f.isFinal,
      speech_final: f.speechFinal,
      ...(f.fromFinalize ? { from_finalize: true } : {}),
      channel: {
        alternatives: [{
          transcript,
          confidence: 0.98,
          words: words.map((w, i) => ({
            word: w.toLowerCase().replace(/[^\p{L}\p{N}']/gu, ''), start: startMs / 1000 + i * span, end: startMs / 1000 + (i + 1) * span, confidence: 0.98, punctuated_word: w,
          })),
        }],
      },
      metadata: { request_id: c.rec.id.toString(), model_info: { name: c.rec.query.model ?? 'general', version: 'stand-in', arch: 'stand-in' }, model_uuid: 'stand-in' },
    });
  }

  private sendCloseStream(c: ConnState): void {
    this.send(c, {
      type: 'Metadata', transaction_key: 'deprecated', request_id: randomUUID(), sha256: '', created: new Date().toISOString(),
      duration: c.cursorMs / 1000, channels: 1,
    });
    c.rec.end = 'closed';
    c.ws.close(1000);
  }

  private send(c: ConnState, msg: Record<string, unknown>): void {
    if (c.ws.readyState !== c.ws.OPEN) return;
    c.rec.sent.push(msg);
    c.ws.send(JSON.stringify(msg));
  }
}
