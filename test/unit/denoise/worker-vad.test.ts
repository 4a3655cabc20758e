/**
 * The callers' VAD in the denoiser's worker (src/audio/denoise-worker-vad.ts): behind the silence
 * gate, a worker stream created with `{ vad: true }` answers each frame with the probability the
 * engine's own VAD gives for the same clean frames, silent frames included (sent as silence, or
 * answered at once once the worker has said silence cannot wake the VAD), and falls back to no
 * probability (the call's own VAD) when the worker is lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatedDenoiseStream } from '../../../src/audio/denoise-gate.ts';
import { SpectralDenoiser } from '../../../src/audio/denoise-spectral.ts';
import { WorkerDenoiser } from '../../../src/audio/denoise-worker.ts';
import { concatPcm, type AudioFrame } from '../../../src/audio/frame.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { loadFixture, toFrames } from '../vad/fixture-audio.ts';
import { at8k, toFrames8k } from './scenes.ts';

const hiss = loadFixture('silence-roomtone');
const line = (ms: number): Int16Array => Int16Array.from({ length: ms * 16 }, (_, i) => hiss[i % hiss.length]!);
/** A caller on a quiet line: listens, speaks, listens, speaks again. */
const call = (name: string): Int16Array => concatPcm([line(1500), loadFixture(name), line(2500), loadFixture(name), line(1200)]);
const NAMES = ['utt-opening-hours', 'utt-yes', 'utt-address', 'utt-book-table'];

interface Heard {
  frames: AudioFrame[];
  probabilities: (number | undefined)[];
  /** Frames answered inside processThen (the gate's own silence). */
  atOnce: number;
}

/**
 * Gives each call's frames to its stream the way the cascade's listener does, a few in flight:
 * groups of 1, 3, 5, 2 frames, the next once the last is answered, every call at once.
 */
async function hearAll(streams: GatedDenoiseStream[], calls: AudioFrame[][]): Promise<Heard[]> {
  return Promise.all(
    calls.map(async (frames, c) => {
      const heard: Heard = { frames: [], probabilities: [], atOnce: 0 };
      const groups = [1, 3, 5, 2];
      for (let at = 0, g = 0; at < frames.length; g++) {
        const group = frames.slice(at, at + groups[g % groups.length]!);
        at += group.length;
        await new Promise<void>((resolve, reject) => {
          let left = group.length;
          for (const frame of group) {
            let inside = true;
            streams[c]!.processThen(
              frame,
              (out, probability) => {
                heard.frames.push(out);
                heard.probabilities.push(probability);
                if (inside) heard.atOnce++;
                if (--left === 0) resolve();
              },
              reject,
            );
            inside = false;
          }
        });
      }
      return heard;
    }),
  );
}

