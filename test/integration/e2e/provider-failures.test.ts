/**
 * Provider failures on pipeline calls, as the caller and the operator live them: the whole engine
 * over loopback SIP/RTP, its STT, LLM and TTS stand-ins failing at the start or mid-call. Each
 * call must never go silent: the caller hears an apology (non-silent audio after the failure),
 * the record says `failed` with an end cause naming the provider and the reason, a warning log
 * line carries the call's uuid, provider and reason (and no key), and the charge follows
 * docs/FAILURES-AND-BILLING.md: nothing when the assistant never spoke.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spokenLine } from '../../../src/call/spoken-lines.ts';
import { SPEECH_PATH } from '../../support/openai-audio-stand-in.ts';
import { TestPhone, type PhoneCall } from '../../support/test-phone.ts';
import { firstAudible, fixture8k, listen, speak, startWorld, waitQuiet, waitUntil, type Arrival, type World } from './world.ts';

const FAREWELL = spokenLine('model-lost', 'en-US');
const APOLOGY = spokenLine('apology', 'en-US');
/** A minute's price in dollars (src/billing/prices.ts). */
const ONE_MINUTE = 0.1;

let w: World;
let phone: TestPhone;

beforeAll(async () => {
  w = await startWorld({
    captureLogs: true,
    deepgram: { script: ['What are your opening hours?', 'Can I book a table for two?'] },
    // The greeting's first audio comes after an STT refusal on loopback (a few ms): a call whose
    // STT is refused at the start has said nothing when the failure ends it.
    audio: { speech: { firstByteLatencyMs: 400 } },
  });
  await w.assistant();
  phone = await TestPhone.create();
}, 60_000);

afterEach(() => {
  w.deepgram.refuseAll = undefined;
  w.audio.clearFaults();
  w.chat.defaultResponse = { content: 'We open at nine.' };
});

afterAll(async () => {
  await phone?.close();
  await w?.close();
});

interface Answered {
  call: PhoneCall;
  ended: () => boolean;
  heard: Arrival[];
  answeredAt: number;
}

async function dial(): Promise<Answered> {
  const call = await phone.dial(w.target());
  const heard = listen(call);
  let ended = false;
  void call.ended.then(() => (ended = true));
  expect((await call.outcome).status).toBe(200);
  return { call, ended: () => ended, heard, answeredAt: performance.now() };
}

/** The greeting played out (audible, then 800 ms of quiet). */
async function greeted(a: Answered): Promise<void> {
  await waitUntil(() => firstAudible(a.heard, a.answeredAt) !== undefined, 5000, 'greeting');
  await waitQuiet(a.heard, a.answeredAt, 800, 15_000);
}

/** The engine hangs up (its BYE reaches the phone) within `ms`. */
async function hungUpByEngine(a: Answered, ms = 20_000): Promise<void> {
  await waitUntil(a.ended, ms, 'the engine ending the call');
}

