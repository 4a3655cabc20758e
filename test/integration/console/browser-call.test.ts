/**
 * A call from Chromium into a pipeline assistant over WebRTC, through the whole engine (the e2e
 * world: real VAD, the STT/LLM/TTS stand-ins): the fake microphone plays a WAV made of two
 * utterances at set times; the page's own level meter (an AnalyserNode on the remote track)
 * shows the greeting and the reply arriving and the reply stopping when the second utterance
 * barges in; then the call record over the API: direction `web`, completed, recorded with its
 * tape, a transcript with both sides and the cut reply, and a charge.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resample } from '../../../src/audio/resample.ts';
import { readWav, toMono, writeWav } from '../../../src/audio/wav.ts';
import { chromiumAvailable, collectPageErrors, launchChromium, screenshot } from '../../support/browser.ts';
import { startWorld, type World } from '../e2e/world.ts';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/audio/', import.meta.url));
const RATE = 48_000;
const ANSWER =
  'We are open from nine in the morning to five in the evening, Monday to Friday. ' +
  'On Saturdays we open at ten and close at four. On Sundays we are closed, but you can book online at any time.';
/** Where the meter counts as "the assistant is speaking" / "quiet" (dBFS, RMS of the remote track). */
const AUDIBLE_DBFS = -40;
const QUIET_DBFS = -50;

function fixture48k(name: string): Int16Array {
  const wav = readWav(readFileSync(`${FIXTURES}${name}.wav`));
  return resample(toMono(wav), wav.sampleRate, RATE);
}

/**
 * The microphone: silence while the greeting plays, the question, a pause while the answer
 * starts, the barge-in while the (long) answer plays, then silence. From getUserMedia on.
 */
function micWav(dir: string): { file: string; questionAtMs: number; bargeAtMs: number } {
  const question = fixture48k('utt-opening-hours');
  const barge = fixture48k('utt-book-table');
  const questionAtMs = 7_000;
  const bargeAtMs = questionAtMs + (question.length / RATE) * 1000 + 4_000;
  const totalMs = bargeAtMs + (barge.length / RATE) * 1000 + 30_000;
  const pcm = new Int16Array(Math.round((totalMs * RATE) / 1000));
  pcm.set(question, Math.round((questionAtMs * RATE) / 1000));
  pcm.set(barge, Math.round((bargeAtMs * RATE) / 1000));
  const file = path.join(dir, 'mic.wav');
  writeFileSync(file, writeWav({ sampleRate: RATE, channels: 1, samples: pcm }));
  return { file, questionAtMs, bargeAtMs };
}

let w: World;
let browser: Browser;
let dir: string;
let mic: ReturnType<typeof micWav>;
const decisions: number[] = [];

beforeAll(async () => {
  if (!chromiumAvailable) return;
  dir = mkdtempSync(path.join(os.tmpdir(), 'sb-browser-call-'));
  mic = micWav(dir);
  w = await startWorld({ deepgram: { script: ['What are your opening hours?', 'Actually, can I book a table for two tomorrow?'] } });
  w.chat.defaultResponse = { content: ANSWER };
  const counter = w.engine.calls.engineContext.metrics!.interruptions;
  const inc = counter.inc.bind(counter);
  counter.inc = ((labels?: { taken?: string }) => {
    if (labels?.taken === 'true') decisions.push(Date.now());
    return inc(labels as never);
  }) as typeof counter.inc;
  browser = await launchChromium({ fakeAudio: `${mic.file}%noloop`, webrtcLoopback: true });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await w?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The meter's readings, sampled in the page every 20 ms: [Date.now(), dBFS]. */
async function startSampling(page: Page): Promise<void> {
  await page.evaluate(() => {
    const g = globalThis as unknown as { levels: [number, number][] };
    g.levels = [];
    setInterval(() => {
      const m = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(n: string): string | null } | null } }).document.querySelector('[role=meter]');
      if (m) g.levels.push([Date.now(), Number(m.getAttribute('aria-valuenow'))]);
    }, 20);
  });
}

async function levels(page: Page): Promise<[number, number][]> {
  return page.evaluate(() => (globalThis as unknown as { levels: [number, number][] }).levels);
}

