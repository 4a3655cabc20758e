/**
 * native/dsp's denoiser core against the TypeScript core it ports (src/audio/native-dsp.ts):
 * the same samples out, bit for bit, on every path of the suppressor: wideband speech in noise,
 * telephone-band audio at 16 kHz (the empty-band skip, entered and left), narrowband 8 kHz,
 * digital silence, full-scale clipping, and frames of one, two and four hops.
 */
import { describe, expect, it } from 'vitest';
import { nativeDsp, useNativeDsp } from '../../../src/audio/native-dsp.ts';
import { SpectralDenoiser } from '../../../src/audio/denoise-spectral.ts';
import { concatPcm } from '../../../src/audio/frame.ts';
import { at8k, clip, scene, telephone } from './scenes.ts';

const native = nativeDsp();
const typescript = new SpectralDenoiser({ native: false });
const c = new SpectralDenoiser();

/** Runs `pcm` through a fresh stream of `backend` in frames of `frame` samples (the tail dropped). */
function run(backend: SpectralDenoiser, pcm: Int16Array, rate: number, frame: number, inPlace = false): Int16Array {
  const s = backend.createStream({ narrowband: rate === 8000 });
  const out = new Int16Array(pcm.length - (pcm.length % frame));
  for (let at = 0; at + frame <= pcm.length; at += frame) {
    const samples = pcm.slice(at, at + frame);
    if (inPlace) s.processInPlace(samples);
    out.set(inPlace ? samples : s.process({ samples, sampleRate: rate }).samples, at);
  }
  s.close();
  return out;
}

/** Index of the first sample where a and b differ, or -1. */
const firstDifference = (a: Int16Array, b: Int16Array): number => (a.length !== b.length ? 0 : a.findIndex((x, i) => x !== b[i]));

/** A square wave at full scale, then digital silence, then a tone bursting over the band edge. */
function extremes(rate: number): Int16Array {
  const n = rate; // 1 s of each
  const square = Int16Array.from({ length: n }, (_, i) => (Math.floor((i * 440) / rate) % 2 ? 32767 : -32768));
  const silence = new Int16Array(n);
  const burst = Int16Array.from({ length: n }, (_, i) => clip(20000 * Math.sin((2 * Math.PI * (rate / 2.4) * i) / rate) * (Math.floor(i / (rate / 10)) % 2)));
  return concatPcm([square, silence, burst]);
}

describe('native spectral core', () => {
  it('is built where the engine runs (Linux x64); with native: false, or where it is not, the TypeScript core runs', () => {
    if (process.platform === 'linux' && process.arch === 'x64') expect(native).toBeDefined();
    expect(c.native).toBe(native !== undefined);
    expect(typescript.native).toBe(false);
    // SWITCHBOARD_DSP_NATIVE=0 (the composition root's useNativeDsp(false)) makes TypeScript the default.
    useNativeDsp(false);
    try {
      expect(new SpectralDenoiser().native).toBe(false);
    } finally {
      useNativeDsp(true);
    }
    expect(new SpectralDenoiser().native).toBe(native !== undefined);
  });

  const { noisy } = scene('utt-phone-number', 'noise-street');
  const cases: [string, Int16Array, number][] = [
    ['wideband speech in street noise', noisy, 16000],
    ['telephone-band audio at 16 kHz (the empty-band skip)', concatPcm([telephone(noisy), noisy, telephone(noisy)]), 16000],
    ['narrowband (8 kHz) speech in noise', at8k(noisy), 8000],
    ['extremes at 16 kHz (clipping, digital silence, a tone at the band edge)', extremes(16000), 16000],
    ['extremes at 8 kHz', extremes(8000), 8000],
  ];
  it.each(cases)('%s: the same samples as the TypeScript core, bit for bit, in frames of 1, 2 and 4 hops', (_what, pcm, rate) => {
    expect(c.native).toBe(true);
    const hop = rate / 100;
    for (const frame of [hop, 2 * hop, 4 * hop]) {
      const ts = run(typescript, pcm, rate, frame);
      expect(firstDifference(run(c, pcm, rate, frame), ts)).toBe(-1);
      // Not trivially: the suppressor changed the audio.
      expect(firstDifference(ts, pcm.subarray(0, ts.length))).not.toBe(-1);
    }
  });

  it('the telephone-band case does go through the skip (without it the output differs)', () => {
    const pcm = cases[1]![1];
    const noSkip = new SpectralDenoiser({ narrowbandSkip: false });
    expect(firstDifference(run(noSkip, pcm, 16000, 320), run(c, pcm, 16000, 320))).not.toBe(-1);
  });

  it('processInPlace gives what process gives, in both cores', () => {
    const pcm = at8k(noisy);
    for (const backend of [c, typescript]) expect(firstDifference(run(backend, pcm, 8000, 160, true), run(backend, pcm, 8000, 160))).toBe(-1);
  });

  it('refuses what is not a whole number of hops, in place or not, and closed streams', () => {
    for (const backend of [c, typescript]) {
      const s = backend.createStream({ narrowband: true });
      expect(() => s.processInPlace(new Int16Array(100))).toThrow(RangeError);
      expect(() => s.process({ samples: new Int16Array(160), sampleRate: 16000 })).toThrow(/needs 8000 Hz/);
      s.close();
      expect(() => s.processInPlace(new Int16Array(160))).toThrow(/closed/);
    }
  });

  it('the module checks its arguments rather than reading past them', () => {
    const mod = native!;
    expect(() => mod.createBand(new Float64Array(3), new Float64Array(0), new Float64Array(0), new Uint32Array(0), new Float64Array(0), new Float64Array(0))).toThrow(TypeError);
    expect(() => mod.createCore({})).toThrow(TypeError);
    const band = c.narrow.native!.band;
    const core = mod.createCore(band);
    // Handles are typed: a core is not a band, a band is not a core.
    expect(() => mod.createCore(core)).toThrow(TypeError);
    expect(() => mod.process(band, new Int16Array(160), new Int16Array(160))).toThrow(TypeError);
    expect(() => mod.process(core, new Int16Array(160), new Int16Array(80))).toThrow(RangeError);
    expect(() => mod.process(core, new Int16Array(100), new Int16Array(100))).toThrow(RangeError);
    expect(() => mod.process(core, new Float32Array(160) as unknown as Int16Array, new Int16Array(160))).toThrow(TypeError);
    // And after the refusals, the core is as new: it denoises as a fresh TypeScript stream does.
    const input = at8k(noisy).subarray(0, 1600);
    const out = new Int16Array(input.length);
    mod.process(core, input, out);
    expect(firstDifference(out, run(typescript, input, 8000, 160))).toBe(-1);
  });
});
