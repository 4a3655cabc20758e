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
 * Under load more windows land in each turn, so batches grow exactly when it matters. `sr` is
 * one scalar per run, so a batch with both kinds of stream is two runs, wideband then narrowband,
 * handed to the backend together (BatchBuffers in silero-backend.ts).
 *
 * The inference itself runs in a worker thread by default (silero-backend.ts), off the thread
 * that paces every call's RTP.
 *
 * Silence gate (../silence-gate.ts): once a stream's windows have been below
 * `silenceGateDbfs` (−60 dBFS) for `VAD_GATE_HANGOVER_WINDOWS` in a row, further quiet windows
 * are not run: their probability is 0 and the recurrent state is kept as the last run left it.
 * The first window at or above the level runs again. On a call the caller listens most of the
 * time, so most windows of a quiet line never reach the model.
 */
import { fileURLToPath } from 'node:url';
import { SAMPLE_RATE, type AudioFrame } from '../frame.ts';
import { Resampler } from '../resample.ts';
import { meanSquareFloat, SILENCE_GATE_DBFS, SilenceGate } from '../silence-gate.ts';
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
}

/** Quiet windows (32 ms each) still run after the last loud one before the gate skips any. */
export const VAD_GATE_HANGOVER_WINDOWS = 8;

/** What a push that completes no window resolves to before any window has run. */
const RESOLVED_ZERO: Promise<number> = Promise.resolve(0);
const noop = (): void => {};
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
  private flushScheduled = false;
  private flushing = false;
  private batches = 0;
  private runs = 0;
  private batchedWindows = 0;
  private skippedWindows = 0;
  private readonly flushSoon = (): void => void this.flush();

  private constructor(
    readonly backend: InferenceBackend,
    maxBatch: number,
    /** See SileroVadOptions.silenceGateDbfs. */
    readonly silenceGateDbfs: number,
  ) {
    this.maxBatch = Math.max(1, Math.floor(maxBatch));
  }

  static async load(options: SileroVadOptions = {}): Promise<SileroVad> {
    const o = { modelPath: options.modelPath ?? DEFAULT_SILERO_MODEL_PATH, intraOpNumThreads: options.intraOpNumThreads ?? 1 };
    const backend = options.thread === 'inline' ? await InlineBackend.load(o) : await WorkerBackend.load(o);
    for (const name of ['input', 'state', 'sr']) {
      if (!backend.inputNames.includes(name)) {
        await backend.close();
        throw new Error(`VAD model has no input '${name}' (inputs: ${backend.inputNames.join(', ')}): not Silero v5?`);
      }
    }
    return new SileroVad(backend, options.maxBatch ?? 256, options.silenceGateDbfs ?? SILENCE_GATE_DBFS);
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
    if (!this.flushScheduled && !this.flushing) {
      this.flushScheduled = true;
      setImmediate(this.flushSoon);
    }
  }

  /** A stream's window was gated: counted, never run. @internal used by SileroStream */
  windowSkipped(): void {
    this.skippedWindows++;
  }

  /** One batch at a time: windows that arrive while a batch runs join the next one. */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    this.flushing = true;
    const batch = this.batch;
    try {
      while (this.pendingCount > 0) {
        const B = this.take();
        const wide = this.batchWide;
        try {
          this.fillBuffers(wide, B - wide);
          await this.backend.run(wide, B - wide);
          this.deliver(wide, B - wide);
        } catch (e) {
          const err = e instanceof Error ? e : new Error(String(e));
          for (let b = 0; b < B; b++) batch[b]!.windowFailed(err);
        }
        batch.fill(undefined, 0, B);
      }
    } finally {
      this.flushing = false;
    }
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
   * until the next batch, so this runs at once; a stream whose frame holds another full window
   * queues it (for the next batch) from windowDone.
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
      stream.windowDone(probability[first + b]!);
    }
  }
}

/**
 * One call's VAD. Feed 16 kHz frames of any length (20 ms in practice); windows of 512 samples
 * (narrowband: the frames decimated to 8 kHz, windows of 256) are cut internally, so a 20 ms
 * frame completes zero or one window.
 *
 * Allocation-light by design (it runs for every call every 20 ms): a push that completes no
 * window returns a promise already settled to the current probability (the one of the push that
 * completed the last window, reused), and one that does costs a single new promise; samples are
 * written straight into the window buffer and the frame (narrowband: the decimator's reused
 * output) is held, not copied, while its window runs.
 */
export class SileroStream {
  /** The model's rate for this stream. */
  private readonly rate: SileroRate;
  /** Context + window, filled in place and never reallocated. @internal */
  readonly input: Float32Array;
  /** Recurrent state [2, 1, 128], updated after every window. @internal */
  readonly state = new Float32Array(STATE_PER_WINDOW);
  /**
   * Narrowband only: 16 → 8 kHz, this stream's own, so its filter history carries across frames.
   * It reads the frame by index, so a frame viewing a shared slab (copySamples) reads correctly.
   */
  private readonly decimator: Resampler | undefined;
  private readonly gate: SilenceGate;
  /** Samples of the current window collected so far (written at input[context + fill]). */
  private fill = 0;
  private busy = false;
  private lastProbability = 0;
  private windowCount = 0;
  /** A promise settled to `lastProbability`: what a push that completes no window returns. */
  private settled = RESOLVED_ZERO;
  /** While busy: the frame being consumed, the next sample to take, and the push's promise. */
  private samples: Int16Array | undefined;
  private at = 0;
  private promise: Promise<number> = RESOLVED_ZERO;
  private resolve: (probability: number) => void = noop;
  private reject: (error: Error) => void = noop;
  private readonly capture = (resolve: (probability: number) => void, reject: (error: Error) => void): void => {
    this.resolve = resolve;
    this.reject = reject;
  };

