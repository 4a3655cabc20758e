/**
 * Narrowband denoiser streams (`createStream({ narrowband: true })`): a G.711 call's audio at its
 * own 8 kHz, in and out. Input is the fixtures at 8 kHz (`at8k`: what such a call carries), set
 * against the wideband stream on the same audio brought back up to 16 kHz (`telephone`: what the
 * engine used to feed a G.711 call's denoiser). The spectral backend first, then RNNoise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Denoiser, DenoiseStream, loadDenoiser, loadEngineDenoiser, NARROWBAND_RATE } from '../../../src/audio/denoise.ts';
import { SpectralDenoiser, SpectralDenoiseStream, SpectralNarrowbandStream } from '../../../src/audio/denoise-spectral.ts';
import { concatPcm, copySamples } from '../../../src/audio/frame.ts';
import { resample } from '../../../src/audio/resample.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { db, energy, energyOnsetMs, loadFixture, runVad, toFrames } from '../vad/fixture-audio.ts';
import { at8k, bestLag, clip, denoiseWith, measure, NB_RATE, interleave, same, scene, telephone, toFrames8k } from './scenes.ts';

const denoiser = new SpectralDenoiser();
const narrow = (pcm8k: Int16Array): Int16Array => denoiseWith(denoiser.createStream({ narrowband: true }), pcm8k, NB_RATE);
const wide = (pcm: Int16Array): Int16Array => denoiseWith(denoiser.createStream(), pcm);
/** 10 ms: one hop of the suppressor at 8 kHz, nothing else (no resampling inside). */
const DELAY = 80;
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
    expect(s.sampleRate).toBe(8000);
    expect(NARROWBAND_RATE).toBe(8000);
    expect(denoiser.createStream()).toBeInstanceOf(SpectralDenoiseStream);
    expect(denoiser.createStream({ narrowband: false })).toBeInstanceOf(SpectralDenoiseStream);
    expect(s.delayMs).toBe(10);
    expect((s.delayMs * 8000) / 1000).toBe(DELAY);
    expect(SpectralNarrowbandStream.delayMs).toBe(10);
    expect([denoiser.delayMs, denoiser.delayMsFor(), denoiser.delayMsFor({ narrowband: true })]).toEqual([10, 10, 10]);
    expect(denoiser.createStream().delayMs).toBe(10);
    // The in-thread engine denoiser passes the option through.
    const engine = await loadEngineDenoiser({ thread: 'inline' });
    const es = engine.createStream({ narrowband: true });
    expect([engine.delayMsFor({ narrowband: true }), es.delayMs]).toEqual([10, 10]);
    const input = toFrames8k(at8k(loadFixture('utt-cancel')));
    const ref = denoiser.createStream({ narrowband: true });
    for (const f of input.slice(0, 50)) {
      const out = await es.process(f);
      expect(out.sampleRate).toBe(8000);
      expect(same(out.samples, ref.process(f).samples)).toBe(true);
    }
    await engine.close();
  });

  it('turn 8 kHz frames into new 8 kHz frames of the same length, refuse other shapes', () => {
    const s = denoiser.createStream({ narrowband: true });
    const input = { samples: new Int16Array(160).fill(100), sampleRate: 8000 };
    const out = s.process(input);
    expect(out.sampleRate).toBe(8000);
    expect(out.samples).toHaveLength(160);
    expect(out.samples).not.toBe(input.samples);
    // Any whole number of 10 ms hops (80 samples at 8 kHz).
    expect(s.process({ samples: new Int16Array(80), sampleRate: 8000 }).samples).toHaveLength(80);
    expect(s.process({ samples: new Int16Array(320), sampleRate: 8000 }).samples).toHaveLength(320);
    expect(() => s.process({ samples: new Int16Array(100), sampleRate: 8000 })).toThrow(RangeError);
    s.close();
    expect(() => s.process(input)).toThrow(/closed/);
  });

  it('refuse frames at the other mode\'s rate, naming both rates, in both directions', () => {
    const nb = denoiser.createStream({ narrowband: true });
    const wb = denoiser.createStream();
    // A 16 kHz frame of 320 samples is a whole number of 8 kHz hops: only the rate can catch it.
    expect(() => nb.process({ samples: new Int16Array(320), sampleRate: 16000 })).toThrow(RangeError);
    expect(() => nb.process({ samples: new Int16Array(320), sampleRate: 16000 })).toThrow(/8000 Hz.*16000 Hz/);
    expect(() => wb.process({ samples: new Int16Array(160), sampleRate: 8000 })).toThrow(RangeError);
    expect(() => wb.process({ samples: new Int16Array(160), sampleRate: 8000 })).toThrow(/16000 Hz.*8000 Hz/);
    // Refused frames leave the stream as it was: the next good frame is what a fresh stream gives.
    const f = toFrames8k(at8k(loadFixture('utt-yes')))[20]!;
    expect(same(nb.process(f).samples, denoiser.createStream({ narrowband: true }).process(f).samples)).toBe(true);
  });

  it('delay the audio by exactly delayMs (80 samples) and keep clean speech intact', () => {
    for (const name of ['utt-book-table', 'utt-opening-hours']) {
      const speech = at8k(loadFixture(name));
      const out = narrow(speech);
      const m = bestLag(speech, out, 200);
      // A sharp peak: one sample either side already matches less.
      expect(m.lag, name).toBe(DELAY);
      expect(m.before, name).toBeLessThan(m.peak);
      expect(m.after, name).toBeLessThan(m.peak);
      // Measured −0.6 and −0.15 dB, as wideband: the quietest bins between harmonics are taken for noise.
      expect(Math.abs(db(energy(out) / energy(speech))), name).toBeLessThan(1);
    }
  });

  it('keep digital silence silent, including after speech', () => {
    expect(narrow(new Int16Array(8000)).every((v) => v === 0)).toBe(true);
    const speech = at8k(loadFixture('utt-yes'));
    const out = narrow(concatPcm([speech, new Int16Array(8000)]));
    // One window (160) after the speech ends, plus the delay, nothing is left (measured: the
    // last non-zero sample 71 after the input's end).
    expect(out.subarray(speech.length + DELAY + 160).every((v) => v === 0)).toBe(true);
  });

  it('read input frames that are views into shared slabs (byteOffset) like standalone ones', () => {
    const input = at8k(scene('utt-cancel', 'noise-street').noisy).subarray(0, 3 * 8000);
    // copySamples packs frames into one 64 KiB slab, each at its own byteOffset.
    const views = toFrames8k(input).map((f) => ({ samples: copySamples(f.samples), sampleRate: 8000 }));
    expect(views.some((f) => f.samples.byteOffset > 0)).toBe(true);
    const s = denoiser.createStream({ narrowband: true });
    const got = concatPcm(views.map((f) => s.process(f).samples));
    expect(same(got, narrow(input))).toBe(true);
    expect(views.length * 160).toBe(input.length);
  });

  it('on 8 kHz speech over street noise: the cut and the speech level of wideband on the same band, within 0.25 dB', () => {
    let gain = 0;
    for (const name of UTTERANCES) {
      const { clean, noisy } = scene(name, 'noise-street');
      const nb = measure(at8k(clean), at8k(noisy), narrow(at8k(noisy)), DELAY, NB_RATE);
      const wb = measure(telephone(clean), telephone(noisy), wide(telephone(noisy)), WIDE_DELAY);
      // Measured: noise-only frames 13.0-13.7 dB down and speech −0.1…−1.0 dB, wideband on the
      // same band within 0.01 dB of both; segmental SNR −0.1…+6.5 dB.
      expect(nb.noiseCutDb, name).toBeGreaterThan(10);
      expect(Math.abs(nb.noiseCutDb - wb.noiseCutDb), name).toBeLessThan(0.25);
      expect(Math.abs(nb.speechDb), name).toBeLessThan(1.5);
      expect(Math.abs(nb.speechDb - wb.speechDb), name).toBeLessThan(0.25);
      expect(nb.segSnrOut, name).toBeGreaterThan(nb.segSnrIn - 0.5);
      gain += (nb.segSnrOut - nb.segSnrIn) / UTTERANCES.length;
    }
    expect(gain).toBeGreaterThan(1.5);
  });

  it('give nearly the wideband output on the same telephone-band audio (the same suppressor, at 8 kHz)', () => {
    for (const name of ['utt-book-table', 'utt-phone-number']) {
      const noisy = scene(name, 'noise-street').noisy;
      const a = narrow(at8k(noisy));
      // The wideband stream on the audio at 16 kHz, its output brought down to 8 kHz (resample()
      // compensates the decimator's delay, so it is still WIDE_DELAY / 2 = 80 samples late).
      const b = at8k(wide(telephone(noisy)));
      let diff = 0;
      for (let i = DELAY; i < Math.min(a.length, b.length); i++) diff += (a[i]! - b[i]!) ** 2;
      // Measured 46 and 32 dB below the signal: the resampling passes around the wideband
      // stream, and rounding at 8 kHz.
      expect(db((energy(b) * b.length) / diff), name).toBeGreaterThan(20);
    }
  });

  it('cut noise-only 8 kHz audio by at least 10 dB once converged, loud or quiet', () => {
    for (const [name, gain] of [['noise-street', 1], ['noise-street', 4], ['silence-roomtone', 1]] as const) {
      const noise = at8k(loadFixture(name).map((v) => clip(v * gain)));
      const out = narrow(noise);
      // Measured: street 16.4 dB (×1 and ×4), room tone 16.9, as wideband on the same band.
      expect(db(energy(noise, 12000, noise.length - DELAY) / energy(out, 12000 + DELAY)), `${name} ×${gain}`).toBeGreaterThan(10);
    }
  });

  it('Silero VAD still finds every onset in telephone-band street noise after denoising', async () => {
    for (const name of UTTERANCES) {
      const { clean, noisy } = scene(name, 'noise-street');
      const onset = energyOnsetMs(clean);
      // The denoised 8 kHz audio back up to 16 kHz (delay compensated) for the wideband model:
      // this checks the denoiser, whatever rate the narrowband VAD takes.
      const out = resample(narrow(at8k(noisy)), NB_RATE, 16000);
      const s = (await runVad(vad.createStream(), out)).events.filter((e) => e.type === 'speech-start').map((e) => e.startMs);
      expect(s, name).toHaveLength(1);
      expect(s[0]! - onset, name).toBeGreaterThanOrEqual(0);
      expect(s[0]! - onset, name).toBeLessThanOrEqual(100);
    }
  });

  it('keep per-call state apart: interleaved streams of both modes equal separate runs', () => {
    const a = toFrames8k(at8k(scene('utt-cancel', 'noise-street').noisy));
    const b = toFrames8k(at8k(loadFixture('utt-yes')));
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

describe('RNNoise narrowband streams', () => {
  let rnnoise: Denoiser;
  beforeAll(async () => {
    rnnoise = (await loadDenoiser('rnnoise')) as Denoiser;
  });
  const rn = (pcm8k: Int16Array): Int16Array => denoiseWith(rnnoise.createStream({ narrowband: true }), pcm8k, NB_RATE);
  /** 14 ms at 8 kHz: upsampler 96 + RNNoise 480 + downsampler 16 × 6, in 48 kHz samples, / 6. */
  const RN_DELAY = 112;

  it('take and return 8 kHz frames, with their own exact delay; wideband ones are unchanged', () => {
    expect(rnnoise).toBeInstanceOf(Denoiser);
    expect([rnnoise.delayMs, rnnoise.delayMsFor(), rnnoise.delayMsFor({ narrowband: true })]).toEqual([12, 12, 14]);
    expect([DenoiseStream.delayMs, DenoiseStream.delayMsAt(16000), DenoiseStream.delayMsAt(8000)]).toEqual([12, 12, 14]);
    const s = rnnoise.createStream({ narrowband: true });
    const w = rnnoise.createStream();
    expect([s.sampleRate, s.delayMs, (s.delayMs * 8000) / 1000]).toEqual([8000, 14, RN_DELAY]);
    expect([w.sampleRate, w.delayMs]).toEqual([16000, 12]);
    const out = s.process({ samples: new Int16Array(160).fill(100), sampleRate: 8000 });
    expect(out.sampleRate).toBe(8000);
    expect(out.samples).toHaveLength(160);
    expect(s.process({ samples: new Int16Array(80), sampleRate: 8000 }).samples).toHaveLength(80);
    expect(() => s.process({ samples: new Int16Array(100), sampleRate: 8000 })).toThrow(RangeError);
    // The other mode's rate, both directions, named in the message.
    expect(() => s.process({ samples: new Int16Array(320), sampleRate: 16000 })).toThrow(/8000 Hz.*16000 Hz/);
    expect(() => w.process({ samples: new Int16Array(160), sampleRate: 8000 })).toThrow(/16000 Hz.*8000 Hz/);
    expect(() => s.process({ samples: new Int16Array(320), sampleRate: 16000 })).toThrow(RangeError);
    s.close();
    w.close();
    expect(() => s.process({ samples: new Int16Array(160), sampleRate: 8000 })).toThrow(/closed/);
  });

  it('delay the audio by exactly delayMs (112 samples at 8 kHz) and keep clean speech at its level', () => {
    for (const name of ['utt-book-table', 'utt-opening-hours']) {
      const speech = at8k(loadFixture(name));
      const out = rn(speech);
      const m = bestLag(speech, out, 200);
      expect(m.lag, name).toBe(RN_DELAY);
      expect(m.before, name).toBeLessThan(m.peak);
      expect(m.after, name).toBeLessThan(m.peak);
      // Measured 0.0 dB for both.
      expect(Math.abs(db(energy(out) / energy(speech))), name).toBeLessThan(2);
    }
  });

  it('remove most of the street noise from 8 kHz audio, and keep the speech over it', () => {
    const noise = at8k(loadFixture('noise-street'));
    const out = rn(noise);
    // Skip the first 0.5 s while RNNoise's noise estimate settles. Measured 49 dB (wideband on
    // the full-band noise: 35).
    expect(db(energy(noise, 4000, noise.length - RN_DELAY) / energy(out, 4000 + RN_DELAY))).toBeGreaterThan(20);
    const { clean, noisy } = scene('utt-cancel', 'noise-street');
    const m = measure(at8k(clean), at8k(noisy), rn(at8k(noisy)), RN_DELAY, NB_RATE);
    // Measured: noise-only frames 33 dB down, speech −0.2 dB, segmental SNR +3.5 dB.
    expect(m.noiseCutDb).toBeGreaterThan(15);
    expect(Math.abs(m.speechDb)).toBeLessThan(3);
    expect(m.segSnrOut).toBeGreaterThan(m.segSnrIn);
  });

  it('keep per-call state apart: interleaved narrowband and wideband streams equal separate runs', () => {
    const a = toFrames8k(at8k(scene('utt-cancel', 'noise-street').noisy));
    const b = toFrames(loadFixture('utt-yes'));
    const sepA = rn(concatPcm(a.map((f) => f.samples)));
    const sepB = denoiseWith(rnnoise.createStream(), concatPcm(b.map((f) => f.samples)));
    const [sa, sb] = [rnnoise.createStream({ narrowband: true }), rnnoise.createStream()];
    const [outA, outB] = interleave(sa, a, sb, b);
    expect(same(outA, sepA)).toBe(true);
    expect(same(outB, sepB)).toBe(true);
    sa.close();
    sb.close();
  });
});
