/**
 * The caller-audio denoiser off the event-loop thread. Denoising is pure CPU per frame (the
 * spectral backend's STFT and gain were ~21 % of the event-loop thread's busy time at 100
 * pipeline calls), so one worker thread runs it for every call, and the event-loop thread only
 * copies frames in and out:
 *
 * - Batching: frames pushed by all calls in one event-loop turn (and those that arrive while a
 *   batch is being computed) go as one batch: written into a SharedArrayBuffer slab
 *   (./denoise-slab.ts) and announced with one small postMessage; one message comes back. Under
 *   load more frames land in each turn, so batches grow exactly when it matters — as the VAD's
 *   (./vad/silero.ts). With `batchIntervalMs` (the engine's 20) batches also start at most that
 *   often, so frames of several media-clock passes share one hand-over (../util/batch-pacer.ts);
 *   with `busy`, at most every `busy.intervalMs` while frames come fast (the engine's 40 from
 *   1,250 frames a second).
 * - State: each call's denoiser state lives in the worker, keyed by the stream's id, created at
 *   its first frame (in the stream's mode, `createStream({ narrowband })`, which every frame's
 *   header carries) and freed by `close()`. The worker runs the same backend classes as the
 *   in-thread ones, so a stream's output equals the in-thread stream's of the same mode, sample
 *   for sample, with the same fixed `delayMs`. As in-thread, a wideband stream takes 16 kHz
 *   frames and a narrowband one 8 kHz frames; each stream checks its frames' rate and length
 *   before they are queued, so the worker never sees a frame its stream would refuse.
 * - Order: one batch in flight at a time and frames kept in arrival order, so a stream's frames
 *   are always denoised (and their promises settled) in the order they were given.
 * - Failure: a worker that dies (or a batch the worker could not run) fails only the batch it
 *   held. Those frames come back as the caller's own audio delayed by `delayMs` (a whole number
 *   of samples at the stream's rate) — a plain delay line, not denoised, but exactly aligned, so
 *   STT and VAD keep their timeline and the noise just comes through for a frame. A replacement
 *   worker is started at once; until it is ready (a few hundred ms: tsx and the module load),
 *   frames pass through the same way rather than wait, and the replaced streams start from fresh state. A worker that cannot start is tried
 *   again at most once a second. Nothing here throws into a call, and the process never dies
 *   with the worker.
 * - VAD: with `vad`, the worker also runs the callers' Silero VAD on the frames it has denoised
 *   (./denoise-worker-vad.ts), for streams created with `{ vad: true }`, and each frame comes
 *   back with its probability (./denoise-worker-stream.ts says how silence is handled). A frame the
 *   worker could not run comes back without one; the caller's own VAD stands in.
 * - Lifetime: the worker is unref'd while idle (it never holds a process open on its own) and
 *   ref'd while a batch is in flight (so an awaited frame cannot be abandoned by an exiting
 *   process); `close()` terminates it. No timers.
 */
import { Worker } from 'node:worker_threads';
import { denoiserRate, type SpectralDenoiserOptions } from './denoise-spectral.ts';
import type { DenoiserBackendName, DenoiserStreamOptions, EngineDenoiser } from './denoise.ts';
import type { FromWorker, ToWorker } from './denoise-worker-thread.ts';
import {
  ENTRY_SILENT,
  FLAG_NARROWBAND,
  FLAG_VAD,
  H_COUNT,
  H_FLAGS,
  H_ID,
  H_PROBABILITY,
  H_STATUS,
  H_VAD,
  H_ZEROS_BEFORE,
  HEADER_INTS,
  Slab,
  STATUS_OK,
  VAD_NONE,
} from './denoise-slab.ts';
import type { WorkerVadStats } from './denoise-worker-vad.ts';
import { WorkerDenoiseStream, type Pending } from './denoise-worker-stream.ts';
import { BatchPacer, type BusyPacing } from '../util/batch-pacer.ts';
import { TurnSlicer } from '../util/turn-slicer.ts';

