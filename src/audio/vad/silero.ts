/**
 * Silero VAD v5 on onnxruntime-node. One InferenceSession is loaded per process and shared by
 * every call; each call opens a SileroStream that owns its recurrent state and audio context, so
 * calls never see each other's history.
 *
 * Model contract, verified by experiment (see models/PROVENANCE.md): input float32 [B, 64+512]
 * (the last 64 samples of the previous window prepended as context, exactly as upstream's
 * OnnxWrapper does), state float32 [2, B, 128], sr int64 scalar; outputs `output` [B, 1] (speech
 * probability) and `stateN` [2, B, 128]. At sr = 8000 the same model takes [B, 32+256].
 *
 * Narrowband streams (`createStream({ narrowband: true })`, for G.711 calls): a telephone call
 * carries nothing above 4 kHz, so running the model at 16 kHz on it spends half its work on an
 * empty band. Such a stream takes the same 16 kHz frames, decimates them to 8 kHz (a per-stream
 * Resampler, so its filter history runs across frames) and runs Silero's own 8 kHz mode: 256-
 * sample windows with 32 samples of context. Measured with onnxruntime directly (batch 16):
 * 0.023 ms per 8 kHz window against 0.052 ms per 16 kHz one. Both windows are 32 ms of audio and
 * end on the same input sample, so the stream's timeline (windows, when a push resolves) is the
 * wideband one; the decimator adds 1 ms of delay.
 *
 * Cross-call batching: windows from all calls that complete in the same event-loop turn, or
 * while the previous batch is still being computed, run as one batch [B, 576]: one native call
 * instead of B, about 3× less CPU per window at 150 calls (bench/vad.ts) and no added latency.
 * Under load more windows land in each turn, so batches grow exactly when it matters. With
 * `batchIntervalMs` batches also start at most that often, so windows of several media-clock
 * passes share one hand-over to the worker (../../util/batch-pacer.ts); the engine does not
 * (src/call/wiring/engine-parts.ts says why). `sr` is
 * one scalar per run, so a batch with both kinds of stream is two runs, wideband then narrowband,
 * handed to the backend together (BatchBuffers in silero-backend.ts).
 *
 * The inference itself runs in a worker thread by default (silero-backend.ts), off the thread
 * that paces every call's RTP.
 *
 * Each call's stream (windows, state, context) is ./silero-stream.ts.
 *
 * Silence gate (../silence-gate.ts, in the stream): once a stream's windows have been below
 * `silenceGateDbfs` (−60 dBFS) for `VAD_GATE_HANGOVER_WINDOWS` in a row, further quiet windows
 * are not run: their probability is 0 and the recurrent state is kept as the last run left it.
 * The first window at or above the level runs again. On a call the caller listens most of the
 * time, so most windows of a quiet line never reach the model.
 */
import { fileURLToPath } from 'node:url';
import { BatchPacer } from '../../util/batch-pacer.ts';
import { TurnSlicer } from '../../util/turn-slicer.ts';
import { SILENCE_GATE_DBFS } from '../silence-gate.ts';
import {
  NARROWBAND,
  STATE_PER_WINDOW,
  STATE_UNITS,
  WIDEBAND,
  WorkerBackend,
  type BatchBuffers,
  type InferenceBackend,
  type SileroRate,
} from './silero-backend.ts';
import { InlineBackend } from './silero-inline.ts';
import { SileroStream } from './silero-stream.ts';

export { SileroStream, VAD_GATE_HANGOVER_WINDOWS } from './silero-stream.ts';

/**
 * Samples per inference window at 16 kHz (32 ms): the only window size v5 is trained for at that
 * rate. A narrowband stream's window (256 samples at 8 kHz) covers as many input samples.
 */
export const SILERO_WINDOW_SAMPLES = WIDEBAND.window;
/** Tail of the previous window fed in front of each new one. */
export const SILERO_CONTEXT_SAMPLES = WIDEBAND.context;

export const DEFAULT_SILERO_MODEL_PATH = fileURLToPath(new URL('../../../models/silero_vad_v5.onnx', import.meta.url));

export interface SileroVadOptions {
  /** Path to the ONNX file; defaults to models/silero_vad_v5.onnx in the repository. */
  modelPath?: string;
  /**
   * Threads inside one inference. 1 by default: the windows are tiny, so extra threads only add
   * synchronisation cost, and many calls share two cores.
   */
  intraOpNumThreads?: number;
  /** Largest number of calls' windows run together; 1 disables batching. */
  maxBatch?: number;
  /**
   * `worker` (default): inference in a worker thread, off the media thread. `inline`: on the
   * calling thread (tools, comparisons).
   */
  thread?: 'worker' | 'inline';
  /**
   * Windows quieter than this (RMS, dBFS), after `VAD_GATE_HANGOVER_WINDOWS` quiet ones, are
   * called silence without running the model (see the header). Default −60; `-Infinity` runs
   * every window.
   */
  silenceGateDbfs?: number;
  /**
   * Least time between two batch starts, ms (../../util/batch-pacer.ts): windows that complete in
   * between wait and join the next batch. 0 (the default) runs a batch on the next turn.
   */
  batchIntervalMs?: number;
  /**
   * Streams told of their window's result per event-loop turn (SETTLE_PER_TURN by default).
   * `Infinity` where no media clock shares the thread (the denoiser's worker).
   */
  settlePerTurn?: number;
}


