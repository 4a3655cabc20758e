/**
 * Where Silero inference runs. onnxruntime-node runs `session.run` synchronously on the calling
 * JS thread, so on the media thread every batch is time the RTP pacing and every other call wait
 * for (bench/RESULTS.md: at 150 calls the thread was on CPU 85 % of the time, VAD about half of
 * it). Two backends with one contract:
 * - `WorkerBackend` (the default): one worker thread owns the ONNX session. A batch is written
 *   into a shared slab (SharedArrayBuffer) and the worker writes probabilities and next states
 *   back into it. The hand-over is two words of a shared control block: the media thread stores
 *   the batch number and `Atomics.notify`s the worker (blocked in `Atomics.wait`); the worker
 *   stores the finished batch number and notifies back, which resolves the media thread's
 *   `Atomics.waitAsync`. No message is cloned per batch (a postMessage each way cost more main-
 *   thread time and garbage); messages carry only set-up: model options at start, a grown slab.
 *   A crashed worker fails the batch it held and is replaced on the next batch: calls lose one
 *   window's probability, not their VAD.
 * - `InlineBackend`: the session on this thread, for tools and comparisons.
 */
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

/**
 * A batch's buffers, sized for at least `batch` windows. Rows are indexed by the batch's own B:
 * `input` row b at b×576; `state` and `nextState` are [2, B, 128], so layer l of row b starts at
 * (l×B + b)×128; `probability[b]`. The same object comes back until a larger batch needs room.
 */
export interface BatchBuffers {
  readonly input: Float32Array;
  readonly state: Float32Array;
  /** Written by `run`. */
  readonly probability: Float32Array;
  /** Written by `run`. */
  readonly nextState: Float32Array;
}

/**
 * One batch at a time: fill `buffers(B)`, await `run(B)`; the outputs in the same buffers stay
 * valid until the next `buffers()` call.
 */
export interface InferenceBackend {
  readonly inputNames: readonly string[];
  /** The buffers to fill for a run of `batch` windows (and read its outputs from). */
  buffers(batch: number): BatchBuffers;
  run(batch: number): Promise<void>;
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

/** Capacity of the first buffers; doubled (at least) when a larger batch comes. */
const INITIAL_CAPACITY = 32;

const grownCapacity = (capacity: number, batch: number): number => Math.max(batch, capacity * 2);

export class InlineBackend implements InferenceBackend {
  private readonly sr: ort.Tensor;
  private bufs = inlineBuffers(INITIAL_CAPACITY);

  private constructor(private readonly session: ort.InferenceSession, sampleRate: number) {
    this.sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(sampleRate)]), []);
  }

  static async load(o: BackendOptions): Promise<InlineBackend> {
    return new InlineBackend(await ort.InferenceSession.create(o.modelPath, sessionOptions(o.intraOpNumThreads)), o.sampleRate);
  }

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  buffers(batch: number): BatchBuffers {
    if (batch > this.bufs.probability.length) this.bufs = inlineBuffers(grownCapacity(this.bufs.probability.length, batch));
    return this.bufs;
  }

  async run(batch: number): Promise<void> {
    const b = this.buffers(batch);
    const out = await this.session.run({
      input: new ort.Tensor('float32', b.input.subarray(0, batch * WINDOW_INPUT), [batch, WINDOW_INPUT]),
      state: new ort.Tensor('float32', b.state.subarray(0, batch * STATE_PER_WINDOW), [2, batch, STATE_UNITS]),
      sr: this.sr,
    });
    const probability = out['output']?.data;
    const next = out['stateN']?.data;
    if (!(probability instanceof Float32Array) || probability.length !== batch || !(next instanceof Float32Array) || next.length !== batch * STATE_PER_WINDOW) {
      throw new Error('unexpected Silero VAD outputs');
    }
    b.probability.set(probability);
    b.nextState.set(next);
  }

  close(): Promise<void> {
    return this.session.release();
  }
}

function inlineBuffers(capacity: number): BatchBuffers {
  return {
    input: new Float32Array(capacity * WINDOW_INPUT),
    state: new Float32Array(capacity * STATE_PER_WINDOW),
    probability: new Float32Array(capacity),
    nextState: new Float32Array(capacity * STATE_PER_WINDOW),
  };
}

/**
 * The shared control block, Int32 words, one per worker (the worker's copy of the layout is in
 * silero-worker.mjs). The worker sleeps on SIGNAL, which the parent bumps (and notifies) after
 * every change meant for it:
 * - REQ: number of the latest batch asked for, with its size at BATCH and the generation of the
 *   slab it is in at GEN (parent);
 * - FLAG: 0 run, 1 stop (finish the batch in hand, release the session, end), 2 crash (end with
 *   code 1 instead of finishing the batch in hand or the next one: the crash test seam) (parent);
 * - DONE: number of the latest batch finished, notified (worker); STATUS: 0 ok, 1 failed, with
 *   the message's length at ERR_LEN and its UTF-16 code units from ERR on (worker).
 * The thread is never terminated while it may be inside onnxruntime: a terminate landing in a
 * native run aborts the whole process ("terminate called after throwing an instance of
 * 'Napi::Error'"), so close() asks it to stop and terminates only one that does not.
 */