/** The newest call record once its post-call work (billing) is done. */
async function finishedRecord(): Promise<Record<string, any>> {
  const list = await w.api('GET', '/user/calls?limit=1');
  const id = list.body[0].id as number;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const c = await w.engine.ctx.repos.calls.getById(id);
    const marker = c?.details?.post_call as { finished_at?: string } | undefined;
    if (marker?.finished_at) break;
    if (Date.now() > deadline) throw new Error(`call ${id} was not finished: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return (await w.api('GET', `/user/calls/${id}`)).body;
}

function warnings(uuid: string): Record<string, unknown>[] {
  return w.logs.filter((l) => l.level === 40 && l.call === uuid && typeof l.provider === 'string');
}

function expectNoKeysLogged(): void {
  const text = JSON.stringify(w.logs);
  expect(text).not.toContain(w.audio.apiKey);
  expect(text).not.toContain(w.deepgram.options.apiKey);
}

/** What the engine asked the TTS stand-in to say (and was answered). */
function spokenByTts(): string {
  return w.audio
    .requestsTo(SPEECH_PATH)
    .filter((r) => r.fault === undefined)
    .map((r) => String(r.json?.input ?? ''))
    .join(' ');
}

describe('pipeline calls when a provider fails', () => {
  it('STT refused at the start (401): apology, BYE, failed `stt-unavailable: deepgram 401`, not charged', async () => {
    w.deepgram.refuseAll = 401;
    const before = w.audio.requests.length;
    const a = await dial();
    await hungUpByEngine(a);
    // Heard: the closing apology in the assistant's voice (the greeting was cut before its first word).
    expect(firstAudible(a.heard, a.answeredAt)).toBeDefined();
    const said = w.audio.requests.slice(before).map((r) => String(r.json?.input ?? '')).join(' ');
    expect(said).toContain(FAREWELL.split('.')[0]);
    const rec = await finishedRecord();
    const uuid = rec.uuid as string;
    expect(rec, JSON.stringify(rec.transcript)).toMatchObject({ status: 'failed', end_cause: 'stt-unavailable: deepgram 401', cost: 0 });
    expect(warnings(uuid)).toContainEqual(expect.objectContaining({ call: uuid, provider: 'deepgram', reason: '401', kind: 'stt-unavailable' }));
    expectNoKeysLogged();
  }, 60_000);

  it('STT dropped mid-call and not reachable again (503): apology, BYE, failed, charged (the greeting was heard)', async () => {
    const a = await dial();
    await greeted(a);
    const failedAt = performance.now();
    w.deepgram.refuseAll = 503;
    w.deepgram.drop();
    await hungUpByEngine(a);
    expect(firstAudible(a.heard, failedAt), 'the apology after the drop').toBeDefined();
    const rec = await finishedRecord();
    const uuid = rec.uuid as string;
    expect(rec).toMatchObject({ status: 'failed', end_cause: 'stt-unavailable: deepgram 503', cost: ONE_MINUTE });
    expect(rec.transcript.at(-1)).toMatchObject({ speaker: 'assistant', kind: 'apology', text: FAREWELL });
    expect(warnings(uuid)).toContainEqual(expect.objectContaining({ provider: 'deepgram', reason: '503' }));
  }, 60_000);

  it('LLM 500 on two turns in a row: an apology that carries on, then the closing one and BYE; `llm-error: openai 500`', async () => {
    w.chat.defaultResponse = { status: 500 };
    const a = await dial();
    await greeted(a);
    await speak(a.call, fixture8k('utt-opening-hours'));
    const firstFailure = performance.now();
    await waitUntil(() => firstAudible(a.heard, firstFailure) !== undefined, 10_000, 'the first apology');
    await waitQuiet(a.heard, firstFailure, 800, 15_000);
    expect(a.ended()).toBe(false); // the call went on after the first failed turn
    await speak(a.call, fixture8k('utt-book-table'));
    const secondFailure = performance.now();
    await hungUpByEngine(a);
    expect(firstAudible(a.heard, secondFailure), 'the closing apology').toBeDefined();
    expect(spokenByTts()).toContain(APOLOGY.split('.')[0]);
    const rec = await finishedRecord();
    const uuid = rec.uuid as string;
    expect(rec).toMatchObject({ status: 'failed', end_cause: 'llm-error: openai 500', cost: ONE_MINUTE });
    const warned = warnings(uuid).filter((l) => l.provider === 'openai' && l.reason === '500');
    expect(warned.map((l) => l.msg)).toEqual([expect.stringContaining('the call goes on'), expect.stringContaining('ending the call')]);
  }, 90_000);

  it('LLM 401 (refused key) ends the call after one apology: `llm-error: openai 401`', async () => {
    w.chat.defaultResponse = { status: 401 };
    const a = await dial();
    await greeted(a);
    await speak(a.call, fixture8k('utt-opening-hours'));
    const failedAt = performance.now();
    await hungUpByEngine(a);
    expect(firstAudible(a.heard, failedAt), 'the closing apology').toBeDefined();
    const rec = await finishedRecord();
    const uuid = rec.uuid as string;
    expect(rec).toMatchObject({ status: 'failed', end_cause: 'llm-error: openai 401' });
    expect(rec.transcript.filter((t: Record<string, unknown>) => t.kind === 'apology').map((t: Record<string, unknown>) => t.text)).toEqual([FAREWELL]);
    expect(warnings(uuid)).toContainEqual(expect.objectContaining({ provider: 'openai', reason: '401', kind: 'llm-error' }));
    expectNoKeysLogged();
  }, 60_000);

  it('TTS failing mid-call: the greeting plays, a reply whose TTS fails (500) gets the offline apology and the call goes on; the next one (connection dropped) ends it; `tts-error: openai connection reset`, charged', async () => {
    const before = w.audio.requests.length;
    const a = await dial();
    await greeted(a);
    // The first reply's speech fails on every attempt (each retry included) with a 500.
    w.audio.fail(SPEECH_PATH, { kind: 'status', status: 500 }, 1000);
    await speak(a.call, fixture8k('utt-opening-hours'));
    const firstFailure = performance.now();
    await waitUntil(() => firstAudible(a.heard, firstFailure) !== undefined, 15_000, 'the offline apology');
    await waitQuiet(a.heard, firstFailure, 800, 20_000);
    expect(a.ended()).toBe(false); // one failed utterance: the call goes on
    w.audio.clearFaults();
    // The next reply's speech: the vendor drops the connection on every attempt.
    w.audio.fail(SPEECH_PATH, { kind: 'drop' }, 1000);
    await speak(a.call, fixture8k('utt-book-table'));
    const secondFailure = performance.now();
    await hungUpByEngine(a, 30_000);
    expect(firstAudible(a.heard, secondFailure), 'the offline closing apology').toBeDefined();
    const rec = await finishedRecord();
    const uuid = rec.uuid as string;
    // The assistant spoke (the greeting played out): charged for its minute though it failed.
    expect(rec, JSON.stringify(rec.transcript)).toMatchObject({ status: 'failed', end_cause: 'tts-error: openai connection reset', cost: ONE_MINUTE });
    const assistant = (rec.transcript as Record<string, any>[]).filter((t) => t.speaker === 'assistant');
    const greeting = assistant[0]!;
    expect(greeting).toMatchObject({ kind: 'greeting' });
    expect(greeting.end_ms - greeting.start_ms).toBeGreaterThanOrEqual(300);
    // Both replies played nothing; both apologies played, in that order.
    expect(assistant.filter((t) => t.kind === 'reply').map((t) => t.end_ms === t.start_ms)).toEqual([true, true]);
    expect(assistant.filter((t) => t.kind === 'apology').map((t) => t.text)).toEqual([APOLOGY, FAREWELL]);
    // The apologies came from the offline voice: the TTS stand-in was never asked for them, and
    // every request after the greeting failed with the fault queued for it.
    const asked = w.audio.requests.slice(before).filter((r) => r.path === SPEECH_PATH);
    const served = asked.filter((r) => r.fault === undefined).map((r) => String(r.json?.input ?? ''));
    expect(served.length).toBeGreaterThan(0);
    for (const text of served) expect(greeting.text).toContain(text);
    expect(asked.slice(served.length).every((r) => r.fault !== undefined)).toBe(true);
    expect(new Set(asked.map((r) => r.fault).filter(Boolean))).toEqual(new Set(['status', 'drop']));
    expect(served.join(' ')).not.toContain(APOLOGY.split('.')[0]);
    expect(served.join(' ')).not.toContain(FAREWELL.split('.')[0]);
    const warned = warnings(uuid).filter((l) => l.kind === 'tts-error' && l.provider === 'openai');
    expect(warned.map((l) => [l.reason, l.msg])).toEqual([
      ['500', expect.stringContaining('the call goes on')],
      ['connection reset', expect.stringContaining('ending the call')],
    ]);
    expectNoKeysLogged();
  }, 120_000);

  it('TTS 500 from the start: the offline voice apologises, then ends the call; `tts-error: openai 500`, not charged', async () => {
    w.audio.fail(SPEECH_PATH, { kind: 'status', status: 500 }, 1000);
    const before = w.audio.requests.length;
    const a = await dial();
    // The greeting failed: the caller hears the offline voice's apology instead of silence.
    await waitUntil(() => firstAudible(a.heard, a.answeredAt) !== undefined, 15_000, 'the offline apology');
    await waitQuiet(a.heard, a.answeredAt, 800, 20_000);
    await speak(a.call, fixture8k('utt-opening-hours'));
    const secondFailure = performance.now();
    await hungUpByEngine(a, 30_000);
    expect(firstAudible(a.heard, secondFailure), 'the offline closing apology').toBeDefined();
    const rec = await finishedRecord();
    const uuid = rec.uuid as string;
    expect(rec).toMatchObject({ status: 'failed', end_cause: 'tts-error: openai 500', cost: 0 });
    // What was heard came from the offline voice: every TTS request failed, the greeting and the
    // reply played nothing, and the two apologies (carry on, then the closing one) played.
    const assistant = (rec.transcript as Record<string, any>[]).filter((t) => t.speaker === 'assistant');
    expect(assistant.filter((t) => t.kind !== 'apology').every((t) => t.end_ms === t.start_ms)).toBe(true);
    expect(assistant.filter((t) => t.kind === 'apology').map((t) => t.text)).toEqual([APOLOGY, FAREWELL]);
    const asked = w.audio.requests.slice(before).filter((r) => r.path === SPEECH_PATH);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((r) => r.fault === 'status')).toBe(true);
    expect(warnings(uuid)).toContainEqual(expect.objectContaining({ provider: 'openai', reason: '500', kind: 'tts-error' }));
  }, 90_000);
});
