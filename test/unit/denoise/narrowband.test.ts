/**
 * The spectral denoiser's narrowband streams (`createStream({ narrowband: true })`): 16 kHz
 * frames in and out, the suppressor at 8 kHz inside. Input is what a G.711 call delivers (the
 * fixtures through 8 kHz and back), measured against the wideband stream on the same input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Denoiser, loadDenoiser, loadEngineDenoiser } from '../../../src/audio/denoise.ts';
import { SpectralDenoiser, SpectralDenoiseStream, SpectralNarrowbandStream } from '../../../src/audio/denoise-spectral.ts';
import { concatPcm, copySamples, FRAME_SAMPLES } from '../../../src/audio/frame.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { db, energy, energyOnsetMs, loadFixture, runVad, toFrames } from '../vad/fixture-audio.ts';
import { bestLag, clip, denoiseWith, measure, same, scene, telephone } from './scenes.ts';

const denoiser = new SpectralDenoiser();
const narrow = (pcm: Int16Array): Int16Array => denoiseWith(denoiser.createStream({ narrowband: true }), pcm);
const wide = (pcm: Int16Array): Int16Array => denoiseWith(denoiser.createStream(), pcm);
/** 12.0625 ms: decimator 16 + one 8 kHz hop (80 × 2) + interpolator 17, in 16 kHz samples. */
const DELAY = 193;
const WIDE_DELAY = 160;
const UTTERANCES = ['utt-opening-hours', 'utt-book-table', 'utt-cancel', 'utt-address', 'utt-phone-number', 'bc-yeah'];

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