const CTL = { SIGNAL: 0, REQ: 1, BATCH: 2, GEN: 3, FLAG: 4, DONE: 5, STATUS: 6, ERR_LEN: 7, ERR: 8, WORDS: 256 } as const;
const FLAG = { RUN: 0, STOP: 1, CRASH: 2 } as const;

/** How long close() waits for the worker to stop on its own before terminating it. */
const STOP_TIMEOUT_MS = 5000;

/**
 * The shared batch buffer: [input cap×576][state cap×256][probability cap][next state cap×256]
 * float32s. Grown (replaced, with the next generation number) when a larger batch comes; the
 * worker is sent the new one before the batch that needs it.
 */
class Slab implements BatchBuffers {
  readonly sab: SharedArrayBuffer;
  readonly input: Float32Array;
  readonly state: Float32Array;
  readonly probability: Float32Array;
  readonly nextState: Float32Array;
  constructor(
    readonly capacity: number,
    readonly gen: number,
  ) {
    const c = capacity;
    this.sab = new SharedArrayBuffer(4 * c * (WINDOW_INPUT + 2 * STATE_PER_WINDOW + 1));
    this.input = new Float32Array(this.sab, 0, c * WINDOW_INPUT);
    this.state = new Float32Array(this.sab, 4 * c * WINDOW_INPUT, c * STATE_PER_WINDOW);
    this.probability = new Float32Array(this.sab, 4 * c * (WINDOW_INPUT + STATE_PER_WINDOW), c);
    this.nextState = new Float32Array(this.sab, 4 * c * (WINDOW_INPUT + STATE_PER_WINDOW + 1), c * STATE_PER_WINDOW);
  }
}

