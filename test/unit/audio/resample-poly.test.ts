/**
 * The general (polyphase) path, and its dedicated 2:3 / 3:2 loops (24 <-> 16 kHz): output must be
 * sample-identical to the original one-output-at-a-time loop, copied below as the reference.
 */
import { describe, expect, it } from 'vitest';
import { Resampler } from '../../../src/audio/resample.ts';
import { besselI0, concat, firstDifference, lcg, noise, sine, stream } from './signal.ts';

/**
 * Reference: the general path as it was before the lockstep loops (filter table and loop copied
 * verbatim from src/audio/resample.ts; float32 taps, float32 history, one accumulator per output,
 * newest sample first).
 */
class ReferencePoly {
  private readonly up: number;
  private readonly down: number;
  private readonly taps: number;
  private readonly coeffs: Float32Array;
  private work: Float32Array;
  private nextIndex = 0;
  private phase = 0;

  constructor(fromRate: number, toRate: number) {
    const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
    const g = gcd(fromRate, toRate);
    const up = toRate / g;
    const down = fromRate / g;
    const halfSpan = up * 16 * Math.max(1, Math.ceil(down / up));
    const centre = Math.ceil(halfSpan / down) * down;
    const taps = Math.ceil((2 * centre) / up);
    const length = up * taps;
    const cutoff = (0.9 * 0.5 * Math.min(1, up / down)) / up;
    const i0Beta = besselI0(8);
    const proto = new Float64Array(length);
    for (let m = 0; m < length; m++) {
      const t = m - centre;
      const x = 2 * cutoff * t;
      const sinc = t === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
      const r = t / centre;
      const window = Math.abs(r) >= 1 ? 0 : besselI0(8 * Math.sqrt(1 - r * r)) / i0Beta;
      proto[m] = sinc * window;
    }
    const coeffs = new Float32Array(length);
    for (let p = 0; p < up; p++) {
      let sum = 0;
      for (let k = 0; k < taps; k++) sum += proto[p + k * up]!;
      for (let k = 0; k < taps; k++) coeffs[p * taps + k] = proto[p + k * up]! / sum;
    }
    this.up = up;
    this.down = down;
    this.taps = taps;
    this.coeffs = coeffs;
    this.work = new Float32Array(taps - 1);
  }

  process(input: Int16Array): Int16Array {
    const { up, down, taps, coeffs } = this;
    const hist = taps - 1;
    const n = input.length;
    const work = new Float32Array(hist + n);
    work.set(this.work.subarray(0, hist));
    for (let i = 0; i < n; i++) work[hist + i] = input[i]!;
    const count = Math.max(0, Math.ceil(((n - this.nextIndex) * up - this.phase) / down));
    const out = new Int16Array(count);
    let i = this.nextIndex;
    let p = this.phase;
    for (let o = 0; o < count; o++) {
      const newest = hist + i;
      const base = p * taps;
      let acc = 0;
      for (let k = 0; k < taps; k++) acc += work[newest - k]! * coeffs[base + k]!;
      out[o] = acc >= 32767 ? 32767 : acc <= -32768 ? -32768 : Math.round(acc);
      p += down;
      while (p >= up) {
        p -= up;
        i++;
      }
    }
    this.nextIndex = i - n;
    this.phase = p;
    this.work = work.slice(n, n + hist);
    return out;
  }
}

/** Chunk sizes: single samples, sizes that leave every phase at a chunk boundary, 20 ms frames, odd and large. */
const CHUNKINGS: readonly (readonly number[])[] = [[1], [2], [3], [5, 7, 1, 4], [11], [160], [320], [480], [441], [1000], [4096]];

describe('Resampler, general path: identical to the one-output-at-a-time loop', () => {
  const pairs = [
    [24000, 16000],
    [16000, 24000],
    [48000, 16000],
    [16000, 48000],
    [8000, 24000],
    [24000, 8000],
    [48000, 32000],
    [22050, 16000],
    [44100, 16000],
    [16000, 22050],
  ] as const;

  for (const [from, to] of pairs) {
    it(`${from} → ${to}: random and sine input, every chunking, process() and processShared()`, () => {
      const inputs = [noise(from / 4, from + to), sine(1234, from, from / 4, 30000), sine(from / 2 - 100, from, from / 8, 32767)];
      for (const [n, input] of inputs.entries()) {
        const expected = new ReferencePoly(from, to).process(input);
        for (const sizes of CHUNKINGS) {
          const shared = sizes.length > 1 || sizes[0]! % 2 === 1;
          const chunked = stream(new Resampler(from, to), input, sizes, shared);
          expect(firstDifference(chunked, expected), `input ${n}, chunks ${sizes.join('/')}`).toBe('none');
          // The reference streamed the same way agrees with itself (the comparison is meaningful).
          if (sizes[0] === 1 && n === 0) expect(firstDifference(stream(new ReferencePoly(from, to), input, sizes), expected)).toBe('none');
        }
      }
    });
  }

  it('random chunk sizes over a long 24 kHz ⇄ 16 kHz stream (realtime deltas, TTS network reads)', () => {
    for (const [from, to] of [
      [24000, 16000],
      [16000, 24000],
    ] as const) {
      const rnd = lcg(7);
      const sizes = Array.from({ length: 97 }, () => 1 + Math.floor(rnd() * 1500));
      const input = concat([noise(from * 2, 99), sine(440, from, from * 2, 20000)]);
      const expected = new ReferencePoly(from, to).process(input);
      expect(firstDifference(stream(new Resampler(from, to), input, sizes, true), expected), `${from}→${to}`).toBe('none');
      expect(firstDifference(stream(new Resampler(from, to), input, sizes), expected), `${from}→${to}`).toBe('none');
    }
  });

  it('flush() and reset() behave as before', () => {
    const input = noise(2400, 3);
    const r = new Resampler(24000, 16000);
    const ref = new ReferencePoly(24000, 16000);
    expect(firstDifference(r.process(input), ref.process(input))).toBe('none');
    const zeros = new Int16Array(Math.ceil((r.delay * 24000) / 16000) + 1);
    expect(firstDifference(r.flush(), ref.process(zeros))).toBe('none');
    r.reset();
    expect(firstDifference(r.process(input), new ReferencePoly(24000, 16000).process(input))).toBe('none');
  });
});

describe('Resampler, steady state allocates nothing', () => {
  it('processShared() returns the same view for every 20 ms frame at 24 ⇄ 16 kHz', () => {
    for (const [from, to] of [
      [24000, 16000],
      [16000, 24000],
    ] as const) {
      const r = new Resampler(from, to);
      const first = r.processShared(new Int16Array(from / 50));
      for (let i = 0; i < 10; i++) expect(r.processShared(new Int16Array(from / 50))).toBe(first);
    }
  });

  it('output counts that alternate reuse two views instead of making a new one per call', () => {
    // 24 → 16 kHz in 10-sample chunks gives 7, 7, 6 outputs: lengths alternate.
    const r = new Resampler(24000, 16000);
    const seen = new Set<Int16Array>();
    for (let i = 0; i < 30; i++) seen.add(r.processShared(new Int16Array(10)));
    expect(seen.size).toBe(2);
    // 44.1 → 16 kHz in 441-sample chunks: 160 outputs each, once the filter has filled.
    const s = new Resampler(44100, 16000);
    const views = new Set<Int16Array>();
    for (let i = 0; i < 30; i++) views.add(s.processShared(new Int16Array(441)));
    expect(views.size).toBeLessThanOrEqual(2);
  });
});