describe.skipIf(!chromiumAvailable)('a browser call over WebRTC', () => {
  it('greets, answers, stops at barge-in, hangs up, and leaves a web call record that is recorded and charged', async () => {
    const assistantId = await w.assistant({ record: true, name: 'Luigi front desk' });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    const urls: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    await page.goto(`${w.engine.httpUrl}/console`);
    await page.getByLabel('API key').fill(w.account.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 10_000 });
    await page.goto(`${w.engine.httpUrl}/console/assistants/${assistantId}/talk`);
    await page.getByRole('heading', { name: 'Talk to Luigi front desk' }).waitFor({ timeout: 10_000 });
    await startSampling(page);

    await page.getByRole('button', { name: 'Call' }).click();
    const status = page.getByRole('status');
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 20_000 }).toBe('in-call');
    const answeredAt = Date.now();

    // The greeting arrives: the remote track's level rises.
    await expect.poll(async () => (await levels(page)).some(([t, db]) => t >= answeredAt && db > AUDIBLE_DBFS), { timeout: 10_000 }).toBe(true);
    await screenshot(page, 'browser-call-greeting');

    // The question becomes a caller turn the LLM answers; the answer is heard.
    await expect.poll(() => w.chat.requests.length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(w.chat.requests[0]!.messages.at(-1)).toMatchObject({ role: 'user', content: 'What are your opening hours?' });
    const askedAt = Date.now();
    await expect.poll(async () => (await levels(page)).some(([t, db]) => t >= askedAt && db > AUDIBLE_DBFS), { timeout: 10_000 }).toBe(true);

    // The second utterance barges in while the answer plays: the engine decides, the audio stops.
    await expect.poll(() => decisions.length, { timeout: 20_000 }).toBeGreaterThan(0);
    const decidedAt = decisions[0]!;
    await new Promise((r) => setTimeout(r, 1500));
    const after = (await levels(page)).filter(([t]) => t > decidedAt);
    const quietAt = after.find(([, db]) => db < QUIET_DBFS)?.[0];
    expect(quietAt, JSON.stringify(after.slice(0, 60))).toBeDefined();
    // Within the browser's jitter buffer and playout (plus a loaded machine's slack) of the decision.
    expect(quietAt! - decidedAt).toBeLessThan(800);

    // The barge-in's own reply, then hang up from the page.
    await expect.poll(() => w.chat.requests.length, { timeout: 20_000 }).toBeGreaterThan(1);
    await new Promise((r) => setTimeout(r, 1000));
    await screenshot(page, 'browser-call-in-call');
    await page.setViewportSize({ width: 375, height: 700 });
    await screenshot(page, 'browser-call-in-call-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'Hang up' }).click();
    await expect.poll(() => status.getAttribute('data-state'), { timeout: 10_000 }).toBe('ended');
    await expect(status.textContent()).resolves.toMatch(/Call ended\. Call #\d+\. \(remote-hangup\)/);
    await screenshot(page, 'browser-call-ended');

    const list = await w.api('GET', '/user/calls?limit=1');
    const id = list.body[0].id as number;
    const rec = await w.waitCall(id, (c) => c.status === 'completed' && c.cost > 0 && (c.transcript?.length ?? 0) > 0, 20_000);
    expect(rec).toMatchObject({ direction: 'web', status: 'completed', end_cause: 'remote-hangup', assistant_id: assistantId });
    expect(rec.recording_url).toMatch(new RegExp(`/api/user/calls/${id}/recording$`));
    expect(rec.tape_url).toMatch(new RegExp(`/api/user/calls/${id}/tape$`));
    const transcript = rec.transcript as Record<string, any>[];
    expect(new Set(transcript.map((t) => t.speaker))).toEqual(new Set(['assistant', 'caller']));
    expect(transcript[0]).toMatchObject({ speaker: 'assistant', kind: 'greeting' });
    expect(transcript.find((t) => t.speaker === 'caller')).toMatchObject({ text: 'What are your opening hours?' });
    expect(transcript.find((t) => t.interrupted)).toMatchObject({ speaker: 'assistant', kind: 'reply', full_text: ANSWER });
    // The reply's latency parts, as on a phone call.
    expect(transcript.find((t) => t.kind === 'reply')!.latency).toMatchObject({
      endpointing_ms: expect.any(Number),
      llm_first_token_ms: expect.any(Number),
      tts_first_audio_ms: expect.any(Number),
      first_frame_out_ms: expect.any(Number),
      total_ms: expect.any(Number),
    });
    expect(rec.quality).toMatchObject({ codec: 'opus', srtp: 'DTLS-SRTP' });
    expect(rec.quality.packets_received).toBeGreaterThan(500);
    // The recording and the tape are there to download; the tape holds the browser's Opus packets.
    const wav = await fetch(`${w.engine.httpUrl}/api/user/calls/${id}/recording`, { headers: { authorization: `Bearer ${w.account.key}` } });
    expect(wav.status).toBe(200);
    const tape = await fetch(`${w.engine.httpUrl}/api/user/calls/${id}/tape`, { headers: { authorization: `Bearer ${w.account.key}` } });
    expect(tape.status).toBe(200);
    const tapeJson = (await tape.json()) as { call: { direction: string }; media: { codec: string }[]; packets: unknown[] };
    expect(tapeJson.call.direction).toBe('web');
    expect(tapeJson.media[0]?.codec).toBe('opus');
    expect(tapeJson.packets.length).toBeGreaterThan(500);

    // The key never went into a URL; the page raised no error (CSP included).
    expect(urls.filter((u) => u.includes(w.account.key))).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 150_000);
});
