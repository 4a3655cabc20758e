/**
 * The shared memory one denoiser batch travels in, between the event-loop thread and the
 * denoiser worker (./denoise-worker.ts, ./denoise-worker-thread.ts): per frame a header of
 * [stream id, sample count, status, stream flags] (int32), then all frames' samples back to back
 * (int16). The parent writes ids, counts, flags and input samples; the worker overwrites the
 * samples with the denoised ones and sets the status. The flags (the stream's options, the same
 * in each of its frames) are read when the worker first sees a stream id, so a replacement
 * worker recreates every stream in its own mode from its next frame; they also give the rate of
 * the frame's samples: 16 kHz, or 8 kHz with FLAG_NARROWBAND (a 20 ms frame is 320 samples or
 * 160). One batch at a time, so one slab, replaced (larger) when a batch does not fit; the new one
 * travels with the next run message.
 */
export const HEADER_INTS = 4;
export const STATUS_OK = 0;
export const STATUS_FAILED = 1;
/** Stream flag: created with `{ narrowband: true }`; its frames are 8 kHz. */
export const FLAG_NARROWBAND = 1;

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
