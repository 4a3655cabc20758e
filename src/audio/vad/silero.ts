/**
 * Silero VAD v5 on onnxruntime-node. One InferenceSession is loaded per process and shared by
 * every call; each call opens a SileroStream that owns its recurrent state and audio context, so
 * calls never see each other's history.
 *
 * Model contract, verified by experiment (see models/PROVENANCE.md): input float32 [B, 64+512]
 * (the last 64 samples of the previous window prepended as context, exactly as upstream's
 * OnnxWrapper does), state float32 [2, B, 128], sr int64 scalar; outputs `output` [B, 1] (speech
 * probability) and `stateN` [2, B, 128].
 *
 * Cross-call batching: windows from all calls that complete in the same event-loop turn, or
 * while the previous batch is still being computed, run as one batch [B, 576]: one native call
 * instead of B, about 3× less CPU per window at 150 calls (bench/vad.ts) and no added latency.
 * Under load more windows land in each turn, so batches grow exactly when it matters.
 *
 * The inference itself runs in a worker thread by default (silero-backend.ts), off the thread
 * that paces every call's RTP.
 */
import { fileURLToPath } from 'node:url';
import { SAMPLE_RATE, type AudioFrame } from '../frame.ts';
import { InlineBackend, WorkerBackend, type InferenceBackend } from './silero-backend.ts';

/** Samples per inference window at 16 kHz (32 ms): the only window size v5 is trained for. */
export const SILERO_WINDOW_SAMPLES = 512;
/** Tail of the previous window fed in front of each new one. */
export const SILERO_CONTEXT_SAMPLES = 64;
const INPUT_SAMPLES = SILERO_CONTEXT_SAMPLES + SILERO_WINDOW_SAMPLES;
const STATE_UNITS = 128;
const STATE_SIZE = 2 * STATE_UNITS;

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
}

interface PendingWindow {
  stream: SileroStream;
  resolve: (probability: number) => void;
  reject: (error: Error) => void;
}

/** The shared model. Create once at start-up with `SileroVad.load()`; open a stream per call. */
export class SileroVad {
  readonly maxBatch: number;
  private closed = false;
  private pending: PendingWindow[] = [];
  private flushScheduled = false;
  private flushing = false;
  private batches = 0;
  private batchedWindows = 0;

  private constructor(
    readonly backend: InferenceBackend,
    maxBatch: number,
  ) {
    this.maxBatch = Math.max(1, Math.floor(maxBatch));
  }

  static async load(options: SileroVadOptions = {}): Promise<SileroVad> {
    const o = { modelPath: options.modelPath ?? DEFAULT_SILERO_MODEL_PATH, intraOpNumThreads: options.intraOpNumThreads ?? 1, sampleRate: SAMPLE_RATE };
    const backend = options.thread === 'inline' ? await InlineBackend.load(o) : await WorkerBackend.load(o);
    for (const name of ['input', 'state', 'sr']) {
      if (!backend.inputNames.includes(name)) {
        await backend.close();
        throw new Error(`VAD model has no input '${name}' (inputs: ${backend.inputNames.join(', ')}): not Silero v5?`);
      }
    }
    return new SileroVad(backend, options.maxBatch ?? 256);
  }

  createStream(): SileroStream {
    if (this.closed) throw new Error('SileroVad is closed');
    return new SileroStream(this);
  }

  /** Inference runs and windows so far: windows / runs is the mean batch size. */
  get stats(): { runs: number; windows: number } {
    return { runs: this.batches, windows: this.batchedWindows };
  }

