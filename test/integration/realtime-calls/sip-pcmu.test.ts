/**
 * A real loopback SIP call, PCMU 20 ms, to a multimodal assistant: the whole engine (startEngine,
 * as `switchboard serve` runs it) with OPENAI_BASE_URL pointing at the realtime stand-in, the
 * caller a test phone with real SIP and RTP. μ-law passes through untouched: the stand-in
 * receives exactly the payloads the phone sent, and the phone receives exactly the μ-law the
 * model sent, with audio/pcmu negotiated in session.update.
 *
 * Byte equality is checked per 20 ms payload, in order: on a loaded machine the engine's jitter
 * buffer may conceal or drop a frame of the phone's (it paces with setInterval), so a payload
 * may be missing or replaced by concealment, but none may be altered or reordered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { startEngine, type Engine } from '../../../src/main.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { parseRtp } from '../../../src/media/rtp-packet.ts';
import { dollarsToMicros } from '../../../src/util/money.ts';
import { RealtimeStandIn } from '../../support/realtime-stand-in.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { freePort, waitUntil } from '../e2e/world.ts';

const NUMBER = '+14155550123';
const GREETING = 'Hello, thanks for calling Luigi. How can I help you today?';

let engine: Engine;
let standIn: RealtimeStandIn;
let phone: TestPhone;
let dataDir: string;
let sipPort: number;
let key: string;

async function api(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${engine.httpUrl}/api${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  standIn = await RealtimeStandIn.start({ audio: 'tone', deltaIntervalMs: 0, script: [{ say: GREETING }] });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-pcmu-'));
  sipPort = await freePort();
  let httpPort = await freePort();
  while (httpPort === sipPort) httpPort = await freePort();
  const rtpMin = 48_000 + (process.pid % 40) * 50;
  engine = await startEngine(
    loadConfig({
      SWITCHBOARD_DATA_DIR: dataDir,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(httpPort),
      SIP_HOST: '127.0.0.1',
      SIP_PORT: String(sipPort),
      SIP_PUBLIC_HOST: '127.0.0.1',
      RTP_PORT_MIN: String(rtpMin),
      RTP_PORT_MAX: String(rtpMin + 49),
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
      OPENAI_API_KEY: standIn.apiKey,
      OPENAI_BASE_URL: standIn.baseUrl.replace(/^ws/, 'http'),
    }),
  );
  const repos = engine.ctx.repos;
  const row = await repos.accounts.create('pcmu');
  await repos.ledger.adjust(row.id, dollarsToMicros(10), 'top-up');
  key = await repos.accounts.createKey(row.id);
  const trunk = await api('POST', '/user/sip-trunks', {
    sip_trunk_type: 'number',
    phone_number: NUMBER,
    sip_username: 'pcmu',
    sip_password: 'pcmu-secret',
    sip_address: '127.0.0.1',
    sip_calling_format: '+e164',
    inbound_authorization_type: 'ip',
    allowed_inbound_ips: ['127.0.0.1'],
    country_code: 'US',
  });
  expect(trunk.status).toBe(201);
  const assistant = await api('POST', '/user/assistant', {
    name: 'pcmu multimodal',
    type: 'inbound',
    mode: 'multimodal',
    voice_id: 101,
    language_id: 1,
    multimodal_model_id: 1,
    timezone: 'Europe/Paris',
    initial_message: GREETING,
    system_prompt: 'You are the front desk of a restaurant.',
    phone_number_id: trunk.body.data.phone_number_id,
  });
  if (assistant.status !== 201) throw new Error(`assistant: ${assistant.status} ${JSON.stringify(assistant.body)}`);
  phone = await TestPhone.create({ userName: 'carrier' });
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await engine?.close(0);
  await standIn?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Deterministic low-level noise (about -50 dBFS: under the model's VAD), distinct per frame. */
function noiseFrames(count: number): Int16Array[] {
  let x = 12345;
  return Array.from({ length: count }, () =>
    Int16Array.from({ length: 160 }, () => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return (x % 301) - 150;
    }),
  );
}