/**
 * Streams told of their window's result per event-loop turn: a batch of a hundred calls' windows
 * settles in slices, so a media-clock pass falling due meanwhile is not held behind all of them.
 */
const SETTLE_PER_TURN = 16;

/** The shared model. Create once at start-up with `SileroVad.load()`; open a stream per call. */
export class SileroVad {
  readonly maxBatch: number;
  private closed = false;
  /** Streams whose full window waits for the next batch: `pending[0 .. pendingCount)`. */
  private pending: (SileroStream | undefined)[] = [];
  private pendingCount = 0;
  /** The batch being run (reused array): `batch[0 .. B)`, its wideband windows first. */
  private readonly batch: (SileroStream | undefined)[] = [];
  /** How many of `batch` are wideband (set by take). */
  private batchWide = 0;
  private readonly pacer: BatchPacer;
  /** Hands streams their window's result, SETTLE_PER_TURN per event-loop turn. */
  private readonly settler: TurnSlicer<SileroStream>;
  private flushing = false;
  private batches = 0;
  private runs = 0;
  private batchedWindows = 0;
  private skippedWindows = 0;
  private constructor(
    readonly backend: InferenceBackend,
    maxBatch: number,
    /** See SileroVadOptions.silenceGateDbfs. */
    readonly silenceGateDbfs: number,
    batchIntervalMs: number,
    settlePerTurn: number,
  ) {
    this.maxBatch = Math.max(1, Math.floor(maxBatch));
    this.settler = new TurnSlicer<SileroStream>((stream) => stream.windowDone(stream.delivered), settlePerTurn);
    this.pacer = new BatchPacer(batchIntervalMs, () => void this.flush());
  }

  static async load(options: SileroVadOptions = {}): Promise<SileroVad> {
    // Checked before the model and its thread exist, so a bad option leaves nothing behind.
    const batchIntervalMs = options.batchIntervalMs ?? 0;
    if (!(batchIntervalMs >= 0)) throw new RangeError(`batchIntervalMs must be at least 0, got ${batchIntervalMs}`);
    const settlePerTurn = options.settlePerTurn ?? SETTLE_PER_TURN;
    if (!(settlePerTurn >= 1)) throw new RangeError(`settlePerTurn must be at least 1, got ${settlePerTurn}`);
    const o = { modelPath: options.modelPath ?? DEFAULT_SILERO_MODEL_PATH, intraOpNumThreads: options.intraOpNumThreads ?? 1 };
    const backend = options.thread === 'inline' ? await InlineBackend.load(o) : await WorkerBackend.load(o);
    for (const name of ['input', 'state', 'sr']) {
      if (!backend.inputNames.includes(name)) {
        await backend.close();
        throw new Error(`VAD model has no input '${name}' (inputs: ${backend.inputNames.join(', ')}): not Silero v5?`);
      }
    }
    return new SileroVad(backend, options.maxBatch ?? 256, options.silenceGateDbfs ?? SILENCE_GATE_DBFS, batchIntervalMs, settlePerTurn);
  }

  /**
   * A call's stream. `narrowband`: the call's audio is telephone band (G.711), so run the model at
   * 8 kHz for about half the CPU; the stream still takes 16 kHz frames.
   */
  createStream(options: { narrowband?: boolean } = {}): SileroStream {
    if (this.closed) throw new Error('SileroVad is closed');
    return new SileroStream(this, options.narrowband === true);
  }

  /**
   * Batches handed to the backend, ONNX runs (one or two per batch, one per rate in it) and
   * windows run so far (windows / runs is the mean run size); `skipped`: windows the silence gate
   * called silence without a run.
   */
  get stats(): { batches: number; runs: number; windows: number; skipped: number } {
    return { batches: this.batches, runs: this.runs, windows: this.batchedWindows, skipped: this.skippedWindows };
  }

