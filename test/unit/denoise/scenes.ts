// Shared by the denoiser tests: noisy scenes built from the fixtures, the telephone band a G.711
// call delivers (at 8 kHz, as narrowband streams take it, or brought back up to 16 kHz), and the
// measures of what the denoiser did to noise and speech.
import type { DenoiserStream } from '../../../src/audio/denoise.ts';
import { concatPcm, splitPcm, type AudioFrame } from '../../../src/audio/frame.ts';
import { resample } from '../../../src/audio/resample.ts';
import { db, energy, loadFixture, toFrames } from '../vad/fixture-audio.ts';

/** The rate of narrowband streams' frames: a G.711 call's own. */
export const NB_RATE = 8000;

/** Noise before the speech: the estimator's ~1 s of look-back has converged by then. */
export const LEAD = 2 * 16000;

export const clip = (v: number): number => Math.max(-32768, Math.min(32767, Math.round(v)));

export const same = (x: Int16Array, y: Int16Array): boolean =>
  x.length === y.length && Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength));

/** Audio as a G.711 call delivers it: through 8 kHz and back up to 16 kHz (nothing above 4 kHz). */
export const telephone = (x: Int16Array): Int16Array => resample(resample(x, 16000, 8000), 8000, 16000);

/**
 * 16 kHz audio as a G.711 call carries it end to end: at 8 kHz (the half-band decimator, its
 * delay compensated, so sample i here is sample 2i there).
 */
export const at8k = (x: Int16Array): Int16Array => resample(x, 16000, NB_RATE);

/** 20 ms frames of 8 kHz audio (160 samples; the last zero-padded), as narrowband streams take them. */
export const toFrames8k = (pcm: Int16Array): AudioFrame[] => splitPcm(pcm, NB_RATE / 50).map((samples) => ({ samples, sampleRate: NB_RATE }));

/** `pcm` (at `rate`: 16 kHz, or 8 kHz for a narrowband stream) through `stream` in 20 ms frames; closes the stream. */
export function denoiseWith(stream: DenoiserStream, pcm: Int16Array, rate = 16000): Int16Array {
  const frames = rate === NB_RATE ? toFrames8k(pcm) : toFrames(pcm);
  const out = concatPcm(frames.map((f) => stream.process(f).samples));
  stream.close();
  return out;
}

/** `speech` after LEAD samples of noise, over `noise` looped at `gain`, with 1 s of noise after. */
/** Two calls' streams fed frame by frame in turn (as the engine does): each stream's whole output. */
export function interleave(sa: DenoiserStream, a: AudioFrame[], sb: DenoiserStream, b: AudioFrame[]): [Int16Array, Int16Array] {
  const outA: Int16Array[] = [];
  const outB: Int16Array[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i]) outA.push(sa.process(a[i]!).samples);
    if (b[i]) outB.push(sb.process(b[i]!).samples);
  }
  return [concatPcm(outA), concatPcm(outB)];
}

export function scene(speechName: string, noiseName: string, gain = 1): { clean: Int16Array; noisy: Int16Array } {
  const speech = loadFixture(speechName);
  const noise = loadFixture(noiseName);
  const clean = new Int16Array(LEAD + speech.length + 16000);
  clean.set(speech, LEAD);
  const noisy = clean.map((s, i) => clip(s + gain * noise[i % noise.length]!));
  return { clean, noisy };
}

/**
 * 20 ms frames after convergence, split by the clean signal into speech and noise-only, the
 * output read `delay` samples later: the noise cut in noise-only frames, the speech level
 * against clean, and the segmental SNR before and after. All three signals at `rate` (16 kHz,
 * or 8 kHz for narrowband scenes: `at8k(clean)`, `at8k(noisy)`).
 */
export function measure(clean: Int16Array, noisy: Int16Array, out: Int16Array, delay: number, rate = 16000) {
  const frame = rate / 50;
  const lead = (LEAD * rate) / 16000;
  let speechClean = 0, speechOut = 0, quietIn = 0, quietOut = 0, segIn = 0, segOut = 0, segs = 0;
  for (let at = lead - rate; at + frame + delay <= clean.length; at += frame) {
    const c = energy(clean, at, at + frame);
    if (c > 32768 ** 2 * 10 ** (-30 / 10)) {
      speechClean += c;
      speechOut += energy(out, at + delay, at + delay + frame);
      // Segmental SNR: speech against what is not speech in the signal, per frame, clamped to
      // [-10, 35] dB as usual so silent or perfect frames do not dominate.
      let errIn = 0, errOut = 0;
      for (let i = at; i < at + frame; i++) {
        errIn += (noisy[i]! - clean[i]!) ** 2;
        errOut += (out[i + delay]! - clean[i]!) ** 2;
      }
      segIn += Math.max(-10, Math.min(35, db((c * frame) / errIn)));
      segOut += Math.max(-10, Math.min(35, db((c * frame) / errOut)));
      segs++;
    } else if (c < 32768 ** 2 * 10 ** (-70 / 10)) {
      quietIn += energy(noisy, at, at + frame);
      quietOut += energy(out, at + delay, at + delay + frame);
    }
  }
  return { noiseCutDb: db(quietIn / quietOut), speechDb: db(speechOut / speechClean), segSnrIn: segIn / segs, segSnrOut: segOut / segs };
}

/** The lag (0 ≤ lag < maxLag) at which `out` best matches `input`, and the match there and next to it. */
export function bestLag(input: Int16Array, out: Int16Array, maxLag = 400): { lag: number; peak: number; before: number; after: number } {
  const cc: number[] = [];
  for (let lag = 0; lag < maxLag; lag++) {
    let acc = 0;
    for (let i = 0; i + lag < input.length; i++) acc += input[i]! * out[i + lag]!;
    cc.push(acc);
  }
  const lag = cc.indexOf(Math.max(...cc));
  return { lag, peak: cc[lag]!, before: cc[lag - 1] ?? -Infinity, after: cc[lag + 1] ?? -Infinity };
}
