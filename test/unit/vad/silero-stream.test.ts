// SileroStream's window bookkeeping and SileroVad's batching: any frame size, batches split at
// maxBatch, batches larger than the first shared buffers, on both backends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SileroVad, SILERO_WINDOW_SAMPLES, type SileroStream } from '../../../src/audio/vad/silero.ts';
import { alone, callAudio, expectClose, together } from './batch-audio.ts';
import { loadFixture } from './fixture-audio.ts';

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

const frame = (samples: Int16Array) => ({ samples, sampleRate: 16000 });

/** One probability per window, from pushes of exactly one window each. */
async function perWindow(s: SileroStream, pcm: Int16Array): Promise<number[]> {
  const out: number[] = [];
  for (let at = 0; at + SILERO_WINDOW_SAMPLES <= pcm.length; at += SILERO_WINDOW_SAMPLES) {
    out.push(await s.push(frame(pcm.subarray(at, at + SILERO_WINDOW_SAMPLES))));
  }
  return out;
}

describe('SileroStream frames of any size', () => {
  // Narrowband: the decimator's history carries across frames, so the 8 kHz windows (and their
  // probabilities) do not depend on how the 16 kHz audio was cut, and end on the same samples.
  for (const narrowband of [false, true]) {
    it(`gives, after every push, the probability of the last complete window, whatever the frame size${narrowband ? ' (narrowband)' : ''}`, async () => {
      const pcm = loadFixture('utt-yes');
      const reference = await perWindow(vad.createStream({ narrowband }), pcm);
      expect(reference.length).toBeGreaterThan(20);
      for (const size of [1, 100, 320, 511, 700, 1536, 5000]) {
        const s = vad.createStream({ narrowband });
        for (let at = 0; at < pcm.length; at += size) {
          const chunk = pcm.subarray(at, Math.min(pcm.length, at + size));
          const p = await s.push(frame(chunk));
          const windows = Math.floor((at + chunk.length) / SILERO_WINDOW_SAMPLES);
          expect(s.windows, `frames of ${size}`).toBe(windows);
          expect(p, `frames of ${size}, after ${windows} windows`).toBe(windows > 0 ? reference[windows - 1]! : 0);
          expect(s.probability).toBe(p);
        }
      }
    });
  }

  it('answers a push that completes no window without a run, with the settled previous result', async () => {
    const s = vad.createStream();
    const pcm = loadFixture('utt-opening-hours');
    const first = await s.push(frame(pcm.subarray(8000, 8000 + SILERO_WINDOW_SAMPLES)));
    const runs = vad.stats.runs;
    const a = s.push(frame(pcm.subarray(9000, 9100)));
    const b = s.push(frame(pcm.subarray(9100, 9200)));
    // No promise per frame: one settled promise per probability, handed out again.
    expect(a).toBe(b);
    expect(await a).toBe(first);
    expect(vad.stats.runs).toBe(runs);
    s.reset();
    expect(await s.push(frame(pcm.subarray(0, 100)))).toBe(0);
  });

  it('pushThen() answers as push() does, at once when no window completes, and refuses an overlapping push', async () => {
    const pcm = loadFixture('utt-yes');
    const byPromise = vad.createStream({ narrowband: true });
    const byCallback = vad.createStream({ narrowband: true });
    for (let at = 0; at + 320 <= pcm.length; at += 320) {
      const f = frame(pcm.subarray(at, at + 320));
      const expected = await byPromise.push(f);
      // 160 samples at 8 kHz a frame, 256 a window.
      const completesWindow = Math.floor((at / 2 + 160) / 256) > Math.floor(at / 2 / 256);
      let answer: number | undefined;
      const done = new Promise<number>((resolve, reject) =>
        byCallback.pushThen(
          f,
          (p) => {
            answer = p;
            resolve(p);
          },
          reject,
        ),
      );
      // A frame that completes no window is answered inside the call.
      if (!completesWindow) expect(answer).toBe(expected);
      expect(await done).toBe(expected);
    }
    const s = vad.createStream();
    const errors: Error[] = [];
    const whole = frame(pcm.subarray(0, SILERO_WINDOW_SAMPLES));
    const first = new Promise<number>((resolve) => s.pushThen(whole, resolve, (e) => errors.push(e)));
    s.pushThen(whole, () => errors.push(new Error('answered')), (e) => errors.push(e));
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/before the previous push/)]);
    await first;
    s.pushThen({ samples: new Int16Array(320), sampleRate: 8000 }, () => {}, (e) => errors.push(e));
    expect(errors[1]?.message).toMatch(/needs 16000 Hz/);
  });

  it('takes empty frames', async () => {
    const s = vad.createStream();
    expect(await s.push(frame(new Int16Array(0)))).toBe(0);
    expect(s.windows).toBe(0);
  });
});

describe('SileroVad batching', () => {
  it('splits a turn with more windows than maxBatch into several runs, results unchanged', async () => {
    const own = await SileroVad.load({ maxBatch: 4 });
    try {
      const audio = callAudio(10);
      const solo = await alone(own, audio);
      const before = own.stats;
      const mixed = await together(own, audio);
      const runs = own.stats.runs - before.runs;
      const windows = own.stats.windows - before.windows;
      expect(windows / runs).toBeLessThanOrEqual(4);
      expect(windows / runs).toBeGreaterThan(2);
      expectClose(mixed, solo);
    } finally {
      await own.close();
    }
  });

  for (const thread of ['worker', 'inline'] as const) {
    it(`runs batches larger than its first buffers (${thread}): 40 then 90 calls in one turn`, async () => {
      const own = await SileroVad.load({ thread });
      try {
        for (const n of [40, 90]) {
          const audio = callAudio(n);
          const solo = await alone(vad, audio);
          const before = own.stats;
          const mixed = await together(own, audio);
          expect((own.stats.windows - before.windows) / (own.stats.runs - before.runs)).toBeGreaterThan(n / 2);
          expectClose(mixed, solo);
        }
      } finally {
        await own.close();
      }
    });
  }
});
