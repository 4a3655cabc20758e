import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CascadeDeps } from '../../../src/call/cascade/deps.ts';
import { Denoiser, DEFAULT_DENOISER_BACKEND, loadDenoiser, type DenoiserBackend } from '../../../src/audio/denoise.ts';
import { SpectralDenoiser, SpectralDenoiseStream } from '../../../src/audio/denoise-spectral.ts';
import { concatPcm } from '../../../src/audio/frame.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import type { SpeechEvent } from '../../../src/audio/vad/detector.ts';
import { db, energy, energyOnsetMs, loadFixture, runVad, toFrames } from '../vad/fixture-audio.ts';
import { clip, denoiseWith, interleave, measure, same, scene, telephone } from './scenes.ts';

const denoiser = new SpectralDenoiser();
const DELAY = (SpectralDenoiseStream.delayMs * 16000) / 1000; // 160 samples
const UTTERANCES = ['utt-opening-hours', 'utt-book-table', 'utt-cancel', 'utt-address', 'utt-phone-number', 'bc-yeah'];

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

function denoise(pcm: Int16Array, stream = denoiser.createStream()): Int16Array {
  return denoiseWith(stream, pcm);
}

const starts = (events: SpeechEvent[]): number[] => events.filter((e) => e.type === 'speech-start').map((e) => e.startMs);

describe('denoiser backends', () => {
  it('spectral is the default; both plug into the cascade as CascadeDeps["denoiser"]', async () => {
    expect(DEFAULT_DENOISER_BACKEND).toBe('spectral');
    const spectral = await loadDenoiser();
    const rnnoise = await loadDenoiser('rnnoise');
    expect(spectral).toBeInstanceOf(SpectralDenoiser);
    expect(rnnoise).toBeInstanceOf(Denoiser);
    // Compile-time part of the check: the cascade's slot accepts either backend as is.
    const slots: NonNullable<CascadeDeps['denoiser']>[] = [spectral, rnnoise];
    const backends: DenoiserBackend[] = [spectral, rnnoise];
    expect(backends.map((b) => [b.name, b.delayMs])).toEqual([['spectral', 10], ['rnnoise', 12]]);
    for (const slot of slots) {
      const s = slot.createStream();
      expect((await s.process({ samples: new Int16Array(320), sampleRate: 16000 })).samples).toHaveLength(320);
      s.close?.();
    }
  });
});

