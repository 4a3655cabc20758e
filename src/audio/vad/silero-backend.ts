/**
 * Where Silero inference runs. onnxruntime-node runs `session.run` synchronously on the calling
 * JS thread, so on the media thread every batch is time the RTP pacing and every other call wait
 * for (bench/RESULTS.md: at 150 calls the thread was on CPU 85 % of the time, VAD about half of
 * it). Two backends with one contract:
 * - `WorkerBackend` (the default): one worker thread owns the ONNX session. A batch is written
 *   into a SharedArrayBuffer and announced with a tiny message; the worker writes probabilities
 *   and next states back into the same buffer. The media thread pays one copy per window and a
 *   postMessage per batch (transferring fresh arrays instead cost about 140 µs per message), and
 *   the second core does the maths. A crashed worker fails the batch it held and is replaced on
 *   the next batch: calls lose one window's probability, not their VAD.
 * - `InlineBackend`: the session on this thread, for tools and comparisons.
 */
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

export interface BatchOutput {
  /** [B] speech probabilities. */
  probability: Float32Array;
  /** [2, B, units] next recurrent state. */
  state: Float32Array;
}

/**
 * One batch at a time: fill `buffers(B)`, await `run(B)`; the outputs stay valid until the next
 * `buffers()` call.
 */
export interface InferenceBackend {
  readonly inputNames: readonly string[];
  /** `input` [B, samples] and `state` [2, B, units] to fill for the next run. */
  buffers(batch: number): { input: Float32Array; state: Float32Array };
  run(batch: number): Promise<BatchOutput>;
  close(): Promise<void>;
}

export interface BackendOptions {
  modelPath: string;
  intraOpNumThreads: number;
  sampleRate: number;
}

/** Silero v5's sizes: the window with its context, and the recurrent state per layer. */
export const WINDOW_INPUT = 576;
export const STATE_UNITS = 128;
const STATE_PER_WINDOW = 2 * STATE_UNITS;

const sessionOptions = (threads: number): ort.InferenceSession.SessionOptions => ({
  intraOpNumThreads: threads,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
});

export class InlineBackend implements InferenceBackend {
  private readonly sr: ort.Tensor;
  private input = new Float32Array(0);
  private state = new Float32Array(0);

  private constructor(private readonly session: ort.InferenceSession, sampleRate: number) {
    this.sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(sampleRate)]), []);
  }

  static async load(o: BackendOptions): Promise<InlineBackend> {
    return new InlineBackend(await ort.InferenceSession.create(o.modelPath, sessionOptions(o.intraOpNumThreads)), o.sampleRate);
  }

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  buffers(batch: number): { input: Float32Array; state: Float32Array } {
    if (this.input.length < batch * WINDOW_INPUT) {
      this.input = new Float32Array(batch * WINDOW_INPUT);
      this.state = new Float32Array(batch * STATE_PER_WINDOW);
    }
    return { input: this.input.subarray(0, batch * WINDOW_INPUT), state: this.state.subarray(0, batch * STATE_PER_WINDOW) };
  }

  async run(batch: number): Promise<BatchOutput> {
    const { input, state } = this.buffers(batch);
    const out = await this.session.run({
      input: new ort.Tensor('float32', input, [batch, WINDOW_INPUT]),
      state: new ort.Tensor('float32', state, [2, batch, STATE_UNITS]),
      sr: this.sr,
    });
    const probability = out['output']?.data;
    const next = out['stateN']?.data;
    if (!(probability instanceof Float32Array) || !(next instanceof Float32Array)) throw new Error('unexpected Silero VAD outputs');
    return { probability, state: next };
  }

  close(): Promise<void> {
    return this.session.release();
  }
}

type WorkerReply =
  | { type: 'ready'; inputNames: string[] }
  | { type: 'result'; id: number }
  | { type: 'error'; id?: number; message: string };