export type { WorkerDenoiseStream };

const WORKER_URL = new URL('./denoise-worker-entry.mjs', import.meta.url);
const RESTART_BACKOFF_MS = 1_000;
/**
 * Frames handed back to their calls per event-loop turn: a batch of a few hundred calls' frames
 * settles in slices, so a media-clock pass falling due meanwhile is not held behind all of them.
 * Each frame settled goes on to the VAD, whose next batch starts in the turn after: with 64, a
 * hundred calls' frames (about 40 a batch) reach it in one slice and make one VAD batch, not two
 * (16 a slice made 80–90 VAD runs a second at 100 calls instead of 50; paired runs, 100 calls
 * each: 4–6 % less CPU per call, docs/bench-history.md, 2026-11-27 13:43). The price: such a slice (the
 * frames' STT writes and VAD hand-overs) holds the loop 0.4 ms (p99 1.3 ms) at 100 calls, four
 * times the frames a slice of 16 held it for; packets leave from the RTP I/O thread, handed over
 * ahead of time, and do not move.
 */
const SETTLE_PER_TURN = 64;

export interface WorkerDenoiserOptions {
  /** The backend the worker runs; default `spectral`. */
  backend?: DenoiserBackendName;
  /** Options of the spectral backend. */
  spectral?: SpectralDenoiserOptions;
  /** Most frames in one message; the rest go in the next. Default 512. */
  maxBatch?: number;
  /**
   * Least time between two batch starts, ms (../util/batch-pacer.ts): frames pushed in between
   * wait and join the next batch. 0 (the default) sends a batch on the next turn; the engine uses 20.
   */
  batchIntervalMs?: number;
  /**
   * A longer interval while frames come fast (../util/batch-pacer.ts BusyPacing, counted in
   * frames a second); the engine's: 40 ms from 1,250 frames a second. None by default.
   */
  busy?: BusyPacing;
  /**
   * Run the callers' VAD in the worker too (./denoise-worker-vad.ts), for streams created with
   * `{ vad: true }`: their frames come back with the VAD's probability. `modelPath`: the Silero
   * model (default: the repository's).
   */
  vad?: { modelPath?: string };
}

/** What a worker reports when ready: its backend's stream delays, whether it runs the VAD. */
interface Ready {
  delayMs: number;
  narrowbandDelayMs: number;
  vad: boolean;
  vadError?: string;
}

interface InFlight {
  id: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

export interface WorkerDenoiserStats {
  /** Messages (batches) sent to the worker and frames in them. */
  batches: number;
  frames: number;
  /** Batches are paced at the busy interval (WorkerDenoiserOptions.busy) now. */
  busy: boolean;
  /** Frames returned as delayed pass-through (worker lost, starting or failed on the frame). */
  fallbacks: number;
  /** Workers started; more than one means a crash was recovered. */
  starts: number;
  /** The VAD in the worker (WorkerDenoiserOptions.vad), over all its workers so far. */
  vad?: WorkerVadStats;
}

const NO_VAD_STATS: WorkerVadStats = { batches: 0, runs: 0, windows: 0, skipped: 0 };
const addVadStats = (a: WorkerVadStats, b: WorkerVadStats): WorkerVadStats => ({
  batches: a.batches + b.batches,
  runs: a.runs + b.runs,
  windows: a.windows + b.windows,
  skipped: a.skipped + b.skipped,
});

export class WorkerDenoiser implements EngineDenoiser {
  readonly thread = 'worker';
  readonly maxBatch: number;
  private worker: Worker | undefined;
  /** Set while a worker is starting; cleared when it is lost. */
  private ready: Promise<Ready> | undefined;
  private isReady = false;
  private retryAt = 0;
  private inFlight: InFlight | undefined;
  private slab = Slab.create(64, 64 * 320);
  private slabIsNew = true;
  private pending: Pending[] = [];
  private closes: number[] = [];
  private readonly pacer: BatchPacer;
  /** Hands calls their denoised frames, SETTLE_PER_TURN per event-loop turn. */
  private readonly settler = new TurnSlicer<Pending>((p) => p.stream.settle(p), SETTLE_PER_TURN);
  private flushing = false;
  private closed = false;
  private nextStreamId = 1;
  private nextBatchId = 1;
  private readonly counters: Omit<WorkerDenoiserStats, 'busy'> = { batches: 0, frames: 0, fallbacks: 0, starts: 0 };
  private delays: Ready = { delayMs: 0, narrowbandDelayMs: 0, vad: false };
  /** The VAD counters of workers lost, and of the current one. */
  private vadBefore: WorkerVadStats = NO_VAD_STATS;
  private vadNow: WorkerVadStats = NO_VAD_STATS;

