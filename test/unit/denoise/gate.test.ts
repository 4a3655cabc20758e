/**
 * The denoiser's silence gate (src/audio/denoise-gate.ts): a quiet line's frames skip the backend
 * and come out silent, the speech comes out as close to the clean speech as without the gate, and
 * a worker-backed stream behind the gate gives what an in-thread one does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DENOISE_GATE_HANGOVER_FRAMES, GatedDenoiseStream } from '../../../src/audio/denoise-gate.ts';
import { SpectralDenoiser } from '../../../src/audio/denoise-spectral.ts';
import { WorkerDenoiser } from '../../../src/audio/denoise-worker.ts';
import { concatPcm, type AudioFrame } from '../../../src/audio/frame.ts';
import { loadFixture, toFrames } from '../vad/fixture-audio.ts';
import { at8k, toFrames8k } from './scenes.ts';

const denoiser = new SpectralDenoiser();
const hiss = loadFixture('silence-roomtone');
/** Line hiss (−68 dBFS) of `ms`; `zeros` instead gives the clean reference's silence. */
const line = (ms: number, zeros = false): Int16Array => Int16Array.from({ length: ms * 16 }, (_, i) => (zeros ? 0 : hiss[i % hiss.length]!));
/** A caller on a quiet line: listens, speaks, listens four seconds, speaks again. */
const call = (name: string, zeros = false): Int16Array =>
  concatPcm([line(1500, zeros), loadFixture(name), line(4000, zeros), loadFixture(name), line(500, zeros)]);

/** SNR (dB) of `out` against `ref` delayed by `delay` samples. */
function snr(out: Int16Array, ref: Int16Array, delay: number): number {
  let s = 0;
  let e = 0;
  for (let i = 0; i < ref.length && i + delay < out.length; i++) {
    s += ref[i]! ** 2;
    e += (out[i + delay]! - ref[i]!) ** 2;
  }
  return 10 * Math.log10(s / e);
}

const collect = (frames: AudioFrame[], process: (f: AudioFrame) => AudioFrame): Int16Array => concatPcm(frames.map((f) => process(f).samples));

describe('GatedDenoiseStream', () => {
  for (const narrowband of [false, true]) {
    it(`keeps the speech as close to the clean speech as the backend alone, skipping most of the line${narrowband ? ' (telephone band, 8 kHz)' : ''}`, () => {
      // Narrowband: the call as a G.711 line carries it, at 8 kHz (the gate is rate-agnostic:
      // 20 ms frames either way, so its hangover is the same second).
      const band = narrowband ? at8k : (x: Int16Array): Int16Array => x;
      const framesOf = narrowband ? toFrames8k : toFrames;
      const rate = narrowband ? 8000 : 16000;
      const delay = (denoiser.delayMsFor({ narrowband }) * rate) / 1000;
      let skipped = 0;
      let total = 0;
      for (const name of ['utt-opening-hours', 'utt-yes', 'bc-mm-hmm', 'utt-address', 'utt-book-table', 'utt-phone-number']) {
        const frames = framesOf(band(call(name)));
        const clean = band(call(name, true));
        const gated = new GatedDenoiseStream(denoiser.createStream({ narrowband }));
        const alone = denoiser.createStream({ narrowband });
        const withGate = collect(frames, (f) => gated.process(f) as AudioFrame);
        const without = collect(frames, (f) => alone.process(f));
        expect(snr(withGate, clean, delay), name).toBeGreaterThan(snr(without, clean, delay) - 0.5);
        skipped += gated.skipped;
        total += frames.length;
      }
      // 6 s of hiss (plus the fixtures' 0.5 s lead-ins) of about 9 s, less a second after each
      // utterance and at the start.
      expect(skipped / total).toBeGreaterThan(0.38);
    });
  }

  it('hands the backend no gated frame, answers them with silence, and primes it when speech returns', () => {
    const inner = denoiser.createStream({ narrowband: true });
    const given: AudioFrame[] = [];
    const gated = new GatedDenoiseStream({ process: (f) => (given.push(f), inner.process(f)) });
    const quiet = toFrames8k(at8k(line(1600)));
    const outs = quiet.map((f) => gated.process(f) as AudioFrame);
    expect(given).toHaveLength(DENOISE_GATE_HANGOVER_FRAMES);
    expect(gated.skipped).toBe(quiet.length - DENOISE_GATE_HANGOVER_FRAMES);
    for (const o of outs.slice(DENOISE_GATE_HANGOVER_FRAMES)) {
      // Silence at the frame's own rate and length: 20 ms at 8 kHz.
      expect([o.samples.length, o.sampleRate]).toEqual([160, 8000]);
      expect(o.samples.every((s) => s === 0)).toBe(true);
    }
    const speech = toFrames8k(at8k(loadFixture('utt-yes')).subarray(4800, 4800 + 1600));
    const out = gated.process(speech[0]!) as AudioFrame;
    // The last skipped frame first (output dropped), then the loud one.
    expect(given.slice(-2)).toEqual([quiet.at(-1), speech[0]]);
    expect(out.samples.some((s) => s !== 0)).toBe(true);
    for (const f of speech.slice(1)) gated.process(f);
    expect(given).toHaveLength(DENOISE_GATE_HANGOVER_FRAMES + 1 + speech.length);
  });

  it('a skipped frame the backend refuses when primed costs the loud frame nothing', () => {
    // The line went quiet at 8 kHz (a codec change); the wideband backend refuses that frame.
    const gated = new GatedDenoiseStream(denoiser.createStream());
    for (let i = 0; i < DENOISE_GATE_HANGOVER_FRAMES; i++) gated.process({ samples: new Int16Array(320), sampleRate: 16000 });
    gated.process({ samples: new Int16Array(160), sampleRate: 8000 });
    expect(gated.skipped).toBe(1);
    const loud = { samples: new Int16Array(320).fill(4000), sampleRate: 16000 };
    const out = gated.process(loud) as AudioFrame;
    expect([out.samples.length, out.sampleRate]).toEqual([320, 16000]);
    const seen: string[] = [];
    gated.processThen(loud, () => seen.push('done'), (e) => seen.push(e.message));
    expect(seen).toEqual(['done']);
  });

  it('closes the backend stream with it', () => {
    let closed = 0;
    new GatedDenoiseStream({ process: (f) => f, close: () => void closed++ }).close();
    expect(closed).toBe(1);
  });
});

