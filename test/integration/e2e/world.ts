/**
 * The whole engine as an operator runs it (startEngine from src/main.ts on a temp data dir and
 * free loopback ports), its providers pointed at protocol-faithful stand-ins through the same
 * environment variables production reads: OPENAI_BASE_URL → chat + audio stand-ins (behind one
 * router), DEEPGRAM_BASE_URL → the live-STT stand-in. Account, trunk and assistants are made
 * through the REST API; the caller is the test phone with real SIP and RTP.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resample } from '../../../src/audio/resample.ts';
import { readWav, toMono } from '../../../src/audio/wav.ts';
import { loadConfig } from '../../../src/config.ts';
import { startEngine, type Engine } from '../../../src/main.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { parseRtp } from '../../../src/media/rtp-packet.ts';
import { dollarsToMicros } from '../../../src/util/money.ts';
import { DeepgramStandIn, type DeepgramStandInOptions } from '../../support/deepgram-stand-in.ts';
import { HttpSink } from '../../support/http-sink.ts';
import { OpenAiAudioStandIn, type OpenAiAudioStandInOptions } from '../../support/openai-audio-stand-in.ts';
import { OpenAiStandIn } from '../../support/openai-stand-in.ts';
import type { PhoneCall, TestPhone } from '../../support/test-phone.ts';
import { OpenAiRouter } from './openai-router.ts';
import { LOOPBACK_ALLOW_CIDRS } from '../../support/outbound.ts';

export const TRUNK_NUMBER = '+14155550100';
const FIXTURES = fileURLToPath(new URL('../../../fixtures/audio/', import.meta.url));

export interface World {
  engine: Engine;
  sipPort: number;
  account: { id: number; key: string };
  chat: OpenAiStandIn;
  audio: OpenAiAudioStandIn;
  deepgram: DeepgramStandIn;
  sink: HttpSink;
  /** The engine's log lines at warn and above, parsed (with `captureLogs`). */
  logs: Record<string, unknown>[];
  phoneNumberId: number;
  api(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }>;
  assistant(over?: Record<string, unknown>): Promise<number>;
  target(): string;
  /** GET /user/calls/{id} until `done` holds. */
  waitCall(id: number, done: (c: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  close(): Promise<void>;
}

export interface WorldOptions {
  deepgram?: DeepgramStandInOptions;
  audio?: OpenAiAudioStandInOptions;
  balanceDollars?: number;
  /** RTP ports for the engine (two per call); default 100. */
  rtpPorts?: number;
  /** The engine's log lines (JSON, one per write) and their level; default: silent. */
  log?: { level: string; destination: { write(line: string): void } };
  /** More engine environment (OTEL_* for tracing tests). */
  env?: Record<string, string>;
  /** Keep the engine's warnings and errors (parsed pino lines) in `World.logs`. */
  captureLogs?: boolean;
}

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

let rtpBase = 44_000 + (process.pid % 40) * 100;
let bigBase = 50_000;

export async function startWorld(opts: WorldOptions = {}): Promise<World> {
  const chat = await OpenAiStandIn.start();
  // A voiced tone rather than the stand-in's Flite speech: Flite's WASI worker, run in the same
  // process as a live engine, segfaulted the test process intermittently (see the e2e notes).
  const audio = await OpenAiAudioStandIn.start({ ...opts.audio, speech: { synth: 'tone', ...opts.audio?.speech } });
  const deepgram = await DeepgramStandIn.start(opts.deepgram);
  const router = await OpenAiRouter.start({ '/chat': chat.baseUrl, '/audio': audio.baseUrl });
  const sink = await HttpSink.start();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-e2e-'));
  const sipPort = await freePort();
  let httpPort = await freePort();
  while (httpPort === sipPort) httpPort = await freePort();
  const rtpPorts = opts.rtpPorts ?? 100;
  // Benchmarks ask for hundreds of ports: they get their own range above the tests'.
  const rtpMin = rtpPorts > 100 ? bigBase : rtpBase;
  if (rtpPorts > 100) bigBase += rtpPorts;
  else rtpBase = rtpBase >= 47_900 ? 44_000 : rtpBase + 100;
  const logs: Record<string, unknown>[] = [];
  const logDestination = { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) };
  const engine = await startEngine(
    loadConfig({
      SWITCHBOARD_DATA_DIR: dataDir,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(httpPort),
      SIP_HOST: '127.0.0.1',
      SIP_PORT: String(sipPort),
      SIP_PUBLIC_HOST: '127.0.0.1',
      RTP_PORT_MIN: String(rtpMin),
      RTP_PORT_MAX: String(rtpMin + rtpPorts - 1),
      LOG_LEVEL: opts.log?.level ?? (opts.captureLogs ? 'warn' : (process.env.E2E_LOG_LEVEL ?? 'silent')),
      OPENAI_API_KEY: audio.apiKey,
      OPENAI_BASE_URL: router.baseUrl,
      DEEPGRAM_API_KEY: deepgram.options.apiKey,
      DEEPGRAM_BASE_URL: deepgram.url.replace(/^ws/, 'http'),
      // The webhook sink and tool stand-ins are on loopback.
      SWITCHBOARD_OUTBOUND_ALLOW_CIDRS: LOOPBACK_ALLOW_CIDRS,
      ...opts.env,
    }),
    opts.log ? { logDestination: opts.log.destination } : opts.captureLogs ? { logDestination } : {},
  );
  const repos = engine.ctx.repos;
  const row = await repos.accounts.create('e2e');
  await repos.ledger.adjust(row.id, dollarsToMicros(opts.balanceDollars ?? 10), 'e2e top-up');
  const account = { id: row.id, key: await repos.accounts.createKey(row.id) };
  const api: World['api'] = async (method, url, body) => {
    const res = await fetch(`${engine.httpUrl}/api${url}`, {
      method,
      headers: { authorization: `Bearer ${account.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const trunk = await api('POST', '/user/sip-trunks', {
    sip_trunk_type: 'number',
    phone_number: TRUNK_NUMBER,
    sip_username: 'e2e',
    sip_password: 'e2e-secret',
    sip_address: '127.0.0.1',
    sip_calling_format: '+e164',
    inbound_authorization_type: 'ip',
    allowed_inbound_ips: ['127.0.0.1'],
    country_code: 'US',
  });
  if (trunk.status !== 201) throw new Error(`trunk: ${trunk.status} ${JSON.stringify(trunk.body)}`);
  const phoneNumberId = trunk.body.data.phone_number_id as number;
  return {
    engine,
    sipPort,
    account,
    chat,
    audio,
    deepgram,
    sink,
    logs,
    phoneNumberId,
    api,
    async assistant(over = {}) {
      const res = await api('POST', '/user/assistant', {
        name: 'e2e front desk',
        type: 'inbound',
        mode: 'pipeline',
        voice_id: 121, // an OpenAI TTS voice (catalog)
        language_id: 1,
        transcriber_provider_id: 1, // Deepgram live
        llm_model_id: 1,
        timezone: 'Europe/Paris',
        initial_message: 'Hello, thanks for calling Luigi. How can I help?',
        system_prompt: 'You are the front desk of a restaurant.',
        phone_number_id: phoneNumberId,
        ...over,
      });
      if (res.status !== 201) throw new Error(`assistant: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data.id as number;
    },
    target: () => `sip:${TRUNK_NUMBER}@127.0.0.1:${sipPort}`,
    async waitCall(id, done, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      let last: Record<string, any> | undefined;
      for (;;) {
        const res = await api('GET', `/user/calls/${id}`);
        if (res.status === 200) {
          last = res.body;
          if (done(res.body)) return res.body;
        }
        if (Date.now() > deadline) throw new Error(`call ${id} not in the expected state; last: ${JSON.stringify(last)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async close() {
      await engine.close(0);
      await Promise.allSettled([chat.close(), audio.close(), deepgram.close(), router.close(), sink.close()]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A fixture as the phone sends it: 8 kHz mono. */
export function fixture8k(name: string): Int16Array {
  const wav = readWav(readFileSync(`${FIXTURES}${name}.wav`));
  return resample(toMono(wav), wav.sampleRate, 8000);
}

/** Plays `pcm` once from the phone, in 20 ms frames; resolves when the last frame went out. */
export function speak(call: PhoneCall, pcm: Int16Array): Promise<void> {
  return new Promise((resolve) => {
    let at = 0;
    call.rtp.play(() => {
      if (at >= pcm.length) {
        resolve();
        return undefined;
      }
      const frame = new Int16Array(160);
      frame.set(pcm.subarray(at, at + 160));
      at += 160;
      return frame;
    });
  });
}

export interface Arrival {
  /** performance.now() at arrival: the same clock the engine's events are stamped with here. */
  at: number;
  rms: number;
}

/** Every PCMU packet the phone receives, with its arrival time and level. */
export function listen(call: PhoneCall): Arrival[] {
  const log: Arrival[] = [];
  call.rtp.socket.on('message', (msg: Buffer) => {
    const at = performance.now();
    const parsed = parseRtp(msg);
    if (!parsed.ok || parsed.packet.payloadType !== 0) return;
    const pcm = ulaw.decode(parsed.packet.payload);
    let sum = 0;
    for (const s of pcm) sum += s * s;
    log.push({ at, rms: Math.sqrt(sum / Math.max(1, pcm.length)) });
  });
  return log;
}

/** Speech level, well above the codec's idle noise and below any word of the TTS voice. */
export const AUDIBLE_RMS = 200;

export async function waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** When the assistant went quiet: the first moment after `from` with `quietMs` of silence. */
export async function waitQuiet(log: Arrival[], from: number, quietMs: number, timeoutMs: number): Promise<number> {
  await waitUntil(
    () => {
      const last = lastAudible(log, from);
      return last !== undefined && performance.now() - last.at >= quietMs;
    },
    timeoutMs,
    'assistant audio did not stop',
  );
  return lastAudible(log, from)!.at;
}

export function lastAudible(log: Arrival[], from: number): Arrival | undefined {
  for (let i = log.length - 1; i >= 0; i--) {
    const a = log[i]!;
    if (a.at < from) return undefined;
    if (a.rms >= AUDIBLE_RMS) return a;
  }
  return undefined;
}

export function firstAudible(log: Arrival[], from: number): Arrival | undefined {
  return log.find((a) => a.at >= from && a.rms >= AUDIBLE_RMS);
}