  /** Release the model (and its thread); windows still queued fail. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pending = this.pending;
    this.pending = [];
    for (const p of pending) p.reject(new Error('SileroVad is closed'));
    await this.backend.close();
  }

  /**
   * Queue the stream's prepared window (its `input` and `state` buffers) for the next batch.
   * @internal used by SileroStream
   */
  enqueue(stream: SileroStream): Promise<number> {
    if (this.closed) return Promise.reject(new Error('SileroVad is closed'));
    return new Promise((resolve, reject) => {
      this.pending.push({ stream, resolve, reject });
      if (!this.flushScheduled && !this.flushing) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /** One batch at a time: windows that arrive while a batch runs join the next one. */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.maxBatch);
        try {
          const probs = await this.run(batch);
          for (let b = 0; b < batch.length; b++) batch[b]!.resolve(probs[b] ?? 0);
        } catch (e) {
          const err = e instanceof Error ? e : new Error(String(e));
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async run(batch: PendingWindow[]): Promise<Float32Array> {
    const B = batch.length;
    this.batches++;
    this.batchedWindows += B;
    const { input, state } = this.backend.buffers(B);
    // state is [layer][batch][unit]: each stream's two 128-unit halves land B*128 apart.
    for (let b = 0; b < B; b++) {
      const s = batch[b]!.stream;
      input.set(s.input, b * INPUT_SAMPLES);
      state.set(s.state.subarray(0, STATE_UNITS), b * STATE_UNITS);
      state.set(s.state.subarray(STATE_UNITS), (B + b) * STATE_UNITS);
    }
    const out = await this.backend.run(B);
    if (out.probability.length !== B || out.state.length !== B * STATE_SIZE) throw new Error('unexpected Silero VAD outputs');
    const next = out.state;
    for (let b = 0; b < B; b++) {
      const s = batch[b]!.stream;
      s.state.set(next.subarray(b * STATE_UNITS, (b + 1) * STATE_UNITS), 0);
      s.state.set(next.subarray((B + b) * STATE_UNITS, (B + b + 1) * STATE_UNITS), STATE_UNITS);
    }
    // Copied: the backend reuses its output buffer for the next batch.
    return out.probability.slice();
  }
}

/**
 * One call's VAD. Feed 16 kHz frames of any length (20 ms in practice); windows of 512 samples
 * are cut internally, so a 20 ms frame completes zero or one window.
 */
export class SileroStream {
  /** Context + window, filled in place and never reallocated. @internal */
  readonly input = new Float32Array(INPUT_SAMPLES);
  /** Recurrent state [2, 1, 128], updated after every window. @internal */
  readonly state = new Float32Array(STATE_SIZE);
  /** Samples of the current window collected so far (written at input[CONTEXT + fill]). */
  private fill = 0;
  private busy = false;
  private lastProbability = 0;
  private windowCount = 0;

  constructor(private readonly vad: SileroVad) {}

  /** Probability of the most recent complete window (0 before the first). */
  get probability(): number {
    return this.lastProbability;
  }

  /** Windows run so far; each covers 32 ms. */
  get windows(): number {
    return this.windowCount;
  }

  /**
   * Add a frame; resolves to the speech probability of the latest complete window, which is the
   * previous value when this frame did not complete one. Calls must not overlap: the recurrent
   * state makes the order of windows matter, so an overlapping call is a caller bug and throws.
   */
  async push(frame: AudioFrame): Promise<number> {
    if (frame.sampleRate !== SAMPLE_RATE) {
      throw new RangeError(`Silero VAD needs ${SAMPLE_RATE} Hz frames, got ${frame.sampleRate} Hz (resample at the edge)`);
    }
    if (this.busy) throw new Error('SileroStream.push called again before the previous push resolved');
    this.busy = true;
    try {
      const samples = frame.samples;
      const input = this.input;
      let at = 0;
      while (at < samples.length) {
        const take = Math.min(SILERO_WINDOW_SAMPLES - this.fill, samples.length - at);
        const base = SILERO_CONTEXT_SAMPLES + this.fill;
        for (let i = 0; i < take; i++) input[base + i] = samples[at + i]! / 32768;
        this.fill += take;
        at += take;
        if (this.fill === SILERO_WINDOW_SAMPLES) {
          this.lastProbability = await this.vad.enqueue(this);
          // This window's tail is the next window's context.
          input.copyWithin(0, INPUT_SAMPLES - SILERO_CONTEXT_SAMPLES, INPUT_SAMPLES);
          this.fill = 0;
          this.windowCount++;
        }
      }
      return this.lastProbability;
    } finally {
      this.busy = false;
    }
  }

  /** Forget everything heard (e.g. reuse after a long hold); the session stays shared. */
  reset(): void {
    if (this.busy) throw new Error('SileroStream.reset during a push');
    this.input.fill(0);
    this.state.fill(0);
    this.fill = 0;
    this.lastProbability = 0;
    this.windowCount = 0;
  }
}
