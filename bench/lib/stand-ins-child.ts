/**
 * The providers a pipeline call talks to, in a process of their own so their work never sits on
 * the engine's event loop or CPU: one HTTP server for the OpenAI protocol (streamed chat
 * completions for the `openai` client, `POST /v1/audio/speech` as streamed 24 kHz PCM) and the
 * Deepgram live stand-in from test/support (WebSocket, interim and final results, Finalize).
 * Spawned by stand-ins-proc.ts; never run by hand.
 *
 * Each HTTP request reports its own latency over IPC, on the machine-wide monotonic clock
 * (lib/mono.ts), so the benchmark can subtract exactly what the stand-in took:
 * - `receivedAt`: the request's headers were parsed (the server's 'request' event);
 * - `firstByteAt`: just before the first body byte was written (LLM: the first content token;
 *   TTS: the first PCM chunk). Headers go out in the same write, so the engine cannot see
 *   anything earlier;
 * - `lastByteAt`: the end of the body.
 * Requests carry the engine's call id in `x-bench-call` (added by lib/turn-probe.ts in the engine
 * process), so each report belongs to a call.
 *
 * The chat reply is streamed in 6-character content chunks like OpenAI's, by default all at once
 * (`tokenMs` 0): the whole reply is there when the first token is, so the time the engine waits
 * for a speakable first clause is the stand-in's, not the engine's. Speech is a voiced tone
 * (test/support's `tone`, 0.3 s per word) sent as 100 ms chunks 10 ms apart, faster than real
 * time as OpenAI's is. `llmDelayMs` / `ttsDelayMs` add a fixed wait before the first byte
 * (default 0), which the subtraction must remove again.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DeepgramStandIn } from '../../test/support/deepgram-stand-in.ts';
import { tone } from '../../test/support/openai-audio-stand-in.ts';
import { mono } from './mono.ts';

export interface StandInsOptions {
  llmDelayMs: number;
  ttsDelayMs: number;
  /** Gap between chat content chunks; 0 sends the reply in one burst. */
  tokenMs: number;
  /** What the recogniser hears in every utterance. */
  transcript: string;
  /** Deepgram stand-in: wall-clock delay before a final (its model latency). */
  sttFinalMs: number;
  reply: string;
  lifetimeMs: number;
}

export interface StandInRecord {
  kind: 'llm' | 'tts';
  call: string | undefined;
  receivedAt: number;
  firstByteAt: number | undefined;
  lastByteAt: number | undefined;
  /** TTS: the text asked for; LLM: the last user message. */
  text: string;
  aborted: boolean;
}

export const OPENAI_KEY = 'sk-bench';

const opts = JSON.parse(process.argv[2] ?? '{}') as StandInsOptions;
if (!process.send) throw new Error('stand-ins-child must be spawned with an IPC channel');
const send = process.send.bind(process);
process.on('disconnect', () => process.exit(0));
setTimeout(() => process.exit(3), opts.lifetimeMs).unref();

let reply = opts.reply;
let records: StandInRecord[] = [];
const eld = monitorEventLoopDelay({ resolution: 5 });
eld.enable();
const toneCache = new Map<string, Buffer>();