  /** Release the model (and its thread); windows still queued fail. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pending = this.pending.slice(0, this.pendingCount);
    this.pending = [];
    this.pendingCount = 0;
    const err = new Error('SileroVad is closed');
    for (const s of pending) s!.windowFailed(err);
    await this.backend.close();
  }

  /**
   * Queue the stream's prepared window (its `input` and `state` buffers) for the next batch; the
   * stream hears back through `windowDone` or `windowFailed`.
   * @internal used by SileroStream
   */
  enqueue(stream: SileroStream): void {
    if (this.closed) {
      stream.windowFailed(new Error('SileroVad is closed'));
      return;
    }
    this.pending[this.pendingCount++] = stream;
    // A batch in flight asks for the next one when it is done.
    if (!this.flushing) this.pacer.request();
  }

  /** A stream's window was gated: counted, never run. @internal used by SileroStream */
  windowSkipped(): void {
    this.skippedWindows++;
  }

  /** One batch at a time: windows that arrive while a batch runs join the next one. */
  private async flush(): Promise<void> {
    if (this.flushing || this.pendingCount === 0) return;
    this.flushing = true;
    const batch = this.batch;
    const B = this.take();
    const wide = this.batchWide;
    try {
      this.fillBuffers(wide, B - wide);
      await this.backend.run(wide, B - wide);
      this.deliver(wide, B - wide);
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      for (let b = 0; b < B; b++) batch[b]!.windowFailed(err);
    } finally {
      batch.fill(undefined, 0, B);
      this.flushing = false;
    }
    if (this.pendingCount > 0) this.pacer.request();
  }

  /**
   * Move the first `maxBatch` pending streams into `batch`, wideband ones first (in order, then
   * the narrowband ones), and set `batchWide`; returns how many.
   */
  private take(): number {
    const pending = this.pending;
    const batch = this.batch;
    const n = Math.min(this.pendingCount, this.maxBatch);
    let wide = 0;
    for (let i = 0; i < n; i++) if (!pending[i]!.narrowband) batch[wide++] = pending[i];
    for (let i = 0, k = wide; i < n; i++) if (pending[i]!.narrowband) batch[k++] = pending[i];
    this.batchWide = wide;
    const rest = this.pendingCount - n;
    pending.copyWithin(0, n, this.pendingCount);
    pending.fill(undefined, rest, this.pendingCount);
    this.pendingCount = rest;
    return n;
  }

  /** Copy the batch's windows and states into the backend's buffers: one run per rate. */
  private fillBuffers(wide: number, narrow: number): void {
    this.batches++;
    this.runs += (wide > 0 ? 1 : 0) + (narrow > 0 ? 1 : 0);
    this.batchedWindows += wide + narrow;
    const buffers = this.backend.buffers(wide + narrow);
    this.fillRun(buffers, WIDEBAND, 0, wide);
    this.fillRun(buffers, NARROWBAND, wide, narrow);
  }

  /** The run of `batch[first .. first + count)`, all at `rate`; layout in BatchBuffers. */
  private fillRun({ input, state }: BatchBuffers, rate: SileroRate, first: number, count: number): void {
    const batch = this.batch;
    const inputAt = first * WIDEBAND.input;
    const stateAt = first * STATE_PER_WINDOW;
    // The run's state is [layer][window][unit]: each stream's two 128-unit halves land count×128 apart.
    for (let b = 0; b < count; b++) {
      const stream = batch[first + b]!;
      const s = stream.state;
      input.set(stream.input, inputAt + b * rate.input);
      const lo = stateAt + b * STATE_UNITS;
      const hi = stateAt + (count + b) * STATE_UNITS;
      for (let u = 0; u < STATE_UNITS; u++) {
        state[lo + u] = s[u]!;
        state[hi + u] = s[STATE_UNITS + u]!;
      }
    }
  }

  /**
   * Hand each stream its next state and probability. They live in the backend's buffers only
   * until the next batch, so they are copied out at once; the streams hear of it (windowDone,
   * which settles the call's push) a slice at a time (../../util/turn-slicer.ts). A stream whose
   * frame holds another full window queues it (for the next batch) from windowDone.
   */
  private deliver(wide: number, narrow: number): void {
    const buffers = this.backend.buffers(wide + narrow);
    this.deliverRun(buffers, 0, wide);
    this.deliverRun(buffers, wide, narrow);
  }

  /** The run of `batch[first .. first + count)`: its outputs back into its streams. */
  private deliverRun({ probability, nextState }: BatchBuffers, first: number, count: number): void {
    const batch = this.batch;
    const stateAt = first * STATE_PER_WINDOW;
    for (let b = 0; b < count; b++) {
      const stream = batch[first + b]!;
      const s = stream.state;
      const lo = stateAt + b * STATE_UNITS;
      const hi = stateAt + (count + b) * STATE_UNITS;
      for (let u = 0; u < STATE_UNITS; u++) {
        s[u] = nextState[lo + u]!;
        s[STATE_UNITS + u] = nextState[hi + u]!;
      }
      stream.delivered = probability[first + b]!;
      this.settler.add(stream);
    }
  }
}
