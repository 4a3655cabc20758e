/**
 * The worker-backed denoiser (src/audio/denoise-worker.ts): the same samples as the in-thread
 * backends for interleaved streams of either mode (wideband at 16 kHz, narrowband at 8 kHz),
 * batching across streams, per-frame fallback when the worker dies mid-batch (and its
 * replacement), and close().
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Denoiser, loadEngineDenoiser } from '../../../src/audio/denoise.ts';
import { SpectralDenoiser } from '../../../src/audio/denoise-spectral.ts';
import { WorkerDenoiser, type WorkerDenoiseStream } from '../../../src/audio/denoise-worker.ts';
import { concatPcm, type AudioFrame } from '../../../src/audio/frame.ts';
import { loadFixture, toFrames } from '../vad/fixture-audio.ts';
import { at8k, same, toFrames8k } from './scenes.ts';

/**
 * A few seconds of each fixture, as 20 ms frames: at 16 kHz, or with `narrowband` at 8 kHz (as
 * a G.711 call carries it, and as a narrowband stream takes it).
 */
function frames(name: string, seconds = 4, narrowband = false): AudioFrame[] {
  const pcm = loadFixture(name).subarray(0, seconds * 16000);
  return narrowband ? toFrames8k(at8k(pcm)) : toFrames(pcm);
}

/** The input delayed by `d` samples: what a pass-through frame must equal. */
function delayed(pcm: Int16Array, d: number): Int16Array {
  const out = new Int16Array(pcm.length);
  out.set(pcm.subarray(0, pcm.length - d), d);
  return out;
}

let worker: WorkerDenoiser;
beforeAll(async () => {
  worker = await WorkerDenoiser.load();
});
afterAll(async () => {
  await worker.close();
});

