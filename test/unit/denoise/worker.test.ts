/**
 * The worker-backed denoiser (src/audio/denoise-worker.ts): the same samples as the in-thread
 * backends for interleaved streams of either mode (wideband, narrowband), batching across
 * streams, per-frame fallback when the worker dies mid-batch (and its replacement), and close().
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Denoiser, loadEngineDenoiser } from '../../../src/audio/denoise.ts';
import { SpectralDenoiser } from '../../../src/audio/denoise-spectral.ts';
import { WorkerDenoiser, type WorkerDenoiseStream } from '../../../src/audio/denoise-worker.ts';
import { concatPcm, type AudioFrame } from '../../../src/audio/frame.ts';
import { loadFixture, toFrames } from '../vad/fixture-audio.ts';
import { same, telephone } from './scenes.ts';

/** A few seconds of each fixture, as 20 ms frames (as a G.711 call delivers it with `tel`). */
function frames(name: string, seconds = 4, tel = false): AudioFrame[] {
  const pcm = loadFixture(name).subarray(0, seconds * 16000);
  return toFrames(tel ? telephone(pcm) : pcm);
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
    s.close();
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
      expect([engine.delayMsFor({ narrowband: true }), inline.delayMsFor({ narrowband: true })]).toEqual([12.0625, 12.0625]);
      const f = frames('noise-street', 1);
      for (const narrowband of [false, true]) {
        const a = engine.createStream({ narrowband });
        const b = inline.createStream({ narrowband });
        expect(a.delayMs).toBe(b.delayMs);
        for (const frame of f) expect(same((await a.process(frame)).samples, (await b.process(frame)).samples)).toBe(true);
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
    expect([worker.delayMs, worker.delayMsFor(), worker.delayMsFor({ narrowband: true })]).toEqual([10, 10, 12.0625]);
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
    expect(streams.map((s) => s.delayMs)).toEqual(calls.map((c) => (c.narrowband ? 12.0625 : 10)));
    const before = worker.stats;
    const got: Int16Array[][] = inputs.map(() => []);
    for (let t = 0; t < Math.max(...inputs.map((fs) => fs.length)); t++) {
      // All calls' frames of one turn go in one batch, both modes side by side.
      const work = inputs.map((fs, c) => {
        const f = fs[t];
        return f && streams[c]!.process(f).then((out) => void got[c]!.push(out.samples));
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
  it('gives the in-thread RNNoise output', async () => {
    const w = await WorkerDenoiser.load({ backend: 'rnnoise' });
    try {
      expect([w.name, w.delayMs]).toEqual(['rnnoise', 12]);
      const inline = (await Denoiser.load()).createStream();
      const ws = [w.createStream(), w.createStream()];
      const input = frames('utt-opening-hours-street', 2);
      for (const f of input) {
        const [a, b] = await Promise.all(ws.map((s) => s.process(f)));
        const want = inline.process(f).samples;
        expect(same(a!.samples, want) && same(b!.samples, want)).toBe(true);
      }
      inline.close();
    } finally {
      await w.close();
    }
  });
});

describe('WorkerDenoiser failures', () => {
  async function runUntilRecovered(d: WorkerDenoiser, streams: WorkerDenoiseStream[], input: AudioFrame[]): Promise<number> {
    // Frames keep coming back while the replacement starts (as delayed pass-through).
    for (let i = 0; i < 500; i++) {
      const before = d.stats.fallbacks;
      await Promise.all(streams.map((s) => s.process(input[i % input.length]!)));
      if (d.stats.starts === 2 && d.stats.fallbacks === before) return i;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('never recovered');
  }

  for (const how of ['exit', 'throw'] as const) {
    it(`a worker dying mid-batch (${how}) fails only that batch: delayed pass-through, then a new worker`, async () => {
      const d = await WorkerDenoiser.load();
      try {
        const input = frames('noise-street', 2);
        // Three wideband streams and a narrowband one.
        const streams = [d.createStream(), d.createStream(), d.createStream(), d.createStream({ narrowband: true })];
        for (const f of input.slice(0, 10)) await Promise.all(streams.map((s) => s.process(f)));
        const old = d.workerForTest!;
        const exited = new Promise<void>((r) => old.once('exit', () => r()));
        d.crashNextBatchForTest(how);
        const prev = input[9]!.samples;
        const cur = input[10]!;
        const outs = await Promise.all(streams.map((s) => s.process(cur)));
        await exited;
        // Exactly the caller's audio, delayMs late (160 samples, narrowband 193): aligned with the
        // denoised frames around it.
        const want = (delay: number) => delayed(concatPcm([prev, cur.samples]), delay).subarray(320);
        outs.forEach((o, i) => expect(same(o.samples, want(i < 3 ? 160 : 193)), `stream ${i}`).toBe(true));
        expect(d.stats.fallbacks).toBe(4);
        await runUntilRecovered(d, streams, input);
        expect(d.stats.starts).toBe(2);
        // The replacement holds fresh state: new streams match fresh in-thread ones of their mode.
        for (const narrowband of [false, true]) {
          const fresh = d.createStream({ narrowband });
          const ref = new SpectralDenoiser().createStream({ narrowband });
          for (const f of input.slice(0, 20)) expect(same((await fresh.process(f)).samples, ref.process(f).samples)).toBe(true);
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
