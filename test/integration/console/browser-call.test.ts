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

    // A second tab follows the call live: from the list's live section to its live page, where
    // the transcript streams in.
    const watcher = await context.newPage();
    const watcherErrors = collectPageErrors(watcher);
    await watcher.goto(`${w.engine.httpUrl}/console`);
    await watcher.getByLabel('API key').fill(w.account.key);
    await watcher.getByRole('button', { name: 'Sign in' }).click();
    const liveRow = watcher.locator('section[aria-labelledby="live-calls"] tbody tr');
    await liveRow.first().waitFor({ timeout: 15_000 });
    await liveRow.first().getByRole('link').click();
    await watcher.getByRole('link', { name: 'Follow it live' }).click();
    await watcher.getByRole('heading', { name: /^Live call/ }).waitFor({ timeout: 10_000 });
    await expect.poll(() => watcher.locator('.live-transcript li').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    // The calling tab in front again: a background tab's timers are throttled, and the level
    // sampling that times the barge-in runs on them.
    await page.bringToFront();

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
    await watcher.bringToFront();
    // The live page saw the caller's words and the engine's decisions, and now offers the record.
    await expect.poll(() => watcher.locator('.live-transcript').textContent(), { timeout: 10_000 }).toContain('What are your opening hours?');
    expect(await watcher.locator('.live-events li').count()).toBeGreaterThan(3);
    await watcher.getByRole('link', { name: 'Open the call record' }).waitFor({ timeout: 10_000 });
    await screenshot(watcher, 'browser-call-live-view');

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

    // The call's page: the recording playing with both waveforms drawn, the turn timeline with
    // the barge-in, the latency waterfall, the transcript; a line click moves the playhead.
    await watcher.getByRole('link', { name: 'Open the call record' }).click();
    await watcher.getByRole('heading', { name: 'Turn timeline' }).waitFor({ timeout: 10_000 });
    await expect.poll(() => watcher.locator('audio').evaluate((a: any) => a.src), { timeout: 15_000 }).toMatch(/^blob:/);
    for (const channel of [0, 1]) {
      await expect
        .poll(
          () =>
            watcher.evaluate((ch) => {
              const c = (globalThis as any).document.querySelector(`canvas[data-channel="${ch}"]`);
              if (!c || c.width === 0) return 0;
              const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data as Uint8ClampedArray;
              let n = 0;
              for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
              return n;
            }, channel),
          { timeout: 15_000 },
        )
        .toBeGreaterThan(100);
    }
    expect(await watcher.locator('[data-lane="decisions"] [data-tone="interruption"]').count()).toBeGreaterThanOrEqual(1);
    expect(await watcher.locator('.waterfall-turn').count()).toBeGreaterThanOrEqual(1);
    const lines = watcher.locator('.transcript .line');
    expect(await lines.count()).toBe(transcript.length);
    const second = transcript[1]!.start_ms / 1000;
    await lines.nth(1).getByRole('button').click();
    await expect.poll(() => watcher.locator('audio').evaluate((a: any) => a.currentTime), { timeout: 5000 }).toBeGreaterThanOrEqual(second - 0.25);
    await watcher.locator('audio').evaluate((a: any) => a.play());
    await expect.poll(() => watcher.locator('audio').evaluate((a: any) => !a.paused && a.currentTime > 0), { timeout: 5000 }).toBe(true);
    await screenshot(watcher, 'browser-call-record');

    // The key never went into a URL; the pages raised no error (CSP included).
    expect(urls.filter((u) => u.includes(w.account.key))).toEqual([]);
    expect(errors).toEqual([]);
    expect(watcherErrors).toEqual([]);
    await context.close();
  }, 150_000);
});