describe('WorkerDenoiser (spectral)', () => {
  it('gives every interleaved stream exactly the in-thread output, in batches', async () => {
    const names = ['utt-opening-hours-street', 'noise-street', 'noise-babble', 'utt-book-table', 'silence-roomtone', 'utt-phone-number'];
    const inputs = names.map((n) => frames(n));
    const inline = new SpectralDenoiser();
    const expected = inputs.map((fs) => {
      const s = inline.createStream();
      return fs.map((f) => s.process(f).samples);
    });
    const streams = inputs.map(() => worker.createStream());
    const before = worker.stats;
    const got: Int16Array[][] = inputs.map(() => []);
    const ticks = Math.max(...inputs.map((fs) => fs.length));
    for (let t = 0; t < ticks; t++) {
      // All calls' frames of one turn at once; stream 0 gives two frames before awaiting any
      // (they must still come back in order).
      const work: Promise<void>[] = [];
      inputs.forEach((fs, c) => {
        const take = c === 0 ? [2 * t, 2 * t + 1] : [t];
        for (const i of take) {
          const f = fs[i];
          if (f) work.push(streams[c]!.process(f).then((out) => void (got[c]![i] = out.samples)));
        }
      });
      await Promise.all(work);
    }
    for (const s of streams) s.close();
    for (let c = 0; c < inputs.length; c++) {
      expect(got[c]).toHaveLength(expected[c]!.length);
      expect(same(concatPcm(got[c]!), concatPcm(expected[c]!)), names[c]).toBe(true);
    }
    const stats = worker.stats;
    const sent = stats.frames - before.frames;
    expect(sent).toBe(inputs.reduce((n, fs) => n + fs.length, 0));
    // Batched: far fewer messages than frames.
    expect(stats.batches - before.batches).toBeLessThan(sent / 4);
    expect(stats.fallbacks - before.fallbacks).toBe(0);
  });

  it('keeps order over several batches and frees a stream only after its last queued frame', async () => {
    const small = await WorkerDenoiser.load({ maxBatch: 4 });
    try {
      const input = frames('utt-opening-hours-street', 1);
      const ref = new SpectralDenoiser().createStream();
      const want = input.map((f) => ref.process(f).samples);
      const s = small.createStream();
      const pending = input.map((f) => s.process(f));
      // Closed with ~50 frames still queued: they still run, on the stream's own state.
      s.close();
      const got = await Promise.all(pending);
      expect(same(concatPcm(got.map((f) => f.samples)), concatPcm(want))).toBe(true);
      expect(small.stats.batches).toBeGreaterThanOrEqual(input.length / 4);
    } finally {
      await small.close();
    }
  });

  it('with batchIntervalMs, frames pushed between two batch starts wait and share the next batch', async () => {
    const paced = await WorkerDenoiser.load({ batchIntervalMs: 150 });
    try {
      const input = frames('utt-opening-hours-street', 1);
      const ref = new SpectralDenoiser().createStream();
      const want = input.slice(0, 3).map((f) => ref.process(f).samples);
      const s = paced.createStream();
      const t0 = performance.now();
      // Three media-clock passes 20 ms apart, one frame each.
      const got: Array<Promise<AudioFrame>> = [];
      const doneAt: number[] = [];
      for (let pass = 0; pass < 3; pass++) {
        if (pass > 0) await new Promise((r) => setTimeout(r, 20));
        got.push(s.process(input[pass]!).then((f) => (doneAt.push(performance.now() - t0), f)));
      }
      const out = await Promise.all(got);
      // The first frame went at once; the next two, within the interval, went together after it.
      expect(paced.stats.batches).toBe(2);
      expect(paced.stats.frames).toBe(3);
      expect(doneAt[1]).toBeGreaterThanOrEqual(140);
      expect(same(concatPcm(out.map((f) => f.samples)), concatPcm(want))).toBe(true);
    } finally {
      await paced.close();
    }
  });

  it('with busy pacing, batches go at the busy interval while frames come fast, and the output is unchanged', async () => {
    const busy = await WorkerDenoiser.load({ batchIntervalMs: 20, busy: { intervalMs: 60, enterPerSecond: 200, exitPerSecond: 100 } });
    try {
      const input = frames('utt-opening-hours-street', 1);
      const streams = Array.from({ length: 8 }, () => busy.createStream());
      const refs = streams.map(() => new SpectralDenoiser().createStream());
      const got: Array<Promise<AudioFrame>> = [];
      const want: Int16Array[] = [];
      // Eight calls, a frame each every 20 ms: 400 frames a second.
      for (let pass = 0; pass < 15; pass++) {
        if (pass > 0) await new Promise((r) => setTimeout(r, 20));
        streams.forEach((s, c) => {
          got.push(s.process(input[pass]!));
          want.push(refs[c]!.process(input[pass]!).samples);
        });
      }
      const out = await Promise.all(got);
      expect(busy.stats.busy).toBe(true);
      // 15 passes in 280 ms: at 20 ms a batch each; busy, about one per 60 ms.
      expect(busy.stats.batches).toBeLessThan(12);
      expect(same(concatPcm(out.map((f) => f.samples)), concatPcm(want))).toBe(true);
    } finally {
      await busy.close();
    }
  });

  it('refuses a negative batchIntervalMs before starting a worker', async () => {
    await expect(WorkerDenoiser.load({ batchIntervalMs: -5 })).rejects.toThrow(RangeError);
  });

  it('returns new frames of the same length, refuses other shapes and a closed stream', async () => {
    const s = worker.createStream();
    const input = { samples: new Int16Array(320).fill(100), sampleRate: 16000 };
    const out = await s.process(input);
    expect(out.sampleRate).toBe(16000);
    expect(out.samples).toHaveLength(320);
    expect(out.samples).not.toBe(input.samples);
    expect((await s.process({ samples: new Int16Array(160), sampleRate: 16000 })).samples).toHaveLength(160);
    await expect(s.process({ samples: new Int16Array(100), sampleRate: 16000 })).rejects.toThrow(RangeError);
    await expect(s.process({ samples: new Int16Array(160), sampleRate: 8000 })).rejects.toThrow(RangeError);
    await expect(s.process({ samples: new Int16Array(160), sampleRate: 8000 })).rejects.toThrow('needs 16000 Hz frames, got 8000 Hz');
    s.close();
    s.close();
    await expect(s.process(input)).rejects.toThrow(/closed/);
  });

  it('processThen: frames answered in order by callback; a refused frame fails inside the call', async () => {
    const s = worker.createStream();
    const reference = worker.createStream();
    const frames = Array.from({ length: 6 }, (_, i) => ({ samples: new Int16Array(320).map((_, j) => ((i * 320 + j) * 37) % 2000 - 1000), sampleRate: 16000 }));
    const order: number[] = [];
    const outs = await Promise.all(frames.map((f, i) => new Promise<Int16Array>((resolve, reject) => s.processThen(f, (out) => {
      order.push(i);
      resolve(out.samples);
    }, reject))));
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    for (let i = 0; i < frames.length; i++) expect(outs[i]).toEqual((await reference.process(frames[i]!)).samples);
    const failures: string[] = [];
    s.processThen({ samples: new Int16Array(100), sampleRate: 16000 }, () => failures.push('done'), (e) => failures.push(e.constructor.name));
    s.close();
    s.processThen(frames[0]!, () => failures.push('done'), (e) => failures.push(e.message));
    expect(failures).toEqual(['RangeError', 'WorkerDenoiseStream is closed']);
    reference.close();
  });

  it('narrowband streams: 8 kHz frames in, new 8 kHz frames of the same length out; 16 kHz frames refused', async () => {
    const s = worker.createStream({ narrowband: true });
    expect(s.sampleRate).toBe(8000);
    const input = { samples: new Int16Array(160).fill(100), sampleRate: 8000 };
    const out = await s.process(input);
    expect(out.sampleRate).toBe(8000);
    expect(out.samples).toHaveLength(160);
    expect(out.samples).not.toBe(input.samples);
    // Whole 10 ms steps at 8 kHz: 80 samples.
    expect((await s.process({ samples: new Int16Array(80), sampleRate: 8000 })).samples).toHaveLength(80);
    await expect(s.process({ samples: new Int16Array(100), sampleRate: 8000 })).rejects.toThrow(RangeError);
    // Refused before it is queued (it would pass the length check: 320 is four 8 kHz hops).
    const before = worker.stats.frames;
    await expect(s.process({ samples: new Int16Array(320), sampleRate: 16000 })).rejects.toThrow(RangeError);
    await expect(s.process({ samples: new Int16Array(320), sampleRate: 16000 })).rejects.toThrow('needs 8000 Hz frames, got 16000 Hz');
    expect(worker.stats.frames).toBe(before);
    s.close();
    await expect(s.process(input)).rejects.toThrow(/closed/);
  });

  it('is what the engine loads by default; inline on request', async () => {
    const engine = await loadEngineDenoiser();
    const inline = await loadEngineDenoiser({ thread: 'inline' });
    try {
      expect(engine).toBeInstanceOf(WorkerDenoiser);
      expect([engine.name, engine.delayMs, engine.thread]).toEqual(['spectral', 10, 'worker']);
      expect([inline.name, inline.delayMs, inline.thread]).toEqual(['spectral', 10, 'inline']);
      expect([engine.delayMsFor({ narrowband: true }), inline.delayMsFor({ narrowband: true })]).toEqual([10, 10]);
      for (const narrowband of [false, true]) {
        const a = engine.createStream({ narrowband });
        const b = inline.createStream({ narrowband });
        expect(a.delayMs).toBe(b.delayMs);
        for (const frame of frames('noise-street', 1, narrowband)) expect(same((await a.process(frame)).samples, (await b.process(frame)).samples)).toBe(true);
        a.close();
        b.close();
      }
    } finally {
      await Promise.all([engine.close(), inline.close()]);
    }
  });
});