describe('narrowband spectral streams', () => {
  it('are what createStream({ narrowband: true }) gives, with their own exact delay', async () => {
    const s = denoiser.createStream({ narrowband: true });
    expect(s).toBeInstanceOf(SpectralNarrowbandStream);
    expect(denoiser.createStream()).toBeInstanceOf(SpectralDenoiseStream);
    expect(denoiser.createStream({ narrowband: false })).toBeInstanceOf(SpectralDenoiseStream);
    expect(s.delayMs).toBe(12.0625);
    expect((s.delayMs * 16000) / 1000).toBe(DELAY);
    expect(SpectralNarrowbandStream.delayMs).toBe(12.0625);
    expect([denoiser.delayMs, denoiser.delayMsFor(), denoiser.delayMsFor({ narrowband: true })]).toEqual([10, 10, 12.0625]);
    expect(denoiser.createStream().delayMs).toBe(10);
    // The in-thread engine denoiser passes the option through.
    const engine = await loadEngineDenoiser({ thread: 'inline' });
    const es = engine.createStream({ narrowband: true });
    expect([engine.delayMsFor({ narrowband: true }), es.delayMs]).toEqual([12.0625, 12.0625]);
    const input = toFrames(telephone(loadFixture('utt-cancel')));
    const ref = denoiser.createStream({ narrowband: true });
    for (const f of input.slice(0, 50)) expect(same((await es.process(f)).samples, ref.process(f).samples)).toBe(true);
    await engine.close();
  });

  it('delay the audio by exactly delayMs (193 samples) and keep clean speech intact', () => {
    for (const name of ['utt-book-table', 'utt-opening-hours']) {
      const speech = telephone(loadFixture(name));
      const out = narrow(speech);
      const m = bestLag(speech, out);
      // A sharp peak: one sample either side already matches less.
      expect(m.lag, name).toBe(DELAY);
      expect(m.before, name).toBeLessThan(m.peak);
      expect(m.after, name).toBeLessThan(m.peak);
      // Measured −0.7 dB, as wideband (−0.6): the quietest bins between harmonics are taken for noise.
      expect(Math.abs(db(energy(out) / energy(speech))), name).toBeLessThan(1);
    }
  });

  it('keep digital silence silent, including after speech', () => {
    expect(narrow(new Int16Array(16000)).every((v) => v === 0)).toBe(true);
    const speech = telephone(loadFixture('utt-yes'));
    const out = narrow(concatPcm([speech, new Int16Array(16000)]));
    // Measured: the last non-zero sample 176 after the input's end (filters and one window).
    expect(out.subarray(speech.length + DELAY + 320).every((v) => v === 0)).toBe(true);
  });

  it('read input frames that are views into shared slabs (byteOffset) like standalone ones', () => {
    const input = telephone(scene('utt-cancel', 'noise-street').noisy).subarray(0, 3 * 16000);
    // copySamples packs frames into one 64 KiB slab, each at its own byteOffset.
    const views = toFrames(input).map((f) => ({ samples: copySamples(f.samples), sampleRate: 16000 }));
    expect(views.some((f) => f.samples.byteOffset > 0)).toBe(true);
    const s = denoiser.createStream({ narrowband: true });
    const got = concatPcm(views.map((f) => s.process(f).samples));
    expect(same(got, narrow(input))).toBe(true);
    expect(views.length * FRAME_SAMPLES).toBe(input.length);
  });

  it('on telephone-band speech over street noise: the cut and the speech level of wideband, within 1 dB', () => {
    let gain = 0;
    for (const name of UTTERANCES) {
      const { clean, noisy } = scene(name, 'noise-street');
      const [c, n] = [telephone(clean), telephone(noisy)];
      const nb = measure(c, n, narrow(n), DELAY);
      const wb = measure(c, n, wide(n), WIDE_DELAY);
      // Measured: noise-only frames 13.1-13.6 dB down (wideband the same ±0.1), speech −0.2…−1.0 dB
      // (wideband ±0.1 of it), segmental SNR +0…+6 dB.
      expect(nb.noiseCutDb, name).toBeGreaterThan(10);
      expect(Math.abs(nb.noiseCutDb - wb.noiseCutDb), name).toBeLessThan(1);
      expect(Math.abs(nb.speechDb), name).toBeLessThan(1.5);
      expect(Math.abs(nb.speechDb - wb.speechDb), name).toBeLessThan(1);
      expect(nb.segSnrOut, name).toBeGreaterThan(nb.segSnrIn - 0.5);
      gain += (nb.segSnrOut - nb.segSnrIn) / UTTERANCES.length;
    }
    expect(gain).toBeGreaterThan(1.5);
  });

  it('give nearly the wideband output on telephone-band audio (the same suppressor, at 8 kHz)', () => {
    for (const name of ['utt-book-table', 'utt-phone-number']) {
      const n = telephone(scene(name, 'noise-street').noisy);
      const a = narrow(n);
      const b = wide(n);
      let diff = 0;
      for (let i = 0; i + DELAY < n.length; i++) diff += (a[i + DELAY]! - b[i + WIDE_DELAY]!) ** 2;
      // Measured 28-31 dB below the signal: the extra resampling pass and rounding at 8 kHz.
      expect(db((energy(b) * b.length) / diff), name).toBeGreaterThan(20);
    }
  });

  it('cut noise-only telephone audio by at least 10 dB once converged, loud or quiet', () => {
    for (const [name, gain] of [['noise-street', 1], ['noise-street', 4], ['silence-roomtone', 1]] as const) {
      const noise = telephone(loadFixture(name).map((v) => clip(v * gain)));
      const out = narrow(noise);
      // Measured: street 16.1 dB (wideband 16.4), room tone 16.8 (16.9).
      expect(db(energy(noise, 24000, noise.length - DELAY) / energy(out, 24000 + DELAY)), `${name} ×${gain}`).toBeGreaterThan(10);
    }
  });

  it('Silero VAD still finds every onset in telephone-band street noise after denoising', async () => {
    for (const name of UTTERANCES) {
      const { clean, noisy } = scene(name, 'noise-street');
      const onset = energyOnsetMs(clean);
      const events = (await runVad(vad.createStream(), narrow(telephone(noisy)))).events;
      const s = events.filter((e) => e.type === 'speech-start').map((e) => e.startMs);
      expect(s, name).toHaveLength(1);
      expect(s[0]! - onset, name).toBeGreaterThanOrEqual(0);
      expect(s[0]! - onset, name).toBeLessThanOrEqual(100);
    }
  });

  it('keep per-call state apart: interleaved streams of both modes equal separate runs', () => {
    const a = toFrames(telephone(scene('utt-cancel', 'noise-street').noisy));
    const b = toFrames(telephone(loadFixture('utt-yes')));
    const c = toFrames(loadFixture('utt-book-table'));
    const sep = [narrow(concatPcm(a.map((f) => f.samples))), narrow(concatPcm(b.map((f) => f.samples))), wide(concatPcm(c.map((f) => f.samples)))];
    const streams = [denoiser.createStream({ narrowband: true }), denoiser.createStream({ narrowband: true }), denoiser.createStream()];
    const outs: Int16Array[][] = [[], [], []];
    const inputs = [a, b, c];
    for (let i = 0; i < Math.max(a.length, b.length, c.length); i++) {
      inputs.forEach((fs, k) => {
        if (fs[i]) outs[k]!.push(streams[k]!.process(fs[i]!).samples);
      });
    }
    outs.forEach((o, k) => expect(same(concatPcm(o), sep[k]!), `stream ${k}`).toBe(true));
  });
});

describe('RNNoise and the narrowband option', () => {
  it('accepts it and ignores it: the same stream, the same 12 ms delay', async () => {
    const rnnoise = await loadDenoiser('rnnoise');
    expect(rnnoise).toBeInstanceOf(Denoiser);
    expect([rnnoise.delayMs, rnnoise.delayMsFor({ narrowband: true })]).toEqual([12, 12]);
    const a = rnnoise.createStream({ narrowband: true });
    const b = rnnoise.createStream();
    expect(a.delayMs).toBe(12);
    for (const f of toFrames(telephone(loadFixture('utt-opening-hours-street'))).slice(0, 100)) {
      expect(same(a.process(f).samples, b.process(f).samples)).toBe(true);
    }
    a.close();
    b.close();
  });
});
