/** The half-band path the Resampler takes for exact 2:1 ratios (the G.711 path of every call). */
import { describe, expect, it } from 'vitest';
import { Resampler, resample } from '../../../src/audio/resample.ts';
import { concat, sine, snrDb, toneLevel } from './signal.ts';

function stream(r: Resampler, pcm: Int16Array, chunk: number, shared = false): Int16Array {
  const parts: Int16Array[] = [];
  for (let i = 0; i < pcm.length; i += chunk) {
    const out = shared ? r.processShared(pcm.subarray(i, i + chunk)) : r.process(pcm.subarray(i, i + chunk));
    parts.push(out.slice());
  }
  return concat(parts);
}

describe('Resampler, 2:1 half-band path', () => {
  it('keeps a 1 kHz tone through 16k → 8k → 16k (SNR > 35 dB) with a whole-sample delay', () => {
    const input = sine(1000, 16000, 16000, 12000);
    const down = new Resampler(16000, 8000);
    const up = new Resampler(8000, 16000);
    expect(Number.isInteger(down.delay) && Number.isInteger(up.delay)).toBe(true);
    const out = stream(up, stream(down, input, 320, true), 160, true);
    const delay = down.delay * 2 + up.delay;
    expect(snrDb(input, out.subarray(delay), 1000, 16000 - delay)).toBeGreaterThan(35);
  });

  it('rejects aliases: 6 kHz going to 8 kHz is > 40 dB down, passband to 3.4 kHz within 0.5 dB', () => {
    const alias = new Resampler(16000, 8000).process(sine(6000, 16000, 16000, 20000));
    expect(toneLevel(alias, 2000, 8000, 200)).toBeLessThan(20000 / 32768 / 100);
    const edge = new Resampler(16000, 8000).process(sine(3400, 16000, 16000, 20000));
    expect(toneLevel(edge, 3400, 8000, 200)).toBeGreaterThan((20000 / 32768) * 0.944);
    // Going up, the image of a 3 kHz tone (at 5 kHz) is > 40 dB down.
    const up = new Resampler(8000, 16000).process(sine(3000, 8000, 8000, 20000));
    expect(toneLevel(up, 5000, 16000, 400)).toBeLessThan(20000 / 32768 / 100);
  });

  it('streams any chunking exactly like one piece, for every 2:1 pair', () => {
    for (const [from, to] of [[16000, 8000], [8000, 16000], [48000, 24000], [24000, 48000], [44100, 22050]] as const) {
      const input = sine(440, from, 3001, 15000);
      const whole = new Resampler(from, to).process(input);
      for (const chunk of [1, 7, 160, 333]) {
        const chunked = stream(new Resampler(from, to), input, chunk, chunk % 2 === 1);
        expect([...chunked], `${from}→${to} by ${chunk}`).toEqual([...whole]);
      }
    }
  });

  it('processShared reuses one output buffer per stream (no allocation per frame)', () => {
    const r = new Resampler(8000, 16000);
    const a = r.processShared(new Int16Array(160));
    const b = r.processShared(new Int16Array(160));
    expect(b).toBe(a);
    expect(b.length).toBe(320);
    const d = new Resampler(16000, 8000);
    expect(d.processShared(new Int16Array(320)).buffer).toBe(d.processShared(new Int16Array(320)).buffer);
  });

  it('one-shot resample() lines the output up with the input', () => {
    const input = sine(500, 8000, 8000, 10000);
    const out = resample(input, 8000, 16000);
    expect(out.length).toBe(16000);
    expect(snrDb(sine(500, 16000, 16000, 10000), out, 200, 15800)).toBeGreaterThan(40);
    const back = resample(out, 16000, 8000);
    expect(snrDb(input, back, 200, 7800)).toBeGreaterThan(40);
  });
});