describe('WorkerDenoiser (spectral, narrowband streams)', () => {
  it('runs each stream in its own mode: interleaved narrowband and wideband streams give the in-thread output of theirs', async () => {
    expect([worker.delayMs, worker.delayMsFor(), worker.delayMsFor({ narrowband: true })]).toEqual([10, 10, 10]);
    const calls = [
      { name: 'utt-opening-hours-street', narrowband: true },
      { name: 'noise-street', narrowband: true },
      { name: 'utt-book-table', narrowband: false },
      { name: 'utt-phone-number', narrowband: true },
      { name: 'silence-roomtone', narrowband: false },
    ];
    const inputs = calls.map((c) => frames(c.name, 3, c.narrowband));
    const inline = new SpectralDenoiser();
    const expected = inputs.map((fs, c) => {
      const s = inline.createStream({ narrowband: calls[c]!.narrowband });
      return concatPcm(fs.map((f) => s.process(f).samples));
    });
    const streams = calls.map((c) => worker.createStream({ narrowband: c.narrowband }));
    expect(streams.map((s) => s.delayMs)).toEqual(calls.map(() => 10));
    expect(streams.map((s) => s.sampleRate)).toEqual(calls.map((c) => (c.narrowband ? 8000 : 16000)));
    const before = worker.stats;
    const got: Int16Array[][] = inputs.map(() => []);
    for (let t = 0; t < Math.max(...inputs.map((fs) => fs.length)); t++) {
      // All calls' frames of one turn go in one batch, both modes side by side.
      const work = inputs.map((fs, c) => {
        const f = fs[t];
        return (
          f &&
          streams[c]!.process(f).then((out) => {
            expect(out.sampleRate).toBe(f.sampleRate);
            got[c]!.push(out.samples);
          })
        );
      });
      await Promise.all(work);
    }
    for (const s of streams) s.close();
    for (let c = 0; c < calls.length; c++) expect(same(concatPcm(got[c]!), expected[c]!), calls[c]!.name).toBe(true);
    expect(worker.stats.fallbacks - before.fallbacks).toBe(0);
  });
});