  private constructor(
    readonly name: DenoiserBackendName,
    private readonly o: WorkerDenoiserOptions,
  ) {
    this.maxBatch = Math.max(1, Math.floor(o.maxBatch ?? 512));
    this.pacer = new BatchPacer(o.batchIntervalMs ?? 0, () => void this.flush(), undefined, o.busy);
  }

  /** Starts the worker and waits until its backend is loaded; rejects when it cannot be. */
  static async load(o: WorkerDenoiserOptions = {}): Promise<WorkerDenoiser> {
    const name = o.backend ?? 'spectral';
    if (name !== 'spectral' && name !== 'rnnoise') throw new RangeError(`unknown denoiser backend '${String(name)}'`);
    const d = new WorkerDenoiser(name, o);
    try {
      // The backend's own constants, as its worker reports them.
      d.delays = await d.start();
    } catch (e) {
      await d.close();
      throw e;
    }
    return d;
  }

  /**
   * The worker runs the VAD of streams created with `{ vad: true }`: asked for
   * (WorkerDenoiserOptions.vad) and loaded. When the model would not load, why (`vadError`).
   */
  get vad(): boolean {
    return this.delays.vad;
  }

  get vadError(): string | undefined {
    return this.delays.vadError;
  }

  /** Fixed audio delay of a default (wideband) stream, in ms: the backend's (10 spectral, 12 RNNoise). */
  get delayMs(): number {
    return this.delays.delayMs;
  }

  /** Fixed audio delay of a stream created with `options`, in ms (narrowband: spectral 10, RNNoise 14). */
  delayMsFor(options?: DenoiserStreamOptions): number {
    return options?.narrowband ? this.delays.narrowbandDelayMs : this.delays.delayMs;
  }

  /**
   * A call's stream. With `vad` (and a worker that runs the VAD: `this.vad`), its frames come back
   * with the VAD's probability, from the worker's VAD stream of this call (./denoise-worker-stream.ts).
   */
  createStream(options?: DenoiserStreamOptions): WorkerDenoiseStream {
    if (this.closed) throw new Error('WorkerDenoiser is closed');
    const flags = (options?.narrowband ? FLAG_NARROWBAND : 0) | (options?.vad && this.delays.vad ? FLAG_VAD : 0);
    return new WorkerDenoiseStream(this, this.nextStreamId++, flags, denoiserRate(options), this.delayMsFor(options));
  }

  get stats(): WorkerDenoiserStats {
    const stats: WorkerDenoiserStats = { ...this.counters, busy: this.pacer.isBusy };
    if (this.o.vad) {
      stats.vad = addVadStats(this.vadBefore, this.vadNow);
    }
    return stats;
  }

  /** Terminates the worker. Frames still queued or in flight reject. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    this.isReady = false;
    const err = new Error('WorkerDenoiser is closed');
    this.failInFlight(err);
    const pending = this.pending;
    this.pending = [];
    for (const p of pending) p.reject(err);
    await worker?.terminate();
  }

  /**
   * Test seam: make the worker die while it holds the next batch — `exit` ends the thread,
   * `throw` raises an uncaught error in it. @internal
   */
  crashNextBatchForTest(how: 'exit' | 'throw' = 'exit'): void {
    this.post({ type: 'crash-next', how });
  }

