/**
 * The callers' VAD inside the denoiser's worker thread (./denoise-worker-thread.ts): each frame a
 * VAD stream's call sends is denoised there, so its VAD runs there too, on the denoised samples,
 * and the probability travels back in the same slab (./denoise-slab.ts). That spares the
 * event-loop thread the VAD's own round trip per frame (the windows cut, copied into a batch,
 * handed to the Silero thread, settled back) and the Silero thread its wake-ups.
 *
 * The same SileroVad and SileroStream as on the event loop (./vad/silero.ts), with inference on
 * this thread (`thread: 'inline'`), so a stream's probabilities are those the event loop's VAD
 * would give for the same frames. A batch holds up to a few frames of each call; the recurrent
 * state makes a stream's windows serial, so each stream is driven through its frames in order
 * and the windows of all streams waiting at the same point run as one ONNX batch (a frame that
 * completes no window, or whose window the silence gate skips, answers at once).
 */
import { SileroVad, type SileroStream } from './vad/silero.ts';
import {
  ENTRY_NO_VAD,
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
  STATUS_OK,
  VAD_NONE,
  VAD_OK,
  VAD_QUIET,
  type Slab,
} from './denoise-slab.ts';

/** Digital silence is fed to the VAD at most this many samples at a time (a frame view of ZEROS). */
const ZERO_CHUNK = 4096;
const ZEROS = new Int16Array(ZERO_CHUNK);

export interface WorkerVadStats {
  batches: number;
  runs: number;
  windows: number;
  skipped: number;
}

/**
 * One stream's frames of the batch, in order: each item is a run of `zeros` samples of silence,
 * or (zeros 0) the samples of a frame at `at` in the slab; `entry` is the frame whose result the
 * item gives (-1: none, silence before a frame).
 */
class Cursor {
  readonly zeros: number[] = [];
  readonly at: number[] = [];
  readonly lengths: number[] = [];
  readonly entries: number[] = [];
  next = 0;
  /** The batch this cursor was last made active in. */
  batch = 0;
  private entry = -1;
  private waiting = false;
  private inside = false;
  private slab!: Slab;
  private finished!: () => void;

  constructor(
    readonly stream: SileroStream,
    readonly sampleRate: number,
  ) {}

  /** Queue one item (see the class). */
  add(zeros: number, at: number, length: number, entry: number): void {
    this.zeros.push(zeros);
    this.at.push(at);
    this.lengths.push(length);
    this.entries.push(entry);
  }

  get size(): number {
    return this.entries.length;
  }

  /** Push the items in order; `finished` once the last is answered (maybe at once, inside this call). */
  start(slab: Slab, finished: () => void): void {
    this.slab = slab;
    this.finished = finished;
    this.next = 0;
    this.drive();
  }

  private drive(): void {
    while (this.next < this.entries.length) {
      const k = this.next++;
      const zeros = this.zeros[k]!;
      const samples = zeros > 0 ? ZEROS.subarray(0, zeros) : this.slab.samples.subarray(this.at[k]!, this.at[k]! + this.lengths[k]!);
      this.entry = this.entries[k]!;
      this.waiting = true;
      this.inside = true;
      this.stream.pushThen({ samples, sampleRate: this.sampleRate }, this.done, this.failed);
      this.inside = false;
      // Answered later, from the VAD's batch: drive() goes on from there.
      if (this.waiting) return;
    }
    this.zeros.length = this.at.length = this.lengths.length = this.entries.length = 0;
    this.finished();
  }

  private readonly done = (probability: number): void => {
    const e = this.entry;
    if (e >= 0) {
      const h = e * HEADER_INTS;
      this.slab.headerFloat[h + H_PROBABILITY] = probability;
      this.slab.header[h + H_VAD] = this.stream.quiet ? VAD_QUIET : VAD_OK;
    }
    this.answered();
  };

  /** A failed run: the frame gets no probability (the parent's VAD stands in); the next push runs the window again. */
  private readonly failed = (): void => {
    if (this.entry >= 0) this.slab.header[this.entry * HEADER_INTS + H_VAD] = VAD_NONE;
    this.answered();
  };

  private answered(): void {
    this.waiting = false;
    if (!this.inside) this.drive();
  }
}

export class WorkerVad {
  private readonly cursors = new Map<number, Cursor>();
  /** Cursors with items in the batch being run. */
  private readonly active: Cursor[] = [];
  private outstanding = 0;
  private batches = 0;
  private resolveBatch: () => void = () => {};
  private readonly cursorFinished = (): void => {
    if (--this.outstanding === 0) this.resolveBatch();
  };

  private constructor(private readonly vad: SileroVad) {}

  static async load(modelPath?: string): Promise<WorkerVad> {
    // No media clock on this thread: batches go on the next turn, results settle all at once.
    return new WorkerVad(await SileroVad.load({ thread: 'inline', batchIntervalMs: 0, settlePerTurn: Infinity, ...(modelPath ? { modelPath } : {}) }));
  }

  get stats(): WorkerVadStats {
    return { ...this.vad.stats };
  }

  /**
   * The VAD over the batch's frames of VAD streams (FLAG_VAD), after they are denoised: for each,
   * its zeros-before, then its samples (the denoised ones; zeros for ENTRY_SILENT; none for
   * ENTRY_NO_VAD or a frame the denoiser failed on). Writes H_VAD and H_PROBABILITY of each.
   * `offsets[i]`: where frame i's samples start in the slab. Undefined when every frame was
   * answered at once; else a promise of the last answer.
   */
  run(slab: Slab, count: number, offsets: Int32Array): Promise<void> | undefined {
    const { header } = slab;
    const active = this.active;
    const batch = ++this.batches;
    for (let i = 0; i < count; i++) {
      const h = i * HEADER_INTS;
      const flags = header[h + H_FLAGS]!;
      header[h + H_VAD] = VAD_NONE;
      if (!(flags & FLAG_VAD)) continue;
      const id = header[h + H_ID]!;
      let cursor = this.cursors.get(id);
      if (!cursor) {
        const narrowband = (flags & FLAG_NARROWBAND) !== 0;
        cursor = new Cursor(this.vad.createStream({ narrowband }), narrowband ? 8000 : 16000);
        this.cursors.set(id, cursor);
      }
      if (cursor.batch !== batch) {
        cursor.batch = batch;
        active.push(cursor);
      }
      for (let z = header[h + H_ZEROS_BEFORE]!; z > 0; z -= ZERO_CHUNK) cursor.add(Math.min(z, ZERO_CHUNK), 0, 0, -1);
      const length = header[h + H_COUNT]!;
      if (flags & ENTRY_SILENT) {
        for (let z = length; z > 0; z -= ZERO_CHUNK) cursor.add(Math.min(z, ZERO_CHUNK), 0, 0, z <= ZERO_CHUNK ? i : -1);
      } else if (!(flags & ENTRY_NO_VAD) && header[h + H_STATUS] === STATUS_OK) {
        cursor.add(0, offsets[i]!, length, i);
      }
    }
    if (active.length === 0) return undefined;
    this.outstanding = active.length;
    const done = new Promise<void>((resolve) => (this.resolveBatch = resolve));
    for (const cursor of active) cursor.start(slab, this.cursorFinished);
    active.length = 0;
    return this.outstanding === 0 ? undefined : done;
  }

  /** Forget a stream (its call ended). */
  close(id: number): void {
    this.cursors.delete(id);
  }

  closeAll(): Promise<void> {
    this.cursors.clear();
    return this.vad.close();
  }
}
