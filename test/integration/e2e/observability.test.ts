/**
 * What an operator sees of a real call: the whole engine (startEngine) with its providers
 * pointed at the stand-ins, a caller over loopback SIP/RTP who hears the greeting, asks a
 * question, hears the answer and hangs up, plus REST requests (one with a query string, one
 * refused by the rate limit). Then /metrics is scraped over HTTP as Prometheus would, the
 * shipped Grafana dashboard is checked against it, and the captured JSON log is read.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPhone } from '../../support/test-phone.ts';
import { fixture8k, firstAudible, listen, speak, startWorld, waitQuiet, waitUntil, type World } from './world.ts';

const DASHBOARD = fileURLToPath(new URL('../../../docs/grafana/switchboard.json', import.meta.url));

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format, as far as prom-client writes it (no escapes in our label values). */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

let w: World;
let phone: TestPhone;
const lines: Array<Record<string, any>> = [];
let scraped: ReturnType<typeof parseExposition>;
let callUuid: string;

const sum = (name: string, match: Record<string, string> = {}): number =>
  scraped.samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

beforeAll(async () => {
  w = await startWorld({
    deepgram: { script: ['What are your opening hours?'] },
    log: { level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } },
  });
  w.chat.defaultResponse = { content: 'We are open from nine to five.' };
  phone = await TestPhone.create();
  await w.assistant();

  const call = await phone.dial(w.target());
  const heard = listen(call);
  expect((await call.outcome).status).toBe(200);
  const answeredAt = performance.now();
  await waitUntil(() => firstAudible(heard, answeredAt) !== undefined, 6000, 'greeting');
  await waitQuiet(heard, answeredAt, 800, 15_000);
  await speak(call, fixture8k('utt-opening-hours'));
  const askedAt = performance.now();
  await waitUntil(() => firstAudible(heard, askedAt) !== undefined, 8000, 'answer');
  await waitQuiet(heard, askedAt, 600, 15_000);
  await call.hangup();

  // Not polled over REST: those requests would spend the rate limit this test trips on purpose.
  await waitUntil(() => lines.some((l) => l.msg === 'call ended'), 10_000, 'call ended');
  callUuid = lines.find((l) => l.msg === 'call ended')!.call;
  expect(callUuid).toMatch(/^[0-9a-f-]{36}$/);

  // A request with a query string (its line must not carry it), and one over the rate limit.
  const res = await fetch(`${w.engine.httpUrl}/api/user/assistants?api_key=sk_query_secret&page=1`, {
    headers: { authorization: `Bearer ${w.account.key}` },
  });
  expect(res.status).toBe(200);
  for (let i = 0; i < 400; i++) {
    const r = await fetch(`${w.engine.httpUrl}/api/user/assistants`, { headers: { authorization: `Bearer ${w.account.key}` } });
    await r.body?.cancel();
    if (r.status === 429) break;
  }

  const metrics = await fetch(`${w.engine.httpUrl}/metrics`);
  expect(metrics.status).toBe(200);
  expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
  scraped = parseExposition(await metrics.text());
}, 120_000);

afterAll(async () => {
  await phone?.close();
  await w?.close();
});

