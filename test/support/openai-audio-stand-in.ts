/**
 * An OpenAI audio API on 127.0.0.1 for tests, call-session fixtures and `replay --stand-ins`:
 * - POST /v1/audio/speech streams real speech (Flite, else a voiced tone) as `pcm` (24 kHz mono
 *   s16le) in chunks, after a configurable first-byte latency, so streaming is observable;
 * - POST /v1/audio/transcriptions takes the multipart upload, checks the file is a real WAV and
 *   answers with scripted text (JSON, text, or `stream=true` server-sent transcript events).
 * Every request is recorded (including whether the client hung up mid-body), and faults can be
 * queued per path: an HTTP status (500 once, then normal), a hang, or a dropped connection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { resample } from '../../src/audio/resample.ts';
import { FliteTts, FLITE_VOICES, type FliteVoice } from '../../src/audio/tts-flite.ts';
import { readWav, type WavAudio } from '../../src/audio/wav.ts';

export const SPEECH_PATH = '/v1/audio/speech';
export const TRANSCRIPTIONS_PATH = '/v1/audio/transcriptions';
type Path = typeof SPEECH_PATH | typeof TRANSCRIPTIONS_PATH;

/** `drop`: the connection is closed (TCP reset) before any answer, as a crashed vendor edge does. */
export type Fault = { kind: 'status'; status: number } | { kind: 'hang' } | { kind: 'drop' };

export interface SpeechSettings {
  /** Before the response headers and first audio byte. */
  firstByteLatencyMs: number;
  /** Audio per body chunk. */
  chunkMs: number;
  /** Wall-clock gap between chunks (less than chunkMs = faster than real time, as OpenAI is). */
  chunkIntervalMs: number;
  /** 'flite' falls back to 'tone' when Flite cannot load; a function returns 24 kHz samples. */
  synth: 'flite' | 'tone' | ((text: string, voice: string, speed: number) => Promise<Int16Array>);
  /** Cut chunks at odd byte counts (mid-sample), as any HTTP body may be split. */
  oddChunks: boolean;
}

export interface OpenAiAudioStandInOptions {
  apiKey?: string;
  speech?: Partial<SpeechSettings>;
  /** Answers to successive transcription requests; the last repeats. */
  transcripts?: string[];
  /** Overrides the script, e.g. to answer from the audio's length. */
  transcribe?: (audio: WavAudio, fields: Record<string, string>) => string;
  transcriptionLatencyMs?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  json?: Record<string, unknown>;
  fields?: Record<string, string>;
  file?: { name: string; type: string; bytes: Uint8Array; wav?: WavAudio; error?: string };
  status?: number;
  fault?: Fault['kind'];
  startedAt: number;
  firstByteAt?: number;
  finishedAt?: number;
  bytesSent: number;
  totalBytes?: number;
  /** The client closed the connection before the body was complete. */
  closedEarly: boolean;
}

let sharedFlite: Promise<FliteTts | undefined> | undefined;
/** One Flite per process: compiling it takes a second, and stand-ins come and go per test. */
function flite(): Promise<FliteTts | undefined> {
  sharedFlite ??= FliteTts.load().catch(() => undefined);
  return sharedFlite;
}

export class OpenAiAudioStandIn {
  readonly requests: RecordedRequest[] = [];
  readonly speech: SpeechSettings;
  private readonly faults = new Map<Path, Fault[]>();
  private transcriptIndex = 0;

  private constructor(
    private readonly server: Server,
    readonly options: OpenAiAudioStandInOptions,
  ) {
    this.speech = { firstByteLatencyMs: 0, chunkMs: 100, chunkIntervalMs: 10, synth: 'flite', oddChunks: false, ...options.speech };
  }

