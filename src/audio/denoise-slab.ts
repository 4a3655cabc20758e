/**
 * The shared memory one denoiser batch travels in, between the event-loop thread and the
 * denoiser worker (./denoise-worker.ts, ./denoise-worker-thread.ts): per frame a header of
 * [stream id, sample count, status] (int32), then all frames' samples back to back (int16).
 * The parent writes ids, counts and input samples; the worker overwrites the samples with the
 * denoised ones and sets the status. One batch at a time, so one slab, replaced (larger) when a
 * batch does not fit; the new one travels with the next run message.
 */
export const HEADER_INTS = 3;
export const STATUS_OK = 0;
export const STATUS_FAILED = 1;

export class Slab {
  readonly header: Int32Array;
  readonly samples: Int16Array;

  private constructor(
    readonly sab: SharedArrayBuffer,
    readonly entries: number,
    readonly sampleCapacity: number,
  ) {
    this.header = new Int32Array(sab, 0, entries * HEADER_INTS);
    this.samples = new Int16Array(sab, entries * HEADER_INTS * 4, sampleCapacity);
  }

  static create(entries: number, sampleCapacity: number): Slab {
    return new Slab(new SharedArrayBuffer(entries * HEADER_INTS * 4 + sampleCapacity * 2), entries, sampleCapacity);
  }

  static attach(sab: SharedArrayBuffer, entries: number, sampleCapacity: number): Slab {
    return new Slab(sab, entries, sampleCapacity);
  }
}