describe('WorkerDenoiser in a process started with V8 flags', () => {
  it('starts its worker whatever flags the parent has (a Worker refuses --expose-gc and the like given explicitly)', () => {
    const script = [
      `const { loadEngineDenoiser } = await import(${JSON.stringify(new URL('../../../src/audio/denoise.ts', import.meta.url).href)});`,
      'const d = await loadEngineDenoiser();',
      'const out = await d.createStream().process({ samples: new Int16Array(320), sampleRate: 16000 });',
      'console.log(d.constructor.name, out.samples.length);',
      'await d.close();',
    ].join('\n');
    const run = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=32', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).not.toMatch(/invalid execArgv|ERR_WORKER/);
    expect(run.stdout.trim()).toBe('WorkerDenoiser 320');
  }, 60_000);
});

describe('WorkerDenoiser (rnnoise)', () => {
  it('gives the in-thread RNNoise output, in either mode', async () => {
    const w = await WorkerDenoiser.load({ backend: 'rnnoise' });
    try {
      expect([w.name, w.delayMs, w.delayMsFor({ narrowband: true })]).toEqual(['rnnoise', 12, 14]);
      const rnnoise = await Denoiser.load();
      const inline = rnnoise.createStream();
      const inlineNb = rnnoise.createStream({ narrowband: true });
      const ws = [w.createStream(), w.createStream()];
      const nb = w.createStream({ narrowband: true });
      expect([nb.sampleRate, nb.delayMs]).toEqual([8000, 14]);
      const input = frames('utt-opening-hours-street', 2);
      const inputNb = frames('utt-opening-hours-street', 2, true);
      for (let i = 0; i < input.length; i++) {
        const f = input[i]!;
        const [a, b, c] = await Promise.all([...ws.map((s) => s.process(f)), nb.process(inputNb[i]!)]);
        const want = inline.process(f).samples;
        expect(same(a!.samples, want) && same(b!.samples, want)).toBe(true);
        expect(c!.sampleRate).toBe(8000);
        expect(same(c!.samples, inlineNb.process(inputNb[i]!).samples)).toBe(true);
      }
      inline.close();
      inlineNb.close();
    } finally {
      await w.close();
    }
  });

  it('falls back to a delay line of each stream\'s own delay, at its own rate (192 samples at 16 kHz, 112 at 8 kHz)', async () => {
    const w = await WorkerDenoiser.load({ backend: 'rnnoise' });
    try {
      const inputs = [frames('noise-street', 1), frames('noise-street', 1, true)];
      const streams = [w.createStream(), w.createStream({ narrowband: true })];
      for (let t = 0; t < 5; t++) await Promise.all(streams.map((s, k) => s.process(inputs[k]![t]!)));
      const old = w.workerForTest!;
      const exited = new Promise<void>((r) => old.once('exit', () => r()));
      w.crashNextBatchForTest('exit');
      const outs = await Promise.all(streams.map((s, k) => s.process(inputs[k]![5]!)));
      await exited;
      [192, 112].forEach((delay, k) => {
        const [prev, cur] = [inputs[k]![4]!.samples, inputs[k]![5]!.samples];
        expect(outs[k]!.sampleRate).toBe(k === 0 ? 16000 : 8000);
        expect(same(outs[k]!.samples, delayed(concatPcm([prev, cur]), delay).subarray(prev.length)), `stream ${k}`).toBe(true);
      });
      expect(w.stats.fallbacks).toBe(2);
    } finally {
      await w.close();
    }
  });
});