  static async start(options: OpenAiAudioStandInOptions = {}): Promise<OpenAiAudioStandIn> {
    let self: OpenAiAudioStandIn | undefined;
    const server = createServer((req, res) => void self!.handle(req, res));
    self = new OpenAiAudioStandIn(server, options);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  /** For the `openai` client's baseURL (and OPENAI_BASE_URL). */
  get baseUrl(): string {
    const addr = this.server.address();
    if (!addr || typeof addr === 'string') throw new Error('not listening');
    return `http://127.0.0.1:${addr.port}/v1`;
  }

  get apiKey(): string {
    return this.options.apiKey ?? 'sk-test';
  }

  /** Drops the faults still queued (for every path). */
  clearFaults(): void {
    this.faults.clear();
  }

  /** Queue `times` faults for `path`; requests after them are served normally. */
  fail(path: Path, fault: Fault, times = 1): void {
    const q = this.faults.get(path) ?? [];
    for (let i = 0; i < times; i++) q.push(fault);
    this.faults.set(path, q);
  }

  requestsTo(path: Path): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  async waitFor(predicate: () => boolean, timeoutMs = 3000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > until) throw new Error('OpenAiAudioStandIn.waitFor timed out');
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Speech as this stand-in would send it (24 kHz), for tests that compare against it. */
  async render(text: string, voice = 'alloy', speed = 1): Promise<Int16Array> {
    const synth = this.speech.synth;
    if (typeof synth === 'function') return synth(text, voice, speed);
    const engine = synth === 'flite' ? await flite() : undefined;
    if (!engine) return tone(text, speed);
    // OpenAI voice names mean nothing to Flite: map them onto its voices deterministically.
    const v: FliteVoice = (FLITE_VOICES as readonly string[]).includes(voice) ? (voice as FliteVoice) : voice.length % 2 ? 'slt' : 'rms';
    const audio = await engine.synthesize(text, { voice: v, speed });
    return resample(audio.samples, 16_000, 24_000);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const rec: RecordedRequest = { method: req.method ?? '', path: url.pathname, headers: req.headers, startedAt: Date.now(), bytesSent: 0, closedEarly: false };
    this.requests.push(rec);
    res.on('close', () => {
      if (!res.writableFinished) rec.closedEarly = true;
      rec.finishedAt ??= Date.now();
    });
    const body = await readBody(req);
    const path = url.pathname as Path;
    if (req.method !== 'POST' || (path !== SPEECH_PATH && path !== TRANSCRIPTIONS_PATH)) return this.error(res, rec, 404, `Invalid URL (${req.method} ${url.pathname})`);
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) return this.error(res, rec, 401, 'Incorrect API key provided.', 'invalid_api_key');
    const fault = this.faults.get(path)?.shift();
    if (fault) {
      rec.fault = fault.kind;
      if (fault.kind === 'hang') return; // never answers; the client must time out or abort
      if (fault.kind === 'drop') {
        req.socket.resetAndDestroy();
        return;
      }
      return this.error(res, rec, fault.status, 'The server had an error while processing your request.', null, 'server_error');
    }
    if (path === SPEECH_PATH) await this.speak(res, rec, body);
    else await this.transcribe(req, res, rec, body);
  }