  constructor(
    private readonly vad: SileroVad,
    /** Runs the model at 8 kHz (see SileroVad.createStream). */
    readonly narrowband: boolean,
  ) {
    this.rate = narrowband ? NARROWBAND : WIDEBAND;
    this.input = new Float32Array(this.rate.input);
    this.decimator = narrowband ? new Resampler(SAMPLE_RATE, NARROWBAND.sampleRate) : undefined;
    this.gate = new SilenceGate(VAD_GATE_HANGOVER_WINDOWS, vad.silenceGateDbfs);
  }

  /** Probability of the most recent complete window (0 before the first). */
  get probability(): number {
    return this.lastProbability;
  }

  /** Windows decided so far (run, or called silence by the gate); each covers 32 ms. */
  get windows(): number {
    return this.windowCount;
  }

  /**
   * Add a frame; resolves to the speech probability of the latest complete window, which is the
   * previous value when this frame did not complete one. Calls must not overlap: the recurrent
   * state makes the order of windows matter, so an overlapping call is a caller bug and rejects.
   */
  push(frame: AudioFrame): Promise<number> {
    try {
      if (frame.sampleRate !== SAMPLE_RATE) {
        throw new RangeError(`Silero VAD needs ${SAMPLE_RATE} Hz frames, got ${frame.sampleRate} Hz (resample at the edge)`);
      }
      if (this.busy) throw new Error('SileroStream.push called again before the previous push resolved');
      // The decimator's output stays valid until this stream's next push: past this one's end.
      this.samples = this.decimator ? this.decimator.processShared(frame.samples) : frame.samples;
      this.at = 0;
      if (!this.nextWindow()) {
        this.samples = undefined;
        return this.settled;
      }
      this.busy = true;
      const promise = new Promise<number>(this.capture);
      this.promise = promise;
      this.vad.enqueue(this);
      return promise;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Copy samples of the held frame into the window until it is full (true: it needs a run) or
   * the frame is used up (false). A window left full by a failed run goes again first.
   */
  private consume(): boolean {
    const samples = this.samples!;
    const input = this.input;
    const { window, context } = this.rate;
    const length = samples.length;
    let at = this.at;
    let fill = this.fill;
    while (at < length) {
      const take = Math.min(window - fill, length - at);
      const base = context + fill;
      for (let i = 0; i < take; i++) input[base + i] = samples[at + i]! / 32768;
      fill += take;
      at += take;
      if (fill === window) break;
    }
    this.fill = fill;
    this.at = at;
    return fill === window;
  }

  /**
   * Fill the window from the held frame, calling silence (probability 0, no run) each full window
   * the gate closes on; true when a full window needs a run.
   */
  private nextWindow(): boolean {
    const { context, input } = this.rate;
    while (this.consume()) {
      if (!this.gate.push(meanSquareFloat(this.input, context, input))) return true;
      this.lastProbability = 0;
      this.settled = RESOLVED_ZERO;
      this.endWindow();
      this.vad.windowSkipped();
    }
    return false;
  }

  /** The current window is decided (run or gated): its tail becomes the next one's context. */
  private endWindow(): void {
    this.input.copyWithin(0, this.rate.window, this.rate.input);
    this.fill = 0;
    this.windowCount++;
  }

  /** The window ran (`state` already holds the next state). @internal used by SileroVad */
  windowDone(probability: number): void {
    this.lastProbability = probability;
    this.endWindow();
    // A frame longer than the rest of the window may hold further windows.
    if (this.at < this.samples!.length && this.nextWindow()) {
      this.vad.enqueue(this);
      return;
    }
    const resolve = this.resolve;
    this.release();
    this.settled = this.promise;
    resolve(this.lastProbability);
  }

  /**
   * The window's run failed: the push rejects, the rest of its frame is dropped, and the window
   * stays full (state untouched) so the next push runs it again. @internal used by SileroVad
   */
  windowFailed(error: Error): void {
    const reject = this.reject;
    this.release();
    reject(error);
  }

  private release(): void {
    this.samples = undefined;
    this.busy = false;
    this.resolve = noop;
    this.reject = noop;
  }

  /** Forget everything heard (e.g. reuse after a long hold); the session stays shared. */
  reset(): void {
    if (this.busy) throw new Error('SileroStream.reset during a push');
    this.input.fill(0);
    this.state.fill(0);
    this.decimator?.reset();
    this.gate.reset();
    this.fill = 0;
    this.lastProbability = 0;
    this.windowCount = 0;
    this.settled = RESOLVED_ZERO;
  }
}