type WaitAsyncResult = { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
// In Node since 16 (V8 8.7); not in the ES2023 lib this project compiles against.
const waitAsync = (Atomics as unknown as { waitAsync(array: Int32Array, index: number, value: number): WaitAsyncResult }).waitAsync;

type WorkerReply = { type: 'ready'; inputNames: string[] } | { type: 'error'; message: string };

/** The batch the worker holds. */
interface InFlight {
  readonly id: number;
  readonly ctl: Int32Array;
  /** DONE before the request: the value the wait sleeps on. */
  readonly doneBefore: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** One worker thread with its own control block. */
interface Thread {
  readonly worker: Worker;
  readonly ctl: Int32Array;
  /** Settles when the thread has ended. */
  readonly exited: Promise<void>;
  /** Generation of the slab the worker has (or has been sent). */
  slabGen: number;
  /** Why the thread is gone, once it is. */
  lost?: Error;
}

const WORKER_URL = new URL('./silero-worker.mjs', import.meta.url);

export class WorkerBackend implements InferenceBackend {
  /** The live worker, also while it loads the model. */
  private thread: Thread | undefined;
  /** Settles with `thread` once it is ready for batches. */
  private ready: Promise<Thread> | undefined;
  private isReady = false;
  private inFlight: InFlight | undefined;
  private slab = new Slab(INITIAL_CAPACITY, 1);
  private nextId = 1;
  private closed = false;
  private names: readonly string[] = [];
  /** Workers started so far; more than one means a crash was recovered. */
  starts = 0;

  private constructor(private readonly o: BackendOptions) {}

  static async load(o: BackendOptions): Promise<WorkerBackend> {
    const backend = new WorkerBackend(o);
    try {
      await backend.start();
    } catch (e) {
      await backend.close();
      throw e;
    }
    return backend;
  }

  get inputNames(): readonly string[] {
    return this.names;
  }

  buffers(batch: number): BatchBuffers {
    if (batch > this.slab.capacity) this.slab = new Slab(grownCapacity(this.slab.capacity, batch), this.slab.gen + 1);
    return this.slab;
  }

  run(batch: number): Promise<void> {
    // Not async: one batch every few ms, each without an extra promise layer.
    if (this.closed) return Promise.reject(new Error('SileroVad is closed'));
    if (this.isReady) return this.submit(this.thread!, batch);
    return this.start().then((thread) => this.submit(thread, batch));
  }

  private submit(thread: Thread, batch: number): Promise<void> {
    if (this.closed) return Promise.reject(new Error('SileroVad is closed'));
    if (this.inFlight) return Promise.reject(new Error('WorkerBackend runs one batch at a time'));
    // It may have ended between its 'ready' and now (nobody would fail the batch later).
    if (thread.lost) return Promise.reject(thread.lost);
    const slab = this.slab;
    if (batch > slab.capacity) return Promise.reject(new RangeError(`batch of ${batch} does not fit the buffers (call buffers() first)`));
    if (thread.slabGen !== slab.gen) {
      // Queued before the request below is signalled, so the worker finds it when it wakes.
      thread.worker.postMessage({ type: 'slab', sab: slab.sab, capacity: slab.capacity, gen: slab.gen });
      thread.slabGen = slab.gen;
    }
    const ctl = thread.ctl;
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      const f: InFlight = { id, ctl, doneBefore: Atomics.load(ctl, CTL.DONE), resolve, reject };
      this.inFlight = f;
      ctl[CTL.BATCH] = batch;
      ctl[CTL.GEN] = slab.gen;
      Atomics.store(ctl, CTL.REQ, id);
      signal(ctl);
      this.waitFor(f);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const thread = this.thread;
    this.forget();
    this.failInFlight(new Error('SileroVad is closed'));
    if (thread) await stop(thread);
  }

  /**
   * Test seam: what a crash in the worker looks like from here. The worker ends with code 1
   * instead of finishing the batch it holds or, when idle, the next batch it is given (never
   * from inside a native run, see CTL): so a test that calls this and then pushes a window knows
   * that window fails. Settles once the worker has ended.
   * @internal
   */
  async crashForTest(): Promise<void> {
    const thread = this.thread;
    if (!thread) return;
    // Whoever awaits this keeps the process alive until the thread has gone.
    thread.worker.ref();
    Atomics.store(thread.ctl, CTL.FLAG, FLAG.CRASH);
    await thread.exited;
  }

  /** Sleep (off-thread) until the worker marks `f` done, then settle it. */
  private waitFor(f: InFlight): void {
    const w = waitAsync(f.ctl, CTL.DONE, f.doneBefore);
    if (w.async) void w.value.then(() => this.wake(f));
    else this.wake(f);
  }

  private wake(f: InFlight): void {
    // Settled already: failed when its worker was lost (whose waiter is then woken by hand).
    if (this.inFlight !== f) return;
    if (Atomics.load(f.ctl, CTL.DONE) !== f.id) {
      this.waitFor(f);
      return;
    }
    this.inFlight = undefined;
    if (Atomics.load(f.ctl, CTL.STATUS) === 0) f.resolve();
    else f.reject(new Error(readError(f.ctl)));
  }

  private start(): Promise<Thread> {
    if (this.ready) return this.ready;
    this.starts++;
    const ctl = new Int32Array(new SharedArrayBuffer(4 * CTL.WORDS));
    const slab = this.slab;
    const worker = new Worker(WORKER_URL, {
      workerData: {
        modelPath: this.o.modelPath,
        intraOpNumThreads: this.o.intraOpNumThreads,
        sampleRate: this.o.sampleRate,
        ctl: ctl.buffer,
        slab: { sab: slab.sab, capacity: slab.capacity, gen: slab.gen },
      },
    });
    // The VAD never keeps a process alive on its own; open calls do.
    worker.unref();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const thread: Thread = { worker, ctl, exited, slabGen: slab.gen };
    this.thread = thread;
    const ready = new Promise<Thread>((resolve, reject) => {
      worker.on('message', (m: WorkerReply) => {
        if (m.type === 'ready') {
          this.names = m.inputNames;
          if (this.thread === thread) this.isReady = true;
          resolve(thread);
        } else if (m.type === 'error') {
          reject(new Error(`VAD model failed to load: ${m.message}`));
        }
      });
      const lost = (why: string): void => {
        const err = new Error(`VAD worker ${why}`);
        thread.lost ??= err;
        reject(err);
        if (this.thread !== thread) return;
        this.forget();
        this.failInFlight(err);
      };
      worker.on('error', (e) => lost(`failed: ${e.message}`));
      worker.on('exit', (code) => lost(`exited with code ${code}`));
    });
    // A load failure is reported by whoever awaits `ready`; never as an unhandled rejection.
    ready.catch(() => {});
    this.ready = ready;
    return ready;
  }

  /** Drop the current worker: the next batch starts a new one. */
  private forget(): void {
    this.thread = undefined;
    this.ready = undefined;
    this.isReady = false;
  }

  private failInFlight(err: Error): void {
    const f = this.inFlight;
    if (!f) return;
    this.inFlight = undefined;
    f.reject(err);
    // Release the wait parked on the lost worker's control block.
    Atomics.notify(f.ctl, CTL.DONE);
  }
}

/** Wake the worker to look at the control block. */
function signal(ctl: Int32Array): void {
  Atomics.add(ctl, CTL.SIGNAL, 1);
  Atomics.notify(ctl, CTL.SIGNAL);
}

/** Ask the thread to end and wait until it has; terminate it if it does not. */
async function stop(thread: Thread): Promise<void> {
  // Whoever awaits this keeps the process alive until the thread has gone.
  thread.worker.ref();
  Atomics.store(thread.ctl, CTL.FLAG, FLAG.STOP);
  signal(thread.ctl);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => void thread.worker.terminate().then(() => resolve()), STOP_TIMEOUT_MS);
    timer.unref();
  });
  try {
    await Promise.race([thread.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

function readError(ctl: Int32Array): string {
  const n = Math.min(Atomics.load(ctl, CTL.ERR_LEN), CTL.WORDS - CTL.ERR);
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(ctl[CTL.ERR + i]!);
  return s || 'VAD worker failed';
}
