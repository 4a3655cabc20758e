/**
 * A multimodal assistant whose realtime model fails, over a real loopback SIP call (the whole
 * engine, OPENAI_BASE_URL at the realtime stand-in, the caller a test phone with real RTP): the
 * model refusing the connection at the start, and the model's socket closing mid-call with 1011
 * and refusing the reconnect. Either way the caller hears the offline voice's apology (the model
 * was the voice), the engine hangs up, the record is `failed` with the provider and reason, a
 * warning log line carries the call's uuid, and only the call where the model had spoken is charged.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { startEngine, type Engine } from '../../../src/main.ts';
import { dollarsToMicros } from '../../../src/util/money.ts';
import { RealtimeStandIn } from '../../support/realtime-stand-in.ts';
import { TestPhone, type PhoneCall } from '../../support/test-phone.ts';
import { firstAudible, freePort, listen, waitQuiet, waitUntil, type Arrival } from '../e2e/world.ts';

const NUMBER = '+14155550177';
const GREETING = 'Hello, thanks for calling Luigi. How can I help you today?';

let engine: Engine;
let standIn: RealtimeStandIn;
let phone: TestPhone;
let dataDir: string;
let sipPort: number;
let key: string;
const logs: Record<string, unknown>[] = [];

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
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-rt-failures-'));
  sipPort = await freePort();
  let httpPort = await freePort();
  while (httpPort === sipPort) httpPort = await freePort();
  const rtpMin = 48_000 + (process.pid % 40) * 50 + 25;
  engine = await startEngine(
    loadConfig({
      SWITCHBOARD_DATA_DIR: dataDir,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(httpPort),
      SIP_HOST: '127.0.0.1',
      SIP_PORT: String(sipPort),
      SIP_PUBLIC_HOST: '127.0.0.1',
      RTP_PORT_MIN: String(rtpMin),
      RTP_PORT_MAX: String(rtpMin + 24),
      LOG_LEVEL: 'warn',
      OPENAI_API_KEY: standIn.apiKey,
      OPENAI_BASE_URL: standIn.baseUrl.replace(/^ws/, 'http'),
    }),
    { logDestination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) } },
  );
  const repos = engine.ctx.repos;
  const row = await repos.accounts.create('rt-failures');
  await repos.ledger.adjust(row.id, dollarsToMicros(10), 'top-up');
  key = await repos.accounts.createKey(row.id);
  const trunk = await api('POST', '/user/sip-trunks', {
    sip_trunk_type: 'number',
    phone_number: NUMBER,
    sip_username: 'rtf',
    sip_password: 'rtf-secret',
    sip_address: '127.0.0.1',
    sip_calling_format: '+e164',
    inbound_authorization_type: 'ip',
    allowed_inbound_ips: ['127.0.0.1'],
    country_code: 'US',
  });
  expect(trunk.status).toBe(201);
  const assistant = await api('POST', '/user/assistant', {
    name: 'failing multimodal',
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

afterEach(() => {
  standIn.refuseAll = undefined;
});

afterAll(async () => {
  await phone?.close();
  await engine?.close(0);
  await standIn?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function dial(): Promise<{ call: PhoneCall; heard: Arrival[]; answeredAt: number; ended: () => boolean }> {
  const call = await phone.dial(`sip:${NUMBER}@127.0.0.1:${sipPort}`);
  const heard = listen(call);
  let ended = false;
  void call.ended.then(() => (ended = true));
  expect((await call.outcome).status).toBe(200);
  return { call, heard, answeredAt: performance.now(), ended: () => ended };
}

/** The newest call record once its post-call work (billing) is done. */
async function finishedRecord(): Promise<Record<string, any>> {
  const id = (await api('GET', '/user/calls?limit=1')).body[0].id as number;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const c = await engine.ctx.repos.calls.getById(id);
    if ((c?.details?.post_call as { finished_at?: string } | undefined)?.finished_at) break;
    if (Date.now() > deadline) throw new Error(`call ${id} was not finished: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return (await api('GET', `/user/calls/${id}`)).body;
}

function warningFor(uuid: string): Record<string, unknown> | undefined {
  return logs.find((l) => l.level === 40 && l.call === uuid && typeof l.kind === 'string');
}

describe('a multimodal call whose realtime model fails', () => {
  it('model refuses the connection (401): offline apology, BYE, `realtime-unavailable: openai-realtime 401`, not charged', async () => {
    standIn.refuseAll = 401;
    const a = await dial();
    await waitUntil(a.ended, 20_000, 'the engine ending the call');
    expect(firstAudible(a.heard, a.answeredAt), 'the offline apology').toBeDefined();
    const rec = await finishedRecord();
    expect(rec).toMatchObject({ status: 'failed', end_cause: 'realtime-unavailable: openai-realtime 401', cost: 0 });
    expect(rec.transcript).toEqual([expect.objectContaining({ speaker: 'assistant', kind: 'apology' })]);
    expect(warningFor(rec.uuid)).toMatchObject({ call: rec.uuid, provider: 'openai-realtime', reason: '401', kind: 'realtime-unavailable' });
    expect(JSON.stringify(logs)).not.toContain(standIn.apiKey);
  }, 60_000);

  it('model drops mid-call (1011) and refuses the reconnect: offline apology, BYE, `realtime-dropped: openai-realtime 1011`, charged', async () => {
    const connections = standIn.connections.length;
    const a = await dial();
    await waitUntil(() => firstAudible(a.heard, a.answeredAt) !== undefined, 10_000, 'greeting from the model');
    await waitQuiet(a.heard, a.answeredAt, 800, 15_000);
    expect(standIn.connections.length).toBe(connections + 1);
    standIn.refuseAll = 503;
    const droppedAt = performance.now();
    standIn.closeWith(1011);
    await waitUntil(a.ended, 20_000, 'the engine ending the call');
    expect(firstAudible(a.heard, droppedAt), 'the offline apology after the drop').toBeDefined();
    const rec = await finishedRecord();
    expect(rec).toMatchObject({ status: 'failed', end_cause: 'realtime-dropped: openai-realtime 1011', cost: 0.1 });
    expect(rec.transcript[0]).toMatchObject({ speaker: 'assistant', kind: 'greeting' });
    expect(rec.transcript.at(-1)).toMatchObject({ speaker: 'assistant', kind: 'apology' });
    expect(warningFor(rec.uuid)).toMatchObject({ provider: 'openai-realtime', reason: '1011', kind: 'realtime-dropped' });
  }, 60_000);
});
