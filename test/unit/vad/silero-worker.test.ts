// The inference thread's failure handling: a crash or an error fails only the batch it hit, the
// streams keep their state, and close() under load never takes the process down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SileroVad, SILERO_WINDOW_SAMPLES } from '../../../src/audio/vad/silero.ts';
import { WorkerBackend } from '../../../src/audio/vad/silero-backend.ts';
import { loadFixture, toFrames } from './fixture-audio.ts';

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

const windows = (pcm: Int16Array) =>
  Array.from({ length: Math.floor(pcm.length / SILERO_WINDOW_SAMPLES) }, (_, i) => ({
    samples: pcm.subarray(i * SILERO_WINDOW_SAMPLES, (i + 1) * SILERO_WINDOW_SAMPLES),
    sampleRate: 16000,
  }));

describe('VAD worker failures', () => {
  it('after a crash the stream runs the failed window again and goes on exactly as if nothing happened', async () => {
    const frames = windows(loadFixture('utt-opening-hours'));
    const ref = vad.createStream();
    const reference: number[] = [];
    for (const f of frames) reference.push(await ref.push(f));

    const own = await SileroVad.load();
    try {
      const backend = own.backend as WorkerBackend;
      const s = own.createStream();
      const got: number[] = [];
      for (const f of frames.slice(0, 20)) got.push(await s.push(f));
      // The worker dies instead of running the next batch it gets: window 20's.
      const crashed = backend.crashForTest();
      await expect(s.push(frames[20]!)).rejects.toThrow(/VAD worker exited with code 1/);
      await crashed;
      // The failed window is still in the stream: the next push runs it first, then its own.
      for (const f of frames.slice(21)) got.push(await s.push(f));
      expect(got).toEqual([...reference.slice(0, 20), ...reference.slice(21)]);
      expect(s.windows).toBe(frames.length);
      expect(backend.starts).toBe(2);
    } finally {
      await own.close();
    }
  });

  it('a crash fails both runs of a mixed batch; each stream then goes on exactly as if nothing happened', async () => {
    const frames = windows(loadFixture('utt-address'));
    const pair = (v: SileroVad) => [v.createStream(), v.createStream({ narrowband: true })] as const;
    // One window of each rate per batch: two runs of one, as in the reference.
    const reference: [number[], number[]] = [[], []];
    const [refWide, refNarrow] = pair(vad);
    for (const f of frames) {
      const [w, n] = await Promise.all([refWide.push(f), refNarrow.push(f)]);
      reference[0].push(w);
      reference[1].push(n);
    }

    const own = await SileroVad.load();
    try {
      const backend = own.backend as WorkerBackend;
      const [wide, narrow] = pair(own);
      const got: [number[], number[]] = [[], []];
      const step = async (f: (typeof frames)[number]) => {
        const [w, n] = await Promise.all([wide.push(f), narrow.push(f)]);
        got[0].push(w);
        got[1].push(n);
      };
      for (const f of frames.slice(0, 30)) await step(f);
      const before = own.stats;
      const crashed = backend.crashForTest();
      const failed = await Promise.allSettled([wide.push(frames[30]!), narrow.push(frames[30]!)]);
      expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      await crashed;
      for (const f of frames.slice(31)) await step(f);
      expect(got[0]).toEqual([...reference[0].slice(0, 30), ...reference[0].slice(31)]);
      expect(got[1]).toEqual([...reference[1].slice(0, 30), ...reference[1].slice(31)]);
      expect([wide.windows, narrow.windows]).toEqual([frames.length, frames.length]);
      // Every batch from the crash on (the failed one included) held both rates.
      expect(own.stats.runs - before.runs).toBe(2 * (own.stats.batches - before.batches));
      expect(backend.starts).toBe(2);
    } finally {
      await own.close();
    }
  });

  it('a worker crashing while it loads the model fails the batch waiting for it, then recovers', async () => {
    const own = await SileroVad.load();
    try {
      const backend = own.backend as WorkerBackend;
      const window = () => ({ samples: new Int16Array(SILERO_WINDOW_SAMPLES), sampleRate: 16000 });
      const crashed = backend.crashForTest();
      await expect(own.createStream().push(window())).rejects.toThrow(/VAD worker exited/);
      await crashed;
      // The next window starts the next worker; crash that one while it loads the model.
      const waiting = own.createStream().push(window());
      const failed = expect(waiting).rejects.toThrow(/VAD worker exited/);
      await new Promise((r) => setTimeout(r, 5));
      expect(backend.starts).toBe(2);
      await backend.crashForTest();
      await failed;
      const again = own.createStream();
      const reference = vad.createStream();
      for (const f of windows(loadFixture('utt-yes')).slice(0, 5)) expect(await again.push(f)).toBe(await reference.push(f));
      expect(backend.starts).toBe(3);
    } finally {
      await own.close();
    }
  });

  it('an error inside the worker fails only its batch; the same worker runs the next one', async () => {
    const own = await SileroVad.load();
    try {
      const backend = own.backend as WorkerBackend;
      await expect(backend.run(0, 0)).rejects.toThrow(/bad VAD batch size 0/);
      const a = await Promise.all(windows(loadFixture('utt-yes')).slice(0, 12).map((f) => own.createStream().push(f)));
      const b = await Promise.all(windows(loadFixture('utt-yes')).slice(0, 12).map((f) => vad.createStream().push(f)));
      a.forEach((p, i) => expect(p).toBeCloseTo(b[i]!, 5));
      expect(backend.starts).toBe(1);
    } finally {
      await own.close();
    }
  });

  it('close() while many calls push fails their windows and leaves the process running', async () => {
    const own = await SileroVad.load();
    const frames = toFrames(loadFixture('utt-address'));
    let ok = 0;
    const errors: string[] = [];
    const calls = Array.from({ length: 150 }, async (_, k) => {
      // Half of them narrowband: batches of two runs each.
      const s = own.createStream({ narrowband: k % 2 === 1 });
      for (let i = k; ; i++) {
        try {
          await s.push(frames[i % frames.length]!);
          ok++;
        } catch (e) {
          errors.push((e as Error).message);
          return;
        }
      }
    });
    await new Promise((r) => setTimeout(r, 150));
    // A terminate landing inside a native run would abort this process here.
    await own.close();
    await Promise.all(calls);
    expect(ok).toBeGreaterThan(150);
    expect(errors).toHaveLength(150);
    expect(new Set(errors)).toEqual(new Set(['SileroVad is closed']));
  });
});