  private async speak(res: ServerResponse, rec: RecordedRequest, body: Buffer): Promise<void> {
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(body.toString()) as Record<string, unknown>;
    } catch {
      return this.error(res, rec, 400, 'We could not parse the JSON body of your request.');
    }
    rec.json = json;
    const { model, input, voice } = json;
    if (typeof model !== 'string' || typeof input !== 'string' || input === '' || typeof voice !== 'string') {
      return this.error(res, rec, 400, 'model, input and voice are required', null, 'invalid_request_error');
    }
    const format = json.response_format ?? 'mp3';
    if (format !== 'pcm') return this.error(res, rec, 400, `the stand-in speaks response_format pcm only, not ${String(format)}`);
    const speed = typeof json.speed === 'number' ? json.speed : 1;
    const pcm = await this.render(input, voice, speed);
    const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    rec.totalBytes = bytes.length;
    await sleep(this.speech.firstByteLatencyMs);
    if (res.destroyed || rec.closedEarly) return;
    rec.status = 200;
    res.writeHead(200, { 'Content-Type': 'audio/pcm', 'Transfer-Encoding': 'chunked' });
    const chunkBytes = Math.max(2, Math.round((this.speech.chunkMs * 24_000) / 1000) * 2) + (this.speech.oddChunks ? 1 : 0);
    for (let at = 0; at < bytes.length; at += chunkBytes) {
      if (res.destroyed || rec.closedEarly) return;
      if (at > 0) await sleep(this.speech.chunkIntervalMs);
      if (res.destroyed || rec.closedEarly) return;
      const part = bytes.subarray(at, at + chunkBytes);
      res.write(part);
      rec.firstByteAt ??= Date.now();
      rec.bytesSent += part.length;
    }
    res.end();
  }

  private async transcribe(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, body: Buffer): Promise<void> {
    let form: FormData;
    try {
      // The platform's own multipart parser, so a malformed upload fails as it would anywhere.
      form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body }).formData();
    } catch (e) {
      return this.error(res, rec, 400, `could not parse multipart body: ${(e as Error).message}`);
    }
    const fields: Record<string, string> = {};
    let file: File | undefined;
    for (const [k, v] of form) {
      if (typeof v === 'string') fields[k] = v;
      else if (k === 'file') file = v;
    }
    rec.fields = fields;
    if (!file) return this.error(res, rec, 400, "you must provide a 'file'", 'file');
    if (!fields.model) return this.error(res, rec, 400, "you must provide a 'model'", 'model');
    const bytes = new Uint8Array(await file.arrayBuffer());
    rec.file = { name: file.name, type: file.type, bytes };
    try {
      rec.file.wav = readWav(bytes);
    } catch (e) {
      rec.file.error = (e as Error).message;
      return this.error(res, rec, 400, 'Invalid file format. Supported formats: wav (stand-in)', 'file');
    }
    const text = this.options.transcribe
      ? this.options.transcribe(rec.file.wav, fields)
      : (this.options.transcripts ?? ['hello'])[Math.min(this.transcriptIndex++, (this.options.transcripts?.length ?? 1) - 1)] ?? '';
    await sleep(this.options.transcriptionLatencyMs ?? 0);
    if (res.destroyed || rec.closedEarly) return;
    rec.status = 200;
    if (fields.stream === 'true') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      for (const piece of text.split(/(?=\s)/)) {
        res.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta: piece })}\n\n`);
        await sleep(5);
      }
      res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text })}\n\n`);
    } else if (fields.response_format === 'text') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end(text);
    } else {
      const seconds = rec.file.wav.samples.length / rec.file.wav.channels / rec.file.wav.sampleRate;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ text, usage: { type: 'duration', seconds: Math.ceil(seconds) } }));
    }
    rec.bytesSent = 1;
  }

  private error(res: ServerResponse, rec: RecordedRequest, status: number, message: string, param: string | null = null, type = 'invalid_request_error'): void {
    rec.status = status;
    const code = status === 401 ? 'invalid_api_key' : null;
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message, type, param, code } }));
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}

/** A voiced buzz with a syllable-rate envelope: speech-like enough for VAD and level checks. */
export function tone(text: string, speed = 1, rate = 24_000): Int16Array {
  const words = Math.max(1, text.split(/\s+/).filter(Boolean).length);
  const n = Math.round(((words * 0.3) / speed) * rate);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const t = i / rate;
    const envelope = 0.55 + 0.45 * Math.sin(2 * Math.PI * 4 * t);
    let s = 0;
    for (let h = 1; h <= 6; h++) s += Math.sin(2 * Math.PI * 140 * h * t) / h;
    out[i] = Math.round(s * envelope * 6000);
  }
  return out;
}