/**
 * `got` (a byte stream) cut into 20 ms payloads, against `sent` (20 ms payloads): how many of
 * `sent` appear in it in order (greedy; payloads may repeat, a tone does), and how many payloads
 * of `got` are neither one of `sent` nor μ-law silence (altered, or made up: concealment).
 */
function matches(sent: Buffer[], got: Buffer): { inOrder: number; foreign: number } {
  const known = new Set(sent.map((p) => p.toString('hex')));
  const silence = Buffer.alloc(160, 0xff).toString('hex');
  let j = 0;
  let inOrder = 0;
  let foreign = 0;
  for (let at = 0; at + 160 <= got.length; at += 160) {
    const chunk = got.subarray(at, at + 160);
    const hex = chunk.toString('hex');
    if (hex === silence) continue;
    if (!known.has(hex)) {
      foreign++;
      continue;
    }
    for (let k = j; k < sent.length; k++) {
      if (sent[k]!.equals(chunk)) {
        inOrder++;
        j = k + 1;
        break;
      }
    }
  }
  return { inOrder, foreign };
}

describe('a PCMU SIP call to a multimodal assistant', () => {
  it('passes μ-law through untouched both ways, negotiated as audio/pcmu', async () => {
    const call = await phone.call(`sip:${NUMBER}@127.0.0.1:${sipPort}`);
    const received: Buffer[] = [];
    call.rtp.socket.on('message', (msg: Buffer) => {
      const parsed = parseRtp(msg);
      if (parsed.ok && parsed.packet.payloadType === 0) received.push(Buffer.from(parsed.packet.payload));
    });
    await waitUntil(() => standIn.connections.length > 0 && standIn.last.audioSentMs.size > 0, 10_000, 'greeting from the model');
    const conn = standIn.last;
    const update = standIn.eventsOf('session.update', conn)[0]!.session as { audio: { input: Record<string, unknown>; output: Record<string, unknown> } };
    expect(update.audio.input.format).toEqual({ type: 'audio/pcmu' });
    expect(update.audio.output.format).toEqual({ type: 'audio/pcmu' });

    // Caller → model: 3 s of noise, each 20 ms a distinct payload.
    const frames = noiseFrames(150);
    const sentPayloads = frames.map((f) => ulaw.encode(f));
    let next = 0;
    call.rtp.play(() => frames[next++]);
    await waitUntil(() => next >= frames.length, 10_000, 'caller audio sent');
    const greetingMs = [...conn.audioSentMs.values()][0]!;
    await new Promise((r) => setTimeout(r, Math.max(400, greetingMs - 3000 + 400)));
    await call.hangup();

    const inbound = matches(sentPayloads, Buffer.concat(conn.appends));
    expect(inbound.inOrder).toBeGreaterThanOrEqual(0.9 * frames.length);
    // Anything else is the jitter buffer's concealment of a late packet (setInterval pacing on
    // a busy machine), never a re-encoded copy of the phone's audio.
    expect(inbound.foreign).toBeLessThanOrEqual(0.1 * frames.length);
    // Every append is one 20 ms payload.
    expect(conn.appends.every((a) => a.length === 160)).toBe(true);

    // Model → phone: the model's μ-law, cut into 20 ms payloads (the last padded with silence).
    const itemId = [...conn.audioSentMs.keys()][0]!;
    const model = Buffer.concat(conn.sent.filter((e) => e.type === 'response.output_audio.delta' && e.item_id === itemId).map((e) => Buffer.from(String(e.delta), 'base64')));
    const modelPayloads: Buffer[] = [];
    for (let at = 0; at < model.length; at += 160) {
      const p = Buffer.alloc(160, 0xff);
      model.copy(p, 0, at, Math.min(at + 160, model.length));
      modelPayloads.push(p);
    }
    const outbound = matches(modelPayloads, Buffer.concat(received));
    expect(outbound.foreign).toBe(0);
    expect(outbound.inOrder).toBeGreaterThanOrEqual(0.95 * modelPayloads.length);
    // The received stream holds the model's audio as one contiguous run of untouched bytes.
    expect(Buffer.concat(received).includes(Buffer.concat(modelPayloads.slice(0, 25)))).toBe(true);
  }, 60_000);
});