describe('SpectralDenoiser', () => {
  it.each([
    ['wideband', {}, 16000, 8000],
    ['narrowband', { narrowband: true }, 8000, 16000],
  ] as const)('%s: turns %i Hz frames into new frames of the same rate and length, refuses other shapes and rates', (_band, options, rate, other) => {
    const s = denoiser.createStream(options);
    // 20 ms; then 10 ms (one hop) and 40 ms.
    const frame = rate / 50;
    const input = { samples: new Int16Array(frame).fill(100), sampleRate: rate };
    const out = s.process(input);
    expect(out.sampleRate).toBe(rate);
    expect(out.samples).toHaveLength(frame);
    expect(out.samples).not.toBe(input.samples);
    expect(s.process({ samples: new Int16Array(frame / 2), sampleRate: rate }).samples).toHaveLength(frame / 2);
    expect(s.process({ samples: new Int16Array(frame * 2), sampleRate: rate }).samples).toHaveLength(frame * 2);
    expect(() => s.process({ samples: new Int16Array(100), sampleRate: rate })).toThrow(RangeError);
    // The other mode's rate, whatever the length: a RangeError naming the stream's rate and the frame's.
    for (const n of [160, 320]) {
      expect(() => s.process({ samples: new Int16Array(n), sampleRate: other })).toThrow(RangeError);
      expect(() => s.process({ samples: new Int16Array(n), sampleRate: other })).toThrow(`${rate} Hz frames, got ${other} Hz`);
    }
    s.close();
    s.close();
    expect(() => s.process(input)).toThrow(/closed/);
  });

  it('delays audio by exactly the documented 10 ms and otherwise keeps clean speech intact', () => {
    const speech = loadFixture('utt-book-table');
    const out = denoise(speech);
    let best = -Infinity;
    let bestLag = -1;
    for (let lag = 0; lag < 400; lag++) {
      let acc = 0;
      for (let i = 0; i + lag < speech.length; i += 2) acc += speech[i]! * out[i + lag]!;
      if (acc > best) [best, bestLag] = [acc, lag];
    }
    expect(bestLag).toBe(DELAY);
    // Measured −0.6 dB: the quietest bins between harmonics and word ends are taken for noise.
    expect(Math.abs(db(energy(out) / energy(speech)))).toBeLessThan(1);
  });

  it('keeps digital silence silent, including after speech', () => {
    expect(denoise(new Int16Array(16000)).every((v) => v === 0)).toBe(true);
    const speech = loadFixture('utt-yes');
    const tail = 16000;
    const out = denoise(concatPcm([speech, new Int16Array(tail)]));
    // One window after the speech ends (plus the delay) nothing is left.
    expect(out.subarray(speech.length + 2 * DELAY + 320).every((v) => v === 0)).toBe(true);
  });

  it('cuts noise-only audio by at least 10 dB once converged (street 16-17 dB, room tone 16 dB)', () => {
    for (const [name, gain] of [['noise-street', 1], ['noise-street', 4], ['silence-roomtone', 1]] as const) {
      const noise = loadFixture(name).map((v) => clip(v * gain));
      const out = denoise(noise);
      // After 1.5 s: the minimum search needs its ~1 s window (the street fixture's rumble also
      // fades in over its first second, which reads as a rising noise).
      expect(db(energy(noise, 24000, noise.length - DELAY) / energy(out, 24000 + DELAY)), `${name} ×${gain}`).toBeGreaterThan(10);
    }
  });

  it('on speech over street noise: noise-only frames −10 dB or more, speech within 1.5 dB of clean, segmental SNR up', () => {
    let gain = 0;
    for (const name of UTTERANCES) {
      const { clean, noisy } = scene(name, 'noise-street');
      const m = measure(clean, noisy, denoise(noisy), DELAY);
      // Measured: noise cut 16-17 dB, speech −0.1…−1.0 dB, segmental SNR +0…+6 dB (mean +2.9).
      expect(m.noiseCutDb, name).toBeGreaterThan(10);
      expect(Math.abs(m.speechDb), name).toBeLessThan(1.5);
      expect(m.segSnrOut, name).toBeGreaterThan(m.segSnrIn - 0.5);
      gain += (m.segSnrOut - m.segSnrIn) / UTTERANCES.length;
    }
    expect(gain).toBeGreaterThan(2);
  });

  it('on babble (other voices) it does little, by design, and keeps the caller', () => {
    const { clean, noisy } = scene('utt-cancel', 'noise-babble');
    const m = measure(clean, noisy, denoise(noisy), DELAY);
    // Measured: 4 dB of the babble removed, speech −1.2 dB. RNNoise does no better here (3 dB).
    expect(m.noiseCutDb).toBeGreaterThan(2);
    expect(Math.abs(m.speechDb)).toBeLessThan(2);
  });

  it('survives extreme input without NaN or overflow and recovers for the next speech', () => {
    const square = new Int16Array(16000).map((_, i) => (i % 40 < 20 ? 32767 : -32768));
    const impulses = new Int16Array(16000).map((_, i) => (i % 1600 === 0 ? 32767 : 0));
    const dither = new Int16Array(16000).map((_, i) => ((i * 7919) % 3) - 1);
    const speech = loadFixture('utt-opening-hours');
    const out = denoise(concatPcm([square, impulses, dither, speech]));
    const at = 48000 + DELAY;
    // A NaN or Infinity in the state would zero or blow up everything after it.
    expect(Math.abs(db(energy(out, at) / energy(speech)))).toBeLessThan(1.5);
    let peak = 0;
    for (let i = at; i < out.length; i++) peak = Math.max(peak, Math.abs(out[i]!));
    let inPeak = 0;
    for (const v of speech) inPeak = Math.max(inPeak, Math.abs(v));
    // Gains are ≤ 1: overlap-add may round a little above the input peak but never clips.
    expect(peak).toBeLessThan(32767);
    expect(peak).toBeLessThanOrEqual(inPeak * 1.05);
  });

  it('Silero VAD still finds every onset in street noise after denoising', async () => {
    for (const name of UTTERANCES) {
      const { clean, noisy } = scene(name, 'noise-street');
      const onset = energyOnsetMs(clean);
      const s = starts((await runVad(vad.createStream(), denoise(noisy))).events);
      expect(s, name).toHaveLength(1);
      // Measured 20-80 ms after the energy onset (raw noisy audio: 20-80 ms), 10 ms of it the delay.
      expect(s[0]! - onset, name).toBeGreaterThanOrEqual(0);
      expect(s[0]! - onset, name).toBeLessThanOrEqual(100);
    }
  });

  it('Silero VAD: no false starts on street noise, fewer on street noise with engine hum', async () => {
    for (const gain of [1, 4]) {
      const noise = concatPcm([loadFixture('noise-street'), loadFixture('noise-street')]).map((v) => clip(v * gain));
      const { probabilities, events } = await runVad(vad.createStream(), denoise(noise));
      expect(starts(events), `street ×${gain}`).toEqual([]);
      expect(Math.max(...probabilities)).toBeLessThan(0.35); // measured ≤ 0.09 (raw ≤ 0.05)
    }
    // An idling engine: 120 Hz with 20 harmonics under the street noise looks voiced to Silero.
    const street = loadFixture('noise-street');
    const hum = new Int16Array(street.length * 2).map((_, i) => {
      let v = 0;
      for (let h = 1; h <= 20; h++) v += Math.sin((2 * Math.PI * 120 * h * i) / 16000 + h) / Math.sqrt(h);
      return clip(street[i % street.length]! + 1000 * v);
    });
    const raw = await runVad(vad.createStream(), hum);
    const clean = await runVad(vad.createStream(), denoise(hum));
    const over = (p: number[]): number => p.filter((q) => q >= 0.5).length;
    // Measured: raw 81 frames ≥ 0.5 and 3 false starts; denoised 0 and 0.
    expect(over(raw.probabilities)).toBeGreaterThan(20);
    expect(starts(raw.events).length).toBeGreaterThan(0);
    expect(over(clean.probabilities)).toBeLessThan(over(raw.probabilities) / 4);
    expect(starts(clean.events).length).toBeLessThan(starts(raw.events).length);
  });

  it('keeps per-call state apart: interleaved streams equal separate runs', () => {
    const a = toFrames(scene('utt-cancel', 'noise-street').noisy);
    const b = toFrames(loadFixture('utt-yes'));
    const sepA = denoise(concatPcm(a.map((f) => f.samples)));
    const sepB = denoise(concatPcm(b.map((f) => f.samples)));
    const sa = denoiser.createStream();
    const sb = denoiser.createStream();
    const [outA, outB] = interleave(sa, a, sb, b);
    expect(same(outA, sepA)).toBe(true);
    expect(same(outB, sepB)).toBe(true);
  });

  it('a deeper floor cuts more noise', () => {
    const noise = loadFixture('silence-roomtone');
    const cut = (floorDb: number): number => {
      const out = denoise(noise, new SpectralDenoiser({ floorDb }).createStream());
      return db(energy(noise, 24000, noise.length - DELAY) / energy(out, 24000 + DELAY));
    };
    expect(cut(12)).toBeLessThan(cut(18));
    expect(cut(12)).toBeGreaterThan(8);
    expect(() => new SpectralDenoiser({ floorDb: -3 })).toThrow(RangeError);
  });
  describe('telephone band (8 kHz audio upsampled, as every G.711 call reaches it)', () => {
    const full = new SpectralDenoiser({ narrowbandSkip: false });

    it('skipping the empty band above 5 kHz changes the output by less than −60 dB (int16 rounding)', () => {
      for (const name of ['utt-book-table', 'utt-cancel']) {
        const { noisy } = scene(name, 'noise-street');
        const input = telephone(noisy);
        const skipped = denoise(input);
        const reference = denoise(input, full.createStream());
        let diff = 0;
        for (let i = 0; i < skipped.length; i++) diff += (skipped[i]! - reference[i]!) ** 2;
        // Measured about −95 dB: what differs is ±1 LSB of rounding, spread evenly over the band.
        expect(db(energy(reference) / (diff / reference.length)), name).toBeGreaterThan(60);
      }
    });

    it('still cuts the noise and keeps the speech', () => {
      const { clean, noisy } = scene('utt-opening-hours', 'noise-street');
      const m = measure(telephone(clean), telephone(noisy), denoise(telephone(noisy)), DELAY);
      expect(m.noiseCutDb).toBeGreaterThan(10);
      expect(Math.abs(m.speechDb)).toBeLessThan(1.5);
    });

    it('wideband audio after a telephone-band stretch gets the whole spectrum back at once', () => {
      const noise = telephone(loadFixture('noise-street')).subarray(0, 2 * 16000);
      const speech = loadFixture('utt-book-table');
      const out = denoise(concatPcm([noise, speech]));
      // Energy above 5 kHz in the speech part: with that band skipped it would be cut by the
      // 18 dB floor; processed, speech there passes (measured −0.7 dB).
      const high = (x: Int16Array) => {
        let e = 0;
        for (let i = 1; i < x.length; i++) e += (x[i]! - x[i - 1]!) ** 2; // a crude high-pass
        return e;
      };
      const from = noise.length + 16000;
      expect(db(high(out.subarray(from + DELAY, from + DELAY + 32000)) / high(speech.subarray(16000, 48000)))).toBeGreaterThan(-3);
    });
  });
});