describe('the VAD in the denoiser worker', () => {
  let worker: WorkerDenoiser;
  let vad: SileroVad;
  beforeAll(async () => {
    worker = await WorkerDenoiser.load({ batchIntervalMs: 20, vad: {} });
    vad = await SileroVad.load({ thread: 'inline' });
  });
  afterAll(async () => {
    await worker.close();
    await vad.close();
  });

  for (const narrowband of [true, false]) {
    it(`answers every frame with the probability the call's own VAD gives for the same clean frames${narrowband ? ' (telephone band)' : ''}`, async () => {
      expect(worker.vad).toBe(true);
      const calls = NAMES.map((name) => (narrowband ? toFrames8k(at8k(call(name))) : toFrames(call(name))));
      const streams = calls.map(() => new GatedDenoiseStream(worker.createStream({ narrowband, vad: true })));
      const before = worker.stats.vad!;
      const heard = await hearAll(streams, calls);
      const after = worker.stats.vad!;
      // The reference: the gate over the same backend in this thread, its frames through the VAD.
      const inThread = new SpectralDenoiser();
      for (const [c, frames] of calls.entries()) {
        const gate = new GatedDenoiseStream(inThread.createStream({ narrowband }));
        const own = vad.createStream({ narrowband });
        const expected: number[] = [];
        const clean: AudioFrame[] = [];
        for (const frame of frames) {
          const out = gate.process(frame) as AudioFrame;
          clean.push(out);
          expected.push(await own.push(out));
        }
        const h = heard[c]!;
        expect(h.frames.map((f) => f.samples)).toEqual(clean.map((f) => f.samples));
        expect(h.probabilities.every((p) => p !== undefined)).toBe(true);
        let worst = 0;
        for (const [i, p] of expected.entries()) worst = Math.max(worst, Math.abs(p - h.probabilities[i]!));
        // The same model and windows; only batch sizes differ.
        expect(worst).toBeLessThan(1e-4);
        // Speech was heard, and the quiet line's silence was answered without the worker.
        expect(Math.max(...expected)).toBeGreaterThan(0.9);
        expect(h.atOnce).toBeGreaterThan(20);
      }
      expect(after.windows - before.windows).toBeGreaterThan(0);
      expect(after.skipped - before.skipped).toBeGreaterThan(0);
      for (const s of streams) s.close();
    });
  }

  it('process() (a frame at a time, no probability) still lets the VAD hear every frame, as processThen does', async () => {
    const frames = toFrames8k(at8k(call('utt-yes')));
    // After the whole call, its first words again: what the VAD answers for them depends on
    // every window it heard before (its recurrent state, where its windows fall).
    const probe = frames.slice(80, 110);
    const probabilities = async (s: GatedDenoiseStream): Promise<(number | undefined)[]> => (await hearAll([s], [probe]))[0]!.probabilities;
    const byCallback = new GatedDenoiseStream(worker.createStream({ narrowband: true, vad: true }));
    const heard = (await hearAll([byCallback], [frames]))[0]!;
    const expected = await probabilities(byCallback);
    const oneAtATime = new GatedDenoiseStream(worker.createStream({ narrowband: true, vad: true }));
    const clean: AudioFrame[] = [];
    for (const frame of frames) clean.push(await oneAtATime.process(frame));
    const got = await probabilities(oneAtATime);
    expect(clean.map((f) => f.samples)).toEqual(heard.frames.map((f) => f.samples));
    expect(Math.max(...(expected as number[]))).toBeGreaterThan(0.5);
    for (const [k, p] of expected.entries()) expect(Math.abs(got[k]! - p!)).toBeLessThan(1e-4);
    byCallback.close();
    oneAtATime.close();
  });

  it('gives no probability while its worker is lost, and probabilities again from the replacement', async () => {
    const stream = new GatedDenoiseStream(worker.createStream({ narrowband: true, vad: true }));
    const frames = toFrames8k(at8k(call('utt-yes')));
    const first = await hearAll([stream], [frames.slice(0, 100)]);
    expect(first[0]!.probabilities.every((p) => p !== undefined)).toBe(true);
    worker.crashNextBatchForTest('exit');
    const lost = await hearAll([stream], [frames.slice(100, 110)]);
    expect(lost[0]!.probabilities.some((p) => p === undefined)).toBe(true);
    // The replacement loads its own model; until then frames pass through without a probability.
    const deadline = Date.now() + 20_000;
    let again: Heard | undefined;
    for (let at = 110; at < frames.length && Date.now() < deadline; at += 10) {
      again = (await hearAll([stream], [frames.slice(at, at + 10)]))[0]!;
      if (again.probabilities.every((p) => p !== undefined)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(again!.probabilities.every((p) => p !== undefined)).toBe(true);
    expect(worker.stats.starts).toBe(2);
    stream.close();
  });
});

describe('a denoiser worker whose VAD will not load', () => {
  it('still denoises, says why, and its streams answer without probabilities', async () => {
    const worker = await WorkerDenoiser.load({ vad: { modelPath: '/nonexistent/silero.onnx' } });
    try {
      expect(worker.vad).toBe(false);
      expect(worker.vadError).toMatch(/nonexistent|load|file/i);
      const stream = new GatedDenoiseStream(worker.createStream({ narrowband: true, vad: true }));
      const heard = (await hearAll([stream], [toFrames8k(at8k(call('utt-yes'))).slice(0, 60)]))[0]!;
      expect(heard.probabilities.every((p) => p === undefined)).toBe(true);
      expect(heard.frames.some((f) => f.samples.some((s) => s !== 0))).toBe(true);
      expect(worker.stats.fallbacks).toBe(0);
    } finally {
      await worker.close();
    }
  });
});