const server = http.createServer({ noDelay: true, keepAliveTimeout: 60_000 }, (req, res) => {
  const receivedAt = mono();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/audio/speech')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${path}` } }));
      return;
    }
    if (req.headers.authorization !== `Bearer ${OPENAI_KEY}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided.' } }));
      return;
    }
    let body: Record<string, any>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const call = typeof req.headers['x-bench-call'] === 'string' ? req.headers['x-bench-call'] : undefined;
    if (path === '/v1/chat/completions') void chat(body, call, receivedAt, res);
    else void speech(body, call, receivedAt, res);
  });
});

async function chat(body: Record<string, any>, call: string | undefined, receivedAt: number, res: http.ServerResponse): Promise<void> {
  const messages = (body.messages ?? []) as { role: string; content: string | null }[];
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const rec: StandInRecord = { kind: 'llm', call, receivedAt, firstByteAt: undefined, lastByteAt: undefined, text: lastUser?.content ?? '', aborted: false };
  res.on('close', () => {
    if (!res.writableFinished) rec.aborted = true;
    records.push(rec);
  });
  if (opts.llmDelayMs > 0) await sleep(opts.llmDelayMs);
  if (res.destroyed) return;
  const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
  const line = (delta: Record<string, unknown>, finish: string | null = null): string =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const pieces = reply.match(/.{1,6}/gs) ?? [];
  if (body.stream !== true) {
    rec.firstByteAt = mono();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: reply } }] }));
    rec.lastByteAt = mono();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  rec.firstByteAt = mono();
  if (opts.tokenMs <= 0) {
    // One write: the role chunk, every content chunk, the finish chunk and [DONE].
    res.end(line({ role: 'assistant', content: '' }) + pieces.map((p) => line({ content: p })).join('') + line({}, 'stop') + 'data: [DONE]\n\n');
    rec.lastByteAt = mono();
    return;
  }
  res.write(line({ role: 'assistant', content: '' }) + line({ content: pieces[0] ?? '' }));
  for (const p of pieces.slice(1)) {
    await sleep(opts.tokenMs);
    if (res.destroyed) return;
    res.write(line({ content: p }));
  }
  res.end(line({}, 'stop') + 'data: [DONE]\n\n');
  rec.lastByteAt = mono();
}

async function speech(body: Record<string, any>, call: string | undefined, receivedAt: number, res: http.ServerResponse): Promise<void> {
  const input = String(body.input ?? '');
  const rec: StandInRecord = { kind: 'tts', call, receivedAt, firstByteAt: undefined, lastByteAt: undefined, text: input, aborted: false };
  res.on('close', () => {
    if (!res.writableFinished) rec.aborted = true;
    records.push(rec);
  });
  if (body.response_format !== 'pcm' || !input) {
    res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'pcm only, with input' } }));
    return;
  }
  let bytes = toneCache.get(input);
  if (!bytes) {
    const pcm = tone(input, typeof body.speed === 'number' ? body.speed : 1);
    bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    if (toneCache.size < 64) toneCache.set(input, bytes);
  }
  if (opts.ttsDelayMs > 0) await sleep(opts.ttsDelayMs);
  if (res.destroyed) return;
  const chunk = 4800; // 100 ms at 24 kHz
  res.writeHead(200, { 'content-type': 'audio/pcm', 'transfer-encoding': 'chunked' });
  rec.firstByteAt = mono();
  for (let at = 0; at < bytes.length; at += chunk) {
    if (at > 0) await sleep(10);
    if (res.destroyed) return;
    res.write(bytes.subarray(at, at + chunk));
  }
  res.end();
  rec.lastByteAt = mono();
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const deepgram = await DeepgramStandIn.start({ script: [opts.transcript], finalLatencyMs: opts.sttFinalMs });

send({
  type: 'ready',
  pid: process.pid,
  openaiBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
  openaiKey: OPENAI_KEY,
  deepgramUrl: deepgram.url.replace(/^ws/, 'http'),
  deepgramKey: deepgram.options.apiKey,
});

process.on('message', (raw) => {
  const msg = raw as { id: number; op: string; [k: string]: unknown };
  let result: unknown = null;
  switch (msg.op) {
    case 'records':
      result = records;
      records = [];
      break;
    case 'reply':
      reply = String(msg['reply']);
      break;
    case 'stats': {
      const delay = (ns: number) => Math.max(0, ns / 1e6 - 5);
      result = { cpuUs: process.cpuUsage(), eldP99Ms: delay(eld.percentile(99)), eldMaxMs: delay(eld.max), deepgramConnections: deepgram.connections.length, sttAudioMessages: deepgram.connections.reduce((n, c) => n + c.audioMessages, 0) };
      eld.reset();
      break;
    }
    case 'close':
      void deepgram.close().finally(() => server.close(() => process.exit(0)));
      server.closeAllConnections();
      break;
  }
  send({ id: msg.id, ok: true, result });
});
