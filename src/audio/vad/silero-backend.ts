/**
 * Where Silero inference runs. onnxruntime-node runs `session.run` synchronously on the calling
 * JS thread, so on the media thread every batch is time the RTP pacing and every other call wait
 * for (docs/bench-history.md: at 150 calls the thread was on CPU 85 % of the time, VAD about half of
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
 * - `InlineBackend` (silero-inline.ts): the session on this thread, for tools and comparisons.
 *
 * A batch holds windows at both of the model's rates (16 kHz for wideband calls, 8 kHz for
 * G.711 ones, see silero.ts). `sr` is one scalar per ONNX run, so a batch is up to two runs, one
 * per rate present, made one after the other inside the same hand-over: mixing rates costs a
 * second native call, not a second trip to the worker.
 */
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

/** Silero v5 at one of its two rates. Both windows are 32 ms of audio. */
export interface SileroRate {
  readonly sampleRate: number;
  /** Samples per window: the only sizes v5 is trained for. */
  readonly window: number;
  /** Tail of the previous window fed in front of each new one (as upstream's OnnxWrapper). */
  readonly context: number;
  /** context + window: one row of the model's `input`. */
  readonly input: number;
}
export const WIDEBAND: SileroRate = { sampleRate: 16000, window: 512, context: 64, input: 576 };
export const NARROWBAND: SileroRate = { sampleRate: 8000, window: 256, context: 32, input: 288 };
/** The recurrent state: [2, B, 128]. */
export const STATE_UNITS = 128;
export const STATE_PER_WINDOW = 2 * STATE_UNITS;

/**
 * A batch's buffers, with room for at least `windows` windows of either rate (a row is sized for
 * a wideband window). A batch of `wide` 16 kHz windows and `narrow` 8 kHz ones is two runs, the
 * wideband one first, each packed in every array right after the other:
 * - `input`: the wideband run's [wide, 576] rows from 0, the narrowband run's [narrow, 288] rows
 *   from wide×576;
 * - `state` and `nextState`: the wideband run's [2, wide, 128] from 0, the narrowband run's
 *   [2, narrow, 128] from wide×256; within a run of B windows, layer l of its row b starts at
 *   (l×B + b)×128 from the run's start;
 * - `probability`: the wideband run's `wide` values, then the narrowband run's.
 * The same object comes back until a larger batch needs room.
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
 * One batch at a time: fill `buffers(wide + narrow)`, await `run(wide, narrow)`; the outputs in
 * the same buffers stay valid until the next `buffers()` call.
 */
export interface InferenceBackend {
  readonly inputNames: readonly string[];
  /** The buffers to fill for a batch of `windows` windows (and read its outputs from). */
  buffers(windows: number): BatchBuffers;
  /** Run `wide` 16 kHz windows and `narrow` 8 kHz ones, laid out as BatchBuffers describes. */
  run(wide: number, narrow: number): Promise<void>;
  close(): Promise<void>;
}

export interface BackendOptions {
  modelPath: string;
  intraOpNumThreads: number;
}

export const sessionOptions = (threads: number): ort.InferenceSession.SessionOptions => ({
  intraOpNumThreads: threads,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
});

/** Capacity of the first buffers; doubled (at least) when a larger batch comes. */
export const INITIAL_CAPACITY = 32;

export const grownCapacity = (capacity: number, batch: number): number => Math.max(batch, capacity * 2);

/**
 * The shared control block, Int32 words, one per worker (the worker's copy of the layout is in
 * silero-worker.mjs). The worker sleeps on SIGNAL, which the parent bumps (and notifies) after
 * every change meant for it:
 * - REQ: number of the latest batch asked for, with its windows at each rate at WIDE and NARROW
 *   and the generation of the slab it is in at GEN (parent);
 * - FLAG: 0 run, 1 stop (finish the batch in hand, release the session, end), 2 crash (end with
 *   code 1 instead of finishing the batch in hand or the next one: the crash test seam) (parent);
 * - DONE: number of the latest batch finished, notified (worker); STATUS: 0 ok, 1 failed, with
 *   the message's length at ERR_LEN and its UTF-16 code units from ERR on (worker).
 * The thread is never terminated while it may be inside onnxruntime: a terminate landing in a
 * native run aborts the whole process ("terminate called after throwing an instance of
 * 'Napi::Error'"), so close() asks it to stop and terminates only one that does not.
 */
const CTL = { SIGNAL: 0, REQ: 1, WIDE: 2, NARROW: 3, GEN: 4, FLAG: 5, DONE: 6, STATUS: 7, ERR_LEN: 8, ERR: 9, WORDS: 256 } as const;
const FLAG = { RUN: 0, STOP: 1, CRASH: 2 } as const;

/** How long close() waits for the worker to stop on its own before terminating it. */
const STOP_TIMEOUT_MS = 5000;

/**
 * The shared batch buffer: [input cap×576][state cap×256][probability cap][next state cap×256]
 * float32s, each region laid out as BatchBuffers describes. Grown (replaced, with the next
 * generation number) when a larger batch comes; the worker is sent the new one before the batch
 * that needs it.
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
    const row = WIDEBAND.input;
    this.sab = new SharedArrayBuffer(4 * c * (row + 2 * STATE_PER_WINDOW + 1));
    this.input = new Float32Array(this.sab, 0, c * row);
    this.state = new Float32Array(this.sab, 4 * c * row, c * STATE_PER_WINDOW);
    this.probability = new Float32Array(this.sab, 4 * c * (row + STATE_PER_WINDOW), c);
    this.nextState = new Float32Array(this.sab, 4 * c * (row + STATE_PER_WINDOW + 1), c * STATE_PER_WINDOW);
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

  buffers(windows: number): BatchBuffers {
    if (windows > this.slab.capacity) this.slab = new Slab(grownCapacity(this.slab.capacity, windows), this.slab.gen + 1);
    return this.slab;
  }

  run(wide: number, narrow: number): Promise<void> {
    // Not async: one batch every few ms, each without an extra promise layer.
    if (this.closed) return Promise.reject(new Error('SileroVad is closed'));
    if (this.isReady) return this.submit(this.thread!, wide, narrow);
    return this.start().then((thread) => this.submit(thread, wide, narrow));
  }

  /** Hand the batch (both its runs) to the worker, which checks its sizes. */
  private submit(thread: Thread, wide: number, narrow: number): Promise<void> {
    if (this.closed) return Promise.reject(new Error('SileroVad is closed'));
    if (this.inFlight) return Promise.reject(new Error('WorkerBackend runs one batch at a time'));
    // It may have ended between its 'ready' and now (nobody would fail the batch later).
    if (thread.lost) return Promise.reject(thread.lost);
    const slab = this.slab;
    if (wide + narrow > slab.capacity) {
      return Promise.reject(new RangeError(`batch of ${wide + narrow} does not fit the buffers (call buffers() first)`));
    }
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
      ctl[CTL.WIDE] = wide;
      ctl[CTL.NARROW] = narrow;
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