describe('GatedDenoiseStream over the worker', () => {
  let worker: WorkerDenoiser;
  beforeAll(async () => {
    worker = await WorkerDenoiser.load();
  });
  afterAll(async () => {
    await worker.close();
  });

  it('gives, frame by frame, what the gate over an in-thread stream gives', async () => {
    const frames = toFrames8k(at8k(call('utt-phone-number')));
    const inline = new GatedDenoiseStream(denoiser.createStream({ narrowband: true }));
    const remote = new GatedDenoiseStream(worker.createStream({ narrowband: true }));
    const before = worker.stats.frames;
    for (const f of frames) {
      const want = (inline.process(f) as AudioFrame).samples;
      const got = (await remote.process(f)).samples;
      expect(got).toEqual(want);
    }
    expect(remote.skipped).toBe(inline.skipped);
    // The worker saw the frames the gate let through and the primes, nothing else.
    expect(worker.stats.frames - before).toBeLessThan(frames.length - remote.skipped + 5);
    remote.close();
  });

  it('processThen gives the same frames by callback: gated ones inside the call, denoised ones later', async () => {
    const frames = toFrames8k(at8k(call('utt-phone-number')));
    const byPromise = new GatedDenoiseStream(worker.createStream({ narrowband: true }));
    const byCallback = new GatedDenoiseStream(worker.createStream({ narrowband: true }));
    let inside = 0;
    for (const f of frames) {
      const want = (await byPromise.process(f)).samples;
      let sync = true;
      const got = await new Promise<AudioFrame>((resolve, reject) => {
        byCallback.processThen(f, (out) => {
          if (sync) inside++;
          resolve(out);
        }, reject);
        sync = false;
      });
      expect(got.samples).toEqual(want);
    }
    expect(byCallback.skipped).toBe(byPromise.skipped);
    // Exactly the frames the gate answered came back inside the call; the worker's never do.
    expect(inside).toBe(byCallback.skipped);
    byPromise.close();
    byCallback.close();
  });

  it('processThen takes frames before the earlier ones are answered and answers them in order, gated ones included', async () => {
    // The whole call at once, as a listener with several frames in flight gives them: the gate
    // closes on frames given while the last loud ones are still with the worker, and opens
    // (priming the backend) while silent answers wait behind them.
    const frames = toFrames8k(at8k(call('utt-phone-number')));
    const inline = new GatedDenoiseStream(denoiser.createStream({ narrowband: true }));
    const want = frames.map((f) => (inline.process(f) as AudioFrame).samples);
    const remote = new GatedDenoiseStream(worker.createStream({ narrowband: true }));
    const got: Int16Array[] = [];
    await new Promise<void>((resolve, reject) => {
      for (const f of frames) {
        remote.processThen(f, (out) => {
          got.push(out.samples);
          if (got.length === frames.length) resolve();
        }, reject);
      }
    });
    expect(remote.skipped).toBe(inline.skipped);
    expect(remote.skipped).toBeGreaterThan(0);
    expect(got).toEqual(want);
    remote.close();
  });

  it('processThen over a stream without it (in-thread) answers inside the call, and reports a refused frame to `fail`', () => {
    const gated = new GatedDenoiseStream(denoiser.createStream());
    const seen: string[] = [];
    gated.processThen({ samples: new Int16Array(320).fill(3000), sampleRate: 16000 }, (out) => seen.push(`done ${out.samples.length}`), (e) => seen.push(`fail ${e.message}`));
    gated.processThen({ samples: new Int16Array(320).fill(3000), sampleRate: 8000 }, () => seen.push('done'), (e) => seen.push(`fail ${e.constructor.name}`));
    expect(seen).toEqual(['done 320', 'fail RangeError']);
  });
});
