/**
 * The shared memory one denoiser batch travels in, between the event-loop thread and the
 * denoiser worker (./denoise-worker.ts, ./denoise-worker-thread.ts): per frame a header of
 * HEADER_INTS int32 fields (the H_* offsets), then all frames' samples back to back (int16).
 *
 * The parent writes each frame's stream id, sample count, flags and zeros-before, and its input
 * samples; the worker overwrites the samples with the denoised ones and sets the status, and,
 * for a stream whose VAD it runs, the VAD's status and probability. The stream flags (the
 * stream's options, the same in each of its frames) are read when the worker first sees a stream
 * id, so a replacement worker recreates every stream in its own mode from its next frame; they
 * also give the rate of the frame's samples: 16 kHz, or 8 kHz with FLAG_NARROWBAND (a 20 ms frame
 * is 320 samples or 160). The entry flags (ENTRY_*) say what to do with this one frame. One batch
 * at a time, so one slab, replaced (larger) when a batch does not fit; the new one travels with
 * the next run message.
 */
/** Stream id. */
export const H_ID = 0;
/** Samples in the frame (at the stream's rate); an ENTRY_SILENT frame has none in the slab. */
export const H_COUNT = 1;
/** Written by the worker: STATUS_OK or STATUS_FAILED (denoising). */
export const H_STATUS = 2;
/** Stream flags (FLAG_*) and entry flags (ENTRY_*). */
export const H_FLAGS = 3;
/**
 * VAD streams: digital silence the VAD is fed before this frame, in samples at the stream's rate:
 * silent frames the parent answered itself (with probability 0) because the worker had said the
 * VAD's silence gate was closed (VAD_QUIET), and more silence cannot open it.
 */
export const H_ZEROS_BEFORE = 4;
/** Written by the worker: VAD_NONE, VAD_OK or VAD_QUIET. */
export const H_VAD = 5;
/** Written by the worker with VAD_OK/VAD_QUIET: the probability, as float32 (Slab.probability). */
export const H_PROBABILITY = 6;
export const HEADER_INTS = 7;

export const STATUS_OK = 0;
export const STATUS_FAILED = 1;

/** No VAD result for this frame: the stream has none in the worker, or it failed. */
export const VAD_NONE = 0;
/** The frame's VAD probability is in H_PROBABILITY (the latest complete window's, as SileroStream.push). */
export const VAD_OK = 1;
/** As VAD_OK, and the VAD's silence gate is closed after it. */
export const VAD_QUIET = 2;

/** Stream flag: created with `{ narrowband: true }`; its frames are 8 kHz. */
export const FLAG_NARROWBAND = 1;
/** Stream flag: created with `{ vad: true }`; the worker runs its VAD on the denoised frames. */
export const FLAG_VAD = 2;
/**
 * Entry flag: digital silence (the parent's gate skipped the frame): nothing in the slab, the
 * denoiser is not run (its state does not see the frame), the VAD is fed H_COUNT zeros.
 */
export const ENTRY_SILENT = 4;
/** Entry flag: denoise the frame, but keep it from the VAD (the gate's prime frame). */
export const ENTRY_NO_VAD = 8;

export class Slab {
  readonly header: Int32Array;
  /** The header as float32: the VAD's probability at H_PROBABILITY of each frame. */
  readonly headerFloat: Float32Array;
  readonly samples: Int16Array;

  private constructor(
    readonly sab: SharedArrayBuffer,
    readonly entries: number,
    readonly sampleCapacity: number,
  ) {
    this.header = new Int32Array(sab, 0, entries * HEADER_INTS);
    this.headerFloat = new Float32Array(sab, 0, entries * HEADER_INTS);
    this.samples = new Int16Array(sab, entries * HEADER_INTS * 4, sampleCapacity);
  }

  static create(entries: number, sampleCapacity: number): Slab {
    return new Slab(new SharedArrayBuffer(entries * HEADER_INTS * 4 + sampleCapacity * 2), entries, sampleCapacity);
  }

  static attach(sab: SharedArrayBuffer, entries: number, sampleCapacity: number): Slab {
    return new Slab(sab, entries, sampleCapacity);
  }
}
