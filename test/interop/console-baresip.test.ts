/**
 * A phone call placed by a real SIP peer (baresip) shows up in the console like any other: in the
 * calls list, and on its page with the recording's waveforms, the transcript and the turn
 * timeline. The engine runs with the e2e world's provider stand-ins and real Silero VAD.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { writeWav } from '../../src/audio/wav.ts';
import { chromiumAvailable, collectPageErrors, launchChromium, screenshot } from '../support/browser.ts';
import { fixture8k, startWorld, type World } from '../integration/e2e/world.ts';
import { Baresip } from './support/baresip.ts';

let w: World;
let browser: Browser;

beforeAll(async () => {
  w = await startWorld({ deepgram: { script: ['What are your opening hours?'] } });
  w.chat.defaultResponse = { content: 'We are open from nine to five.' };
  if (chromiumAvailable) browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

/** 8 kHz mono: silence through the greeting, the question, then silence through the answer. */
function callerWav(): Buffer {
  const question = fixture8k('utt-opening-hours');
  const pcm = new Int16Array(8000 * 4 + question.length + 8000 * 5);
  pcm.set(question, 8000 * 4);
  return writeWav({ sampleRate: 8000, channels: 1, samples: pcm });
}

describe.skipIf(!chromiumAvailable)('a baresip call in the console', () => {
  it('is listed, and its page draws the recording, transcript and turn timeline', async () => {
    await w.assistant({ record: true });
    const peer = await Baresip.start({ sourceWav: callerWav(), user: 'baresip-console' });
    try {
      await peer.dial(w.target());
      await peer.waitEvent('CALL_ESTABLISHED', 10_000);
      await peer.waitEvent('CALL_CLOSED', 30_000);
    } finally {
      await peer.stop();
    }
    const list = await w.api('GET', '/user/calls?limit=1');
    const id = list.body[0].id as number;
    const rec = await w.waitCall(id, (c) => c.ended_at !== null && (c.transcript?.length ?? 0) >= 2 && c.recording_url !== null, 20_000);
    expect(String(rec.from_number)).toContain('baresip-console');

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(`${w.engine.httpUrl}/console`);
    await page.getByLabel('API key').fill(w.account.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const row = page.locator('table.calls-table tbody tr').first();
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toContain('baresip-console');
    await row.getByRole('link').click();
    await page.getByRole('heading', { name: 'Turn timeline' }).waitFor({ timeout: 10_000 });
    await expect.poll(() => page.locator('audio').evaluate((a: any) => a.src), { timeout: 15_000 }).toMatch(/^blob:/);
    const inked = () =>
      page.evaluate(() => {
        const c = (globalThis as any).document.querySelector('canvas[data-channel="0"]');
        if (!c || c.width === 0) return 0;
        const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data as Uint8ClampedArray;
        let n = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
        return n;
      });
    await expect.poll(inked, { timeout: 15_000 }).toBeGreaterThan(100);
    await expect.poll(() => page.locator('.transcript').textContent(), { timeout: 10_000 }).toContain('What are your opening hours?');
    expect(await page.locator('[data-lane="assistant"] [data-kind="span"]').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('[data-lane="decisions"] [data-tone="end-of-turn"]').count()).toBeGreaterThanOrEqual(1);
    await screenshot(page, 'console-baresip-call');
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