interface InFlight {
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * The shared batch buffer: [input cap×576][state cap×256][probability cap][next state cap×256]
 * float32s. Grown (replaced) when a larger batch comes; the new one travels with the next run.
 */
class Slab {
  readonly sab: SharedArrayBuffer;
  constructor(readonly capacity: number) {
    this.sab = new SharedArrayBuffer(4 * capacity * (WINDOW_INPUT + 2 * STATE_PER_WINDOW + 1));
  }
  view(offsetFloats: number, length: number): Float32Array {
    return new Float32Array(this.sab, 4 * offsetFloats, length);
  }
  input(batch: number): Float32Array {
    return this.view(0, batch * WINDOW_INPUT);
  }
  state(batch: number): Float32Array {
    return this.view(this.capacity * WINDOW_INPUT, batch * STATE_PER_WINDOW);
  }
  probability(batch: number): Float32Array {
    return this.view(this.capacity * (WINDOW_INPUT + STATE_PER_WINDOW), batch);
  }
  nextState(batch: number): Float32Array {
    return this.view(this.capacity * (WINDOW_INPUT + STATE_PER_WINDOW + 1), batch * STATE_PER_WINDOW);
  }
}

const WORKER_URL = new URL('./silero-worker.mjs', import.meta.url);

export class WorkerBackend implements InferenceBackend {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private readonly inFlight = new Map<number, InFlight>();
  private slab = new Slab(32);
  /** The worker has not seen the current slab yet. */
  private slabIsNew = true;
  private nextId = 1;
  private closed = false;
  private names: readonly string[] = [];
  /** Workers started so far; more than one means a crash was recovered. */
  starts = 0;

  private constructor(private readonly o: BackendOptions) {}

  static async load(o: BackendOptions): Promise<WorkerBackend> {
    const backend = new WorkerBackend(o);
    await backend.start();
    return backend;
  }

  get inputNames(): readonly string[] {
    return this.names;
  }

  buffers(batch: number): { input: Float32Array; state: Float32Array } {
    if (batch > this.slab.capacity) {
      this.slab = new Slab(Math.max(batch, this.slab.capacity * 2));
      this.slabIsNew = true;
    }
    return { input: this.slab.input(batch), state: this.slab.state(batch) };
  }

  async run(batch: number): Promise<BatchOutput> {
    if (this.closed) throw new Error('SileroVad is closed');
    if (this.inFlight.size > 0) throw new Error('WorkerBackend runs one batch at a time');
    if (!this.worker) {
      await this.start();
      this.slabIsNew = true;
    }
    const worker = this.worker!;
    const id = this.nextId++;
    const slab = this.slab;
    await new Promise<void>((resolve, reject) => {
      this.inFlight.set(id, { resolve, reject });
      worker.postMessage({ type: 'run', id, batch, capacity: slab.capacity, ...(this.slabIsNew ? { sab: slab.sab } : {}) });
      this.slabIsNew = false;
    });
    return { probability: slab.probability(batch), state: slab.nextState(batch) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.failInFlight(new Error('SileroVad is closed'));
    await worker?.terminate();
  }

  /** Test seam: what a native crash in the worker looks like from here. @internal */
  async crashForTest(): Promise<void> {
    await this.worker?.terminate();
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    this.starts++;
    const worker = new Worker(WORKER_URL);
    // The VAD never keeps a process alive on its own; open calls do.
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      const onInit = (m: WorkerReply): void => {
        if (m.type === 'ready') {
          this.names = m.inputNames;
          resolve();
        } else if (m.type === 'error' && m.id === undefined) {
          reject(new Error(`VAD model failed to load: ${m.message}`));
        }
      };
      worker.on('message', (m: WorkerReply) => {
        if (m.type === 'result') this.settle(m.id)?.resolve();
        else if (m.type === 'error' && m.id !== undefined) this.settle(m.id)?.reject(new Error(m.message));
        else onInit(m);
      });
      const lost = (why: string): void => {
        if (this.worker !== worker) return;
        this.worker = undefined;
        this.ready = undefined;
        const err = new Error(`VAD worker ${why}`);
        reject(err);
        this.failInFlight(err);
      };
      worker.on('error', (e) => lost(`failed: ${e.message}`));
      worker.on('exit', (code) => lost(`exited with code ${code}`));
    });
    worker.postMessage({ type: 'init', modelPath: this.o.modelPath, intraOpNumThreads: this.o.intraOpNumThreads, sampleRate: this.o.sampleRate });
    return this.ready;
  }

  private settle(id: number): InFlight | undefined {
    const f = this.inFlight.get(id);
    this.inFlight.delete(id);
    return f;
  }

  private failInFlight(err: Error): void {
    const all = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const f of all) f.reject(err);
  }
}