describe('WorkerDenoiser failures', () => {
  /** `inputs[k]`: stream k's frames, at its rate. */
  async function runUntilRecovered(d: WorkerDenoiser, streams: WorkerDenoiseStream[], inputs: AudioFrame[][]): Promise<number> {
    // Frames keep coming back while the replacement starts (as delayed pass-through).
    for (let i = 0; i < 500; i++) {
      const before = d.stats.fallbacks;
      await Promise.all(streams.map((s, k) => s.process(inputs[k]![i % inputs[k]!.length]!)));
      if (d.stats.starts === 2 && d.stats.fallbacks === before) return i;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('never recovered');
  }

  for (const how of ['exit', 'throw'] as const) {
    it(`a worker dying mid-batch (${how}) fails only that batch: delayed pass-through, then a new worker`, async () => {
      const d = await WorkerDenoiser.load();
      try {
        // Three wideband streams (16 kHz frames) and a narrowband one (the same audio at 8 kHz).
        const byMode = { wide: frames('noise-street', 2), narrow: frames('noise-street', 2, true) };
        const streams = [d.createStream(), d.createStream(), d.createStream(), d.createStream({ narrowband: true })];
        const inputs = streams.map((_, i) => (i < 3 ? byMode.wide : byMode.narrow));
        for (let t = 0; t < 10; t++) await Promise.all(streams.map((s, i) => s.process(inputs[i]![t]!)));
        const old = d.workerForTest!;
        const exited = new Promise<void>((r) => old.once('exit', () => r()));
        d.crashNextBatchForTest(how);
        const outs = await Promise.all(streams.map((s, i) => s.process(inputs[i]![10]!)));
        await exited;
        // Exactly the caller's audio, delayMs late in samples at the stream's rate (160 at 16 kHz,
        // narrowband 80 at 8 kHz): aligned with the denoised frames around it.
        const want = (input: AudioFrame[], delay: number) => {
          const [prev, cur] = [input[9]!.samples, input[10]!.samples];
          return delayed(concatPcm([prev, cur]), delay).subarray(prev.length);
        };
        outs.forEach((o, i) => {
          expect(o.sampleRate, `stream ${i}`).toBe(i < 3 ? 16000 : 8000);
          expect(same(o.samples, i < 3 ? want(byMode.wide, 160) : want(byMode.narrow, 80)), `stream ${i}`).toBe(true);
        });
        expect(d.stats.fallbacks).toBe(4);
        await runUntilRecovered(d, streams, inputs);
        expect(d.stats.starts).toBe(2);
        // The replacement holds fresh state: new streams match fresh in-thread ones of their mode.
        for (const narrowband of [false, true]) {
          const fresh = d.createStream({ narrowband });
          const ref = new SpectralDenoiser().createStream({ narrowband });
          for (const f of (narrowband ? byMode.narrow : byMode.wide).slice(0, 20)) expect(same((await fresh.process(f)).samples, ref.process(f).samples)).toBe(true);
        }
      } finally {
        await d.close();
      }
    });
  }
});

describe('WorkerDenoiser.close', () => {
  it('terminates the worker; queued frames and new ones reject, streams cannot be opened', async () => {
    const d = await WorkerDenoiser.load();
    const s = d.createStream();
    await s.process(frames('noise-street', 1)[0]!);
    const thread = d.workerForTest!;
    const exited = new Promise<number>((r) => thread.once('exit', r));
    const queued = expect(s.process(frames('noise-street', 1)[1]!)).rejects.toThrow(/closed/);
    await d.close();
    await exited;
    await queued;
    await expect(s.process(frames('noise-street', 1)[2]!)).rejects.toThrow(/closed/);
    expect(() => d.createStream()).toThrow(/closed/);
    await d.close();
  });
});
