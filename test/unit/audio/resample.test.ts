import { describe, expect, it } from 'vitest';
import { Resampler, resample } from '../../../src/audio/resample.ts';
import { bestSnrDb, concat, sine, snrDb, toneLevel } from './signal.ts';

/** Feed `pcm` through a streaming resampler in chunks of `chunk` samples. */
function stream(r: Resampler, pcm: Int16Array, chunk: number): Int16Array {
  const parts: Int16Array[] = [];
  for (let i = 0; i < pcm.length; i += chunk) parts.push(r.process(pcm.subarray(i, i + chunk)));
  return concat(parts);
}

describe('Resampler', () => {
  it('keeps a 1 kHz tone through 16k → 8k → 16k', () => {
    const input = sine(1000, 16000, 16000, 12000);
    const down = new Resampler(16000, 8000);
    const up = new Resampler(8000, 16000);
    const out = stream(up, stream(down, input, 320), 160);
    const delay = Math.round(down.delay * 2 + up.delay);
    expect(out.length).toBe(16000);
    expect(snrDb(input, out.subarray(delay), 1000, 16000 - delay)).toBeGreaterThan(40);
  });

  it('attenuates a 6 kHz tone when going to 8 kHz (anti-aliasing)', () => {
    const input = sine(6000, 16000, 16000, 20000);
    const out = new Resampler(16000, 8000).process(input);
    // Without filtering 6 kHz would fold to 2 kHz at full strength.
    expect(toneLevel(out, 2000, 8000, 200)).toBeLessThan(20000 / 32768 / 1000); // > 60 dB down
    const passband = new Resampler(16000, 8000).process(sine(3000, 16000, 16000, 20000));
    expect(toneLevel(passband, 3000, 8000, 200)).toBeGreaterThan((20000 / 32768) * 0.95);
  });

  it('attenuates content above 8 kHz when going 48k → 16k', () => {
    const out = new Resampler(48000, 16000).process(sine(12000, 48000, 48000, 20000));
    expect(toneLevel(out, 4000, 16000, 500)).toBeLessThan(20000 / 32768 / 1000);
  });

  it('is continuous across chunk boundaries: chunked output equals one-shot output', () => {
    for (const [from, to, chunk] of [
      [16000, 8000, 320],
      [8000, 16000, 160],
      [48000, 16000, 960],
      [16000, 48000, 320],
      [24000, 16000, 480],
      [16000, 24000, 320],
      [22050, 16000, 441],
      [22050, 16000, 1000],
      [44100, 16000, 777],
    ] as const) {
      const input = sine(440, from, from, 15000);
      const whole = new Resampler(from, to).process(input);
      const chunked = stream(new Resampler(from, to), input, chunk);
      expect(chunked.length, `${from}→${to}`).toBe(whole.length);
      expect(Buffer.from(chunked.buffer).equals(Buffer.from(whole.buffer)), `${from}→${to}`).toBe(true);
      // Output length tracks the rate ratio exactly over a stream.
      expect(Math.abs(whole.length - (input.length * to) / from)).toBeLessThanOrEqual(1);
    }
  });

  it('produces exactly one 20 ms frame per 20 ms chunk for the integer ratios', () => {
    const cases = [[8000, 16000], [48000, 16000], [16000, 48000], [16000, 8000], [24000, 16000]] as const;
    for (const [from, to] of cases) {
      const r = new Resampler(from, to);
      for (let i = 0; i < 10; i++) expect(r.process(new Int16Array(from / 50)).length).toBe(to / 50);
    }
  });

  it('resamples common TTS rates to 16 kHz with high fidelity', () => {
    for (const from of [22050, 24000, 48000, 44100]) {
      const input = sine(700, from, from, 10000);
      const out = resample(input, from, 16000);
      const reference = sine(700, 16000, 16000, 10000);
      expect(out.length).toBe(16000);
      expect(snrDb(reference, out, 500, 15500), `${from}`).toBeGreaterThan(40);
    }
  });

  it('one-shot resample compensates the filter delay', () => {
    const input = sine(500, 8000, 8000, 8000);
    const out = resample(input, 8000, 48000);
    const { delay } = bestSnrDb(sine(500, 48000, 48000, 8000), out, 6, 2000);
    expect(delay).toBe(0);
  });

  it('passes through when the rates match, and rejects bad rates', () => {
    const input = Int16Array.from([1, 2, 3]);
    const r = new Resampler(16000, 16000);
    const out = r.process(input);
    expect([...out]).toEqual([1, 2, 3]);
    expect(out).not.toBe(input);
    expect(r.delay).toBe(0);
    expect(() => new Resampler(0, 16000)).toThrow(RangeError);
    expect(() => new Resampler(16000, 12345.5)).toThrow(RangeError);
  });

  it('clips instead of wrapping on overshoot', () => {
    const square = Int16Array.from({ length: 1600 }, (_, i) => (Math.floor(i / 20) % 2 ? 32767 : -32768));
    const out = new Resampler(16000, 8000).process(square);
    // Gibbs overshoot would wrap to the opposite sign without clipping.
    let jumps = 0;
    for (let i = 1; i < out.length; i++) if (Math.abs(out[i]! - out[i - 1]!) > 50000) jumps++;
    expect(jumps).toBe(0);
  });

  it('flush() releases the delayed tail and reset() forgets history', () => {
    const r = new Resampler(16000, 8000);
    const body = r.process(new Int16Array(320).fill(10000));
    const tail = r.flush();
    expect(body.length + tail.length).toBeGreaterThan(160 + Math.floor(r.delay) - 1);
    expect(Math.max(...tail)).toBeGreaterThan(5000);
    r.reset();
    expect(r.process(new Int16Array(320)).every((s) => s === 0)).toBe(true);
  });
});