  /** Test seam: the worker thread, to watch it exit. @internal */
  get workerForTest(): Worker | undefined {
    return this.worker;
  }

  /** @internal used by WorkerDenoiseStream */
  enqueue(p: Pending): void {
    if (this.closed) {
      p.reject(new Error('WorkerDenoiser is closed'));
      return;
    }
    this.pending.push(p);
    this.schedule();
  }

  /** @internal used by WorkerDenoiseStream: free the stream's state in the worker. */
  release(streamId: number): void {
    if (this.closed) return;
    this.closes.push(streamId);
    this.schedule();
  }

  private schedule(): void {
    // A batch in flight asks for the next one when it is done.
    if (!this.flushing) this.pacer.request();
  }

  /** One batch at a time; what arrives meanwhile joins the next. */
  private async flush(): Promise<void> {
    if (this.flushing || this.closed || (this.pending.length === 0 && this.closes.length === 0)) return;
    this.flushing = true;
    this.pacer.took(this.pending.length);
    try {
      await this.runBatch(this.pending.splice(0, this.maxBatch));
    } finally {
      this.flushing = false;
    }
    if (!this.closed && (this.pending.length > 0 || this.closes.length > 0)) this.pacer.request();
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    if (!this.isReady) {
      // Lost: start a replacement and pass audio through until it is ready. It holds no state,
      // so frees of streams meant for the lost one are moot.
      this.closes = [];
      if (!this.ready && performance.now() >= this.retryAt) this.start().catch(() => {});
      this.fallback(batch);
      return;
    }
    const worker = this.worker!;
    // Frees go after the stream's last frame: with frames still queued (a batch over maxBatch)
    // they wait for the batch that empties the queue.
    const closes = this.pending.length === 0 ? this.closes : [];
    if (closes.length > 0) this.closes = [];
    let total = 0;
    for (const p of batch) if (!(p.flags & ENTRY_SILENT)) total += p.frame.samples.length;
    if (batch.length > this.slab.entries || total > this.slab.sampleCapacity) {
      this.slab = Slab.create(Math.max(batch.length, this.slab.entries * 2), Math.max(total, this.slab.sampleCapacity * 2));
      this.slabIsNew = true;
    }
    const slab = this.slab;
    const { header, samples } = slab;
    let at = 0;
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!;
      const s = p.frame.samples;
      const h = i * HEADER_INTS;
      header[h + H_ID] = p.stream.id;
      header[h + H_COUNT] = s.length;
      header[h + H_STATUS] = -1;
      header[h + H_FLAGS] = p.flags;
      header[h + H_ZEROS_BEFORE] = p.zerosBefore;
      header[h + H_VAD] = VAD_NONE;
      if (p.flags & ENTRY_SILENT) continue;
      samples.set(s, at);
      at += s.length;
    }
    const id = this.nextBatchId++;
    this.counters.batches++;
    this.counters.frames += batch.length;
    const sab = this.slabIsNew ? { sab: slab.sab, entries: slab.entries, samples: slab.sampleCapacity } : {};
    this.slabIsNew = false;
    try {
      await new Promise<void>((resolve, reject) => {
        this.inFlight = { id, resolve, reject };
        worker.ref();
        this.post({ type: 'run', id, count: batch.length, closes, ...sab });
      });
    } catch (e) {
      if (this.closed) for (const p of batch) p.reject(e as Error);
      else this.fallback(batch);
      return;
    } finally {
      // Still ours (not replaced after a crash): idle again, so it holds no process open.
      if (this.worker === worker) worker.unref();
    }
    at = 0;
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!;
      const h = i * HEADER_INTS;
      p.vad = header[h + H_VAD]!;
      if (p.vad !== VAD_NONE) p.probability = slab.headerFloat[h + H_PROBABILITY]!;
      if (p.flags & ENTRY_SILENT) {
        this.settler.add(p);
        continue;
      }
      const n = p.frame.samples.length;
      if (header[h + H_STATUS] === STATUS_OK) {
        // The frame contract: the output owns its samples (the slab is reused by the next batch),
        // copied now; the call hears of it a slice at a time (../util/turn-slicer.ts).
        p.out = samples.slice(at, at + n);
      } else {
        this.counters.fallbacks++;
      }
      this.settler.add(p);
      at += n;
    }
  }

  private fallback(batch: Pending[]): void {
    for (const p of batch) {
      if (!(p.flags & ENTRY_SILENT)) this.counters.fallbacks++;
      this.settler.add(p);
    }
  }

  private post(m: ToWorker): void {
    this.worker?.postMessage(m);
  }

  /** Starts a worker; resolves with its backend's delays (and whether it runs the VAD) once it is ready. */
  private start(): Promise<Ready> {
    this.counters.starts++;
    // No flags from the parent: the entry registers tsx itself (a second registration only slows
    // the start), and a Worker refuses per-process and V8 flags given explicitly (--expose-gc,
    // --max-semi-space-size, …), which would leave every call without noise cancellation.
    const worker = new Worker(WORKER_URL, { execArgv: [] });
    worker.unref();
    this.worker = worker;
    this.isReady = false;
    // A fresh worker has seen no slab.
    this.slabIsNew = true;
    let everReady = false;
    let resolveReady!: (ready: Ready) => void;
    let rejectReady!: (error: Error) => void;
    const ready = new Promise<Ready>((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    // Lost (died, failed, or could not load its backend): fail its batch, forget it.
    const retire = (err: Error): void => {
      rejectReady(err);
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.ready = undefined;
      this.isReady = false;
      this.vadBefore = addVadStats(this.vadBefore, this.vadNow);
      this.vadNow = NO_VAD_STATS;
      // Replaced on the next batch (a live call sends one within 20 ms); one that never got
      // ready is not retried in a tight loop.
      if (!everReady) this.retryAt = performance.now() + RESTART_BACKOFF_MS;
      this.failInFlight(err);
      void worker.terminate();
    };
    worker.on('message', (m: FromWorker) => {
      if (m.type === 'result') {
        if (m.vad && this.worker === worker) this.vadNow = m.vad;
        this.settleBatch(m.id)?.resolve();
      }
      else if (m.type === 'error' && m.id !== undefined) this.settleBatch(m.id)?.reject(new Error(m.message));
      else if (m.type === 'error') retire(new Error(`denoiser failed to load in its worker: ${m.message}`));
      else if (m.type === 'ready' && this.worker === worker) {
        everReady = true;
        this.isReady = true;
        resolveReady({ delayMs: m.delayMs, narrowbandDelayMs: m.narrowbandDelayMs, vad: m.vad, ...(m.vadError !== undefined ? { vadError: m.vadError } : {}) });
      }
    });
    worker.on('error', (e) => retire(new Error(`denoiser worker failed: ${e.message}`)));
    worker.on('exit', (code) => retire(new Error(`denoiser worker exited with code ${code}`)));
    const init: ToWorker = { type: 'init', backend: this.name, ...(this.o.spectral ? { spectral: this.o.spectral } : {}), ...(this.o.vad ? { vad: this.o.vad } : {}) };
    worker.postMessage(init);
    this.ready = ready;
    return ready;
  }

  private settleBatch(id: number): InFlight | undefined {
    const f = this.inFlight;
    if (!f || f.id !== id) return undefined;
    this.inFlight = undefined;
    return f;
  }

  private failInFlight(err: Error): void {
    const f = this.inFlight;
    this.inFlight = undefined;
    f?.reject(err);
  }
}
