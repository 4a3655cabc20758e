import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Denoiser, DenoiseStream } from '../../../src/audio/denoise.ts';
import { concatPcm } from '../../../src/audio/frame.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { db, energy, energyOnsetMs, loadFixture, runVad, toFrames } from '../vad/fixture-audio.ts';
import { interleave } from './scenes.ts';

let denoiser: Denoiser;
let vad: SileroVad;
beforeAll(async () => {
  denoiser = await Denoiser.load();
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

function denoise(pcm: Int16Array, stream = denoiser.createStream()): Int16Array {
  const out = concatPcm(toFrames(pcm).map((f) => stream.process(f).samples));
  stream.close();
  return out;
}

function mix(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(a.length);
  for (let i = 0; i < out.length; i++) out[i] = Math.max(-32768, Math.min(32767, a[i]! + (b[i % b.length] ?? 0)));
  return out;
}

const same = (x: Int16Array, y: Int16Array): boolean => Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength));

const DELAY = Math.round((DenoiseStream.delayMs * 16000) / 1000);

describe('RNNoise denoiser at 16 kHz', () => {
  it('turns 20 ms frames into 20 ms frames at 16 kHz', () => {
    const s = denoiser.createStream();
    const out = s.process({ samples: new Int16Array(320), sampleRate: 16000 });
    expect(out.sampleRate).toBe(16000);
    expect(out.samples).toHaveLength(320);
    expect(() => s.process({ samples: new Int16Array(100), sampleRate: 16000 })).toThrow(RangeError);
    expect(() => s.process({ samples: new Int16Array(160), sampleRate: 8000 })).toThrow(RangeError);
    s.close();
  });

  it('delays audio by the documented 12 ms', () => {
    // flite speech: clean periodic structure gives one clear cross-correlation peak.
    const speech = loadFixture('utt-book-table');
    const out = denoise(speech);
    let best = -Infinity;
    let bestLag = -1;
    for (let lag = 0; lag < 400; lag++) {
      let acc = 0;
      for (let i = 0; i + lag < speech.length; i += 2) acc += speech[i]! * out[i + lag]!;
      if (acc > best) [best, bestLag] = [acc, lag];
    }
    expect(Math.abs(bestLag - DELAY)).toBeLessThanOrEqual(4);
  });

  it('removes most of the street noise (measured: -32 dBFS in, below -60 dBFS out)', () => {
    const noise = loadFixture('noise-street');
    const out = denoise(noise);
    // Skip the first 0.5 s while RNNoise's noise estimate settles.
    const reduction = db(energy(noise, 8000) / energy(out, 8000));
    expect(reduction).toBeGreaterThan(20);
  });

  it('keeps clean speech at its level', () => {
    const speech = loadFixture('utt-opening-hours');
    const out = denoise(speech);
    expect(Math.abs(db(energy(out) / energy(speech)))).toBeLessThan(2);
  });

  it('on speech in noise: cuts the noise-only parts, keeps the speech parts, VAD still hears it', async () => {
    const speech = loadFixture('utt-cancel');
    const noise = loadFixture('noise-street');
    const noisy = mix(speech, noise);
    const out = denoise(noisy);
    // Classify 20 ms frames by the clean speech, then compare energies frame-aligned (delay removed).
    let speechIn = 0, speechOut = 0, speechClean = 0, quietIn = 0, quietOut = 0;
    for (let at = 0; at + 320 + DELAY <= speech.length; at += 320) {
      const clean = energy(speech, at, at + 320);
      const inE = energy(noisy, at, at + 320);
      const outE = energy(out, at + DELAY, at + DELAY + 320);
      if (clean > 32768 ** 2 * 10 ** (-30 / 10)) [speechIn, speechOut, speechClean] = [speechIn + inE, speechOut + outE, speechClean + clean];
      // The fixtures' lead-in and tail: digital silence plus sox's ±1 LSB dither.
      else if (clean < 32768 ** 2 * 10 ** (-70 / 10)) [quietIn, quietOut] = [quietIn + inE, quietOut + outE];
    }
    // Measured: noise-only frames 32 dB down, speech frames within 0.1 dB of the clean speech.
    expect(quietIn).toBeGreaterThan(0);
    expect(db(quietIn / quietOut)).toBeGreaterThan(15);
    expect(Math.abs(db(speechOut / speechClean))).toBeLessThan(3);
    expect(db(speechIn / speechOut)).toBeLessThan(3);

    const { events } = await runVad(vad.createStream(), out);
    const starts = events.filter((e) => e.type === 'speech-start');
    expect(starts).toHaveLength(1);
    expect(Math.abs(starts[0]!.startMs - energyOnsetMs(speech))).toBeLessThanOrEqual(100);
  });

  it('keeps per-call state apart: interleaved streams equal separate runs', () => {
    const a = toFrames(loadFixture('noise-street'));
    const b = toFrames(loadFixture('utt-yes'));
    const sepA = denoise(concatPcm(a.map((f) => f.samples)));
    const sepB = denoise(concatPcm(b.map((f) => f.samples)));
    const sa = denoiser.createStream();
    const sb = denoiser.createStream();
    const [outA, outB] = interleave(sa, a, sb, b);
    // Byte comparison: toEqual on 80k-element typed arrays takes seconds.
    expect(same(outA, sepA)).toBe(true);
    expect(same(outB, sepB)).toBe(true);
    sa.close();
    sb.close();
  });

  it('close() is idempotent and a closed stream refuses audio', () => {
    const s = denoiser.createStream();
    s.close();
    s.close();
    expect(() => s.process({ samples: new Int16Array(320), sampleRate: 16000 })).toThrow(/closed/);
  });
});