describe('/metrics after a real call', () => {
  it('counts the call with its labels, its setup and duration, and no call is left active', () => {
    expect(sum('switchboard_calls_total', { direction: 'inbound', mode: 'pipeline', status: 'completed' })).toBe(1);
    expect(sum('switchboard_calls_active', { direction: 'inbound', mode: 'pipeline' })).toBe(0);
    expect(sum('switchboard_call_duration_seconds_count', { direction: 'inbound' })).toBe(1);
    const seconds = sum('switchboard_call_duration_seconds_sum', { direction: 'inbound' });
    expect(seconds).toBeGreaterThan(1);
    expect(seconds).toBeLessThan(60);
    expect(sum('switchboard_call_setup_seconds_count', { direction: 'inbound' })).toBe(1);
    expect(sum('switchboard_call_setup_seconds_sum', { direction: 'inbound' })).toBeLessThan(5);
  });

  it('observes the call\'s RTP loss (none over loopback) and jitter at its end', () => {
    expect(sum('switchboard_rtp_packets_lost_ratio_count')).toBe(1);
    expect(sum('switchboard_rtp_packets_lost_ratio_sum')).toBeLessThan(0.01);
    expect(sum('switchboard_rtp_jitter_seconds_count')).toBe(1);
    const jitter = sum('switchboard_rtp_jitter_seconds_sum');
    expect(jitter).toBeGreaterThanOrEqual(0);
    expect(jitter).toBeLessThan(0.1);
  });

  it('moved the SIP counters: INVITE, ACK and BYE received; 180, 200 sent', () => {
    for (const method of ['INVITE', 'ACK', 'BYE']) expect(sum('switchboard_sip_requests_total', { method }), method).toBeGreaterThanOrEqual(1);
    expect(sum('switchboard_sip_responses_total', { code: '200' })).toBeGreaterThanOrEqual(2); // the INVITE's and the BYE's
    expect(sum('switchboard_sip_responses_total', { code: '180' })).toBeGreaterThanOrEqual(1);
    expect(scraped.samples.some((s) => s.name === 'switchboard_sip_abuse_bans_total')).toBe(true);
  });

  it('counted the stand-in providers: STT (deepgram), LLM and TTS (openai), with first-byte latency', () => {
    expect(sum('switchboard_provider_requests_total', { kind: 'stt', provider: 'deepgram', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sum('switchboard_provider_requests_total', { kind: 'llm', provider: 'openai', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    // The greeting and the answer (at least): each a TTS request, none failed.
    expect(sum('switchboard_provider_requests_total', { kind: 'tts', provider: 'openai' })).toBeGreaterThanOrEqual(2);
    expect(sum('switchboard_provider_requests_total', { outcome: 'error' })).toBe(0);
    for (const [kind, provider] of [['llm', 'openai'], ['tts', 'openai'], ['stt', 'deepgram']] as const) {
      expect(sum('switchboard_provider_first_byte_seconds_count', { kind, provider }), kind).toBeGreaterThanOrEqual(1);
      const mean = sum('switchboard_provider_first_byte_seconds_sum', { kind, provider }) / sum('switchboard_provider_first_byte_seconds_count', { kind, provider });
      expect(mean, kind).toBeGreaterThan(0);
      expect(mean, kind).toBeLessThan(5);
    }
  });

  it('has the turn latency, the REST rate limit, the webhook outbox and the process metrics', () => {
    expect(sum('switchboard_turn_latency_seconds_count', { part: 'llm_first_token' })).toBeGreaterThanOrEqual(1);
    expect(scraped.types.get('switchboard_interruptions_total')).toBe('counter');
    expect(sum('switchboard_rate_limited_total')).toBe(1);
    expect(scraped.types.get('switchboard_webhook_outbox_pending')).toBe('gauge');
    expect(sum('switchboard_webhook_outbox_pending')).toBe(0);
    expect(scraped.types.get('switchboard_webhook_deliveries_total')).toBe('counter');
    expect(sum('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sum('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(sum('switchboard_http_request_duration_seconds_count')).toBeGreaterThan(1);
  });

  it('keeps labels low-cardinality: no uuid and no phone number in any label value', () => {
    for (const s of scraped.samples) {
      for (const v of Object.values(s.labels)) {
        expect(v, `${s.name}`).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
        expect(v, `${s.name}`).not.toMatch(/^\+?\d{7,}$/);
      }
    }
  });
});

describe('the Grafana dashboard', () => {
  it('is a dashboard model whose every queried metric is on /metrics', () => {
    const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      __inputs: Array<{ name: string; type: string; pluginId: string }>;
      panels: Array<{ title: string; type: string; datasource?: { uid?: string }; targets?: Array<{ expr: string }> }>;
      title: string;
      uid: string;
      schemaVersion: number;
    };
    expect(dash.__inputs).toContainEqual(expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' }));
    expect(dash.title).toBeTruthy();
    expect(dash.schemaVersion).toBeGreaterThan(30);
    const queries = dash.panels.filter((p) => p.type !== 'row').flatMap((p) => {
      expect(p.datasource?.uid, p.title).toBe('${DS_PROMETHEUS}');
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      return p.targets!.map((t) => t.expr);
    });
    // Declared on /metrics (a labelled counter nothing has counted yet has its TYPE line only).
    const exposed = new Set(scraped.samples.map((s) => s.name));
    for (const [name, type] of scraped.types) {
      exposed.add(name);
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exposed.add(name + suffix);
    }
    const queried = new Set(queries.flatMap((q) => [...q.matchAll(/\b((?:switchboard|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!)));
    expect(queried.size).toBeGreaterThan(20);
    const missing = [...queried].filter((name) => !exposed.has(name));
    expect(missing).toEqual([]);
    // Every metric this engine names on purpose has a panel.
    for (const name of [
      'switchboard_calls_active', 'switchboard_calls_total', 'switchboard_call_setup_seconds_bucket', 'switchboard_call_duration_seconds_bucket',
      'switchboard_sip_requests_total', 'switchboard_sip_responses_total', 'switchboard_rtp_packets_lost_ratio_bucket', 'switchboard_rtp_jitter_seconds_bucket',
      'switchboard_provider_requests_total', 'switchboard_provider_first_byte_seconds_bucket', 'switchboard_interruptions_total',
      'switchboard_webhook_outbox_pending', 'switchboard_webhook_deliveries_total', 'switchboard_rate_limited_total', 'switchboard_sip_abuse_bans_total',
      'switchboard_turn_latency_seconds_bucket', 'process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds',
    ]) expect(queried.has(name), name).toBe(true);
  });
});

describe('the log of the call', () => {
  it('has call started, answered and ended lines carrying the call uuid, in order', () => {
    const ofCall = lines.filter((l) => l.call === callUuid);
    const msgs = ofCall.map((l) => l.msg);
    const started = ofCall.find((l) => l.msg === 'call started')!;
    expect(started).toMatchObject({ level: 30, direction: 'inbound', from: expect.any(String), to: '+14155550100', mode: 'pipeline', assistant: expect.any(Number) });
    expect(started.remote).toMatch(/^udp:127\.0\.0\.1:\d+$/);
    const answered = ofCall.find((l) => l.msg === 'call answered')!;
    expect(answered).toMatchObject({ level: 30, codec: expect.any(String), media: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
    // The caller's offered codecs on the start line; the answer's pick among them on the answered one.
    expect(started.codecs).toEqual(expect.arrayContaining([expect.any(String)]));
    expect((started.codecs as string[]).map((c) => c.toLowerCase())).toContain(String(answered.codec).toLowerCase());
    const ended = ofCall.find((l) => l.msg === 'call ended')!;
    expect(ended).toMatchObject({ level: 30, cause: 'remote-hangup', status: 'completed', costUsd: 0.1 });
    expect(ended.durationS).toBeGreaterThan(1);
    expect(msgs.indexOf('call started')).toBeLessThan(msgs.indexOf('call answered'));
    expect(msgs.indexOf('call answered')).toBeLessThan(msgs.indexOf('call ended'));
    // Turn lines are at debug, and they carry the uuid too.
    expect(ofCall.filter((l) => l.msg === 'caller turn' || l.msg === 'assistant turn').every((l) => l.level === 20)).toBe(true);
    expect(ofCall.some((l) => l.msg === 'assistant turn')).toBe(true);
  });

  it('writes one line per HTTP request, at completion, with the path and no query string', () => {
    const requests = lines.filter((l) => l.msg === 'request');
    const withQuery = requests.filter((l) => l.path === '/api/user/assistants' && l.route === '/api/user/assistants');
    expect(withQuery.length).toBeGreaterThan(1);
    expect(withQuery[0]).toMatchObject({ method: 'GET', status: 200, durationMs: expect.any(Number), reqId: expect.any(String) });
    expect(requests.some((l) => l.status === 429)).toBe(true);
    expect(JSON.stringify(lines)).not.toContain('sk_query_secret');
    expect(lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toEqual([]);
  });
});
