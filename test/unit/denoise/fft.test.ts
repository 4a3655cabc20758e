import { describe, expect, it } from 'vitest';
import { RealFft } from '../../../src/audio/fft.ts';

/** Reference O(N²) DFT: slow but obviously right. */
function dft(x: Float64Array): { re: Float64Array; im: Float64Array } {
  const n = x.length;
  const re = new Float64Array(n / 2 + 1);
  const im = new Float64Array(n / 2 + 1);
  for (let k = 0; k <= n / 2; k++) {
    for (let t = 0; t < n; t++) {
      re[k]! += x[t]! * Math.cos((2 * Math.PI * k * t) / n);
      im[k]! -= x[t]! * Math.sin((2 * Math.PI * k * t) / n);
    }
  }
  return { re, im };
}

// Deterministic pseudo-random input: the same on every run.
function noise(n: number, seed = 1): Float64Array {
  const out = new Float64Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

describe('RealFft', () => {
  for (const n of [8, 16, 32, 64, 128, 256, 512, 1024]) {
    it(`matches a direct DFT at N=${n} and inverts exactly`, () => {
      const fft = new RealFft(n);
      const x = noise(n, n);
      const re = new Float64Array(fft.bins);
      const im = new Float64Array(fft.bins);
      fft.forward(x, re, im);
      const ref = dft(x);
      for (let k = 0; k < fft.bins; k++) {
        expect(re[k]).toBeCloseTo(ref.re[k]!, 9);
        expect(im[k]).toBeCloseTo(ref.im[k]!, 9);
      }
      const back = new Float64Array(n);
      fft.inverse(re, im, back);
      for (let i = 0; i < n; i++) expect(back[i]).toBeCloseTo(x[i]!, 12);
    });
  }

  it('zero-pads short input', () => {
    const fft = new RealFft(16);
    const x = noise(10);
    const padded = new Float64Array(16);
    padded.set(x);
    const [a, b] = [new Float64Array(9), new Float64Array(9)];
    const [c, d] = [new Float64Array(9), new Float64Array(9)];
    fft.forward(x, a, b);
    fft.forward(padded, c, d);
    expect(Array.from(a)).toEqual(Array.from(c));
    expect(Array.from(b)).toEqual(Array.from(d));
  });

  for (const n of [8, 16, 256, 512]) {
    it(`forwardPower and inverseWindowed give exactly the separate loops' results at N=${n}`, () => {
      const fft = new RealFft(n);
      const x = noise(n, 3 * n);
      const [re, im, power] = [new Float64Array(fft.bins), new Float64Array(fft.bins), new Float64Array(fft.bins)];
      const [re2, im2] = [new Float64Array(fft.bins), new Float64Array(fft.bins)];
      fft.forwardPower(x, re, im, power);
      fft.forward(x, re2, im2);
      expect(Array.from(re)).toEqual(Array.from(re2));
      expect(Array.from(im)).toEqual(Array.from(im2));
      expect(Array.from(power)).toEqual(Array.from(re2, (r, k) => r * r + im2[k]! * im2[k]!));
      // A per-bin gain and a window shorter than N (the STFT's zero padding is not synthesised).
      const gain = noise(fft.bins, 7).map(Math.abs);
      const window = noise(n - 4, 9).map(Math.abs);
      const out = new Float64Array(n);
      fft.inverseWindowed(re, im, gain, window, out);
      const plain = new Float64Array(n);
      fft.inverse(re.map((r, k) => r * gain[k]!), im.map((v, k) => v * gain[k]!), plain);
      expect(Array.from(out.subarray(0, window.length))).toEqual(Array.from(window, (w, i) => plain[i]! * w));
    });
  }

  it('refuses sizes that are not powers of two', () => {
    expect(() => new RealFft(320)).toThrow(RangeError);
    expect(() => new RealFft(4)).toThrow(RangeError);
  });
});
