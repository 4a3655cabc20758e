// Shared by the batching tests: several calls' audio pushed in lock-step (one batch per turn) or
// one call after the other, and the comparison of the two.
import { expect } from 'vitest';
import type { SileroVad } from '../../../src/audio/vad/silero.ts';
import { loadFixture, toFrames } from './fixture-audio.ts';

/** Several calls' audio: each stream its own fixture and starting point. */
export function callAudio(n: number): Int16Array[] {
  const names = ['utt-opening-hours', 'noise-babble', 'utt-yes', 'noise-street', 'bc-okay', 'utt-address', 'utt-phone-number'];
  return Array.from({ length: n }, (_, k) => {
    const pcm = loadFixture(names[k % names.length]!);
    const from = ((k * 1009) % 8) * 320;
    return pcm.subarray(from, Math.min(pcm.length, from + 40 * 320));
  });
}

/** Which of the calls run narrowband: none unless given. */
export type Narrowband = (k: number) => boolean;
const wideband: Narrowband = () => false;

/** All streams push their k-th frame in the same turn, as many calls would. */
export async function together(v: SileroVad, audio: Int16Array[], narrowband = wideband): Promise<number[][]> {
  const inputs = audio.map(toFrames);
  const streams = inputs.map((_, k) => v.createStream({ narrowband: narrowband(k) }));
  const out: number[][] = inputs.map(() => []);
  const longest = Math.max(...inputs.map((f) => f.length));
  for (let i = 0; i < longest; i++) {
    await Promise.all(
      streams.map(async (s, k) => {
        const f = inputs[k]![i];
        if (f) out[k]!.push(await s.push(f));
      }),
    );
  }
  return out;
}

/** Each call on its own, one after the other: every run holds one window. */
export async function alone(v: SileroVad, audio: Int16Array[], narrowband = wideband): Promise<number[][]> {
  const out: number[][] = [];
  for (const [k, pcm] of audio.entries()) {
    const s = v.createStream({ narrowband: narrowband(k) });
    const probs: number[] = [];
    for (const f of toFrames(pcm)) probs.push(await s.push(f));
    out.push(probs);
  }
  return out;
}

/**
 * Same shape, every probability within `tolerance` (batching changes the float sums a little;
 * the default is toBeCloseTo(x, 5)'s bound).
 */
export function expectClose(actual: number[][], expected: number[][], tolerance = 5e-6): void {
  expect(actual.map((a) => a.length)).toEqual(expected.map((e) => e.length));
  let worst = 0;
  actual.forEach((a, k) => a.forEach((p, i) => (worst = Math.max(worst, Math.abs(p - expected[k]![i]!)))));
  expect(worst).toBeLessThan(tolerance);
}
