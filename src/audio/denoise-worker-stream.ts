/**
 * One call's stream of the worker-backed denoiser (./denoise-worker.ts, which batches every
 * stream's frames to its worker thread and hands them back): the frame checks before a frame is
 * queued, the order of answers, the pass-through of a frame the worker could not run, and, for a
 * stream whose worker runs the call's VAD too, how silence reaches that VAD.
 */
import type { AudioFrame } from './frame.ts';
import { NARROWBAND_RATE } from './denoise-spectral.ts';
import type { AsyncDenoiserStream } from './denoise.ts';
import type { DenoisedThen } from './denoise-gate.ts';
import { ENTRY_NO_VAD, ENTRY_SILENT, FLAG_VAD, VAD_NONE, VAD_QUIET } from './denoise-slab.ts';

/** Both backends take frames in whole 10 ms steps, at the stream's rate (160 samples, narrowband 80). */
const QUANTUM_MS = 10;

/** A frame given to a stream, until the call hears of it. @internal */
export interface Pending {
  stream: WorkerDenoiseStream;
  frame: AudioFrame;
  /** The stream's flags and this frame's (ENTRY_SILENT, ENTRY_NO_VAD). */
  flags: number;
  /** Silence the VAD hears before this frame (H_ZEROS_BEFORE). */
  zerosBefore: number;
  /** The denoised samples, once the batch is back; none: the frame falls back to pass-through. */
  out?: Int16Array;
  /** The worker's H_VAD for the frame, and its probability. */
  vad: number;
  probability: number;
  resolve: DenoisedThen;
  reject: (error: Error) => void;
}

/** What a stream needs of its denoiser. */
export interface StreamOwner {
  /** Queue the frame for the next batch. */
  enqueue(p: Pending): void;
  /** Free the stream's state in the worker, after the frames already given. */
  release(streamId: number): void;
}

/**
 * One call's denoiser in the worker: `process()` resolves with the denoised frame (same rate and
 * length, `delayMs` later in the audio). Frames may be given before earlier ones resolved; they
 * resolve in order. `close()` frees the state in the worker.
 *
 * A VAD stream (`vad`: created with `{ vad: true }` on a denoiser whose worker runs the VAD) also
 * hands each frame's VAD probability to processThen's `done`: that of the call's VAD stream in the
 * worker, fed the denoised frames in order. The VAD hears every frame of the call, so frames the
 * caller's silence gate skips (./denoise-gate.ts) still go, as `silenceThen` (no samples, no
 * denoising), unless the worker has said that silence cannot wake the VAD (`vadQuiet`): then the
 * gate answers them itself (probability 0) and `skipSilence` counts them, for the worker's VAD to
 * hear before the next frame. A frame whose VAD did not run (a worker lost or starting, a failed
 * run) comes without a probability; its caller's own VAD stands in.
 */
export class WorkerDenoiseStream implements AsyncDenoiserStream {
  private closed = false;
  /** Silence since the last frame sent, in samples (skipSilence), for the VAD to hear first. */
  private zeros = 0;
  private quiet = false;
  /** The input before the frame being settled (frames are immutable once handed on: no copy). */
  private previous: Int16Array | undefined;
  /**
   * `delayMs` in samples at the stream's rate: what a pass-through frame is delayed by. Wideband
   * 160 (spectral) or 192 (RNNoise); narrowband 80 (spectral) or 112 (RNNoise).
   */
  private readonly delaySamples: number;
  /** 10 ms at the stream's rate: 160, narrowband 80. */
  private readonly quantum: number;

  constructor(
    private readonly owner: StreamOwner,
    /** @internal */ readonly id: number,
    /** @internal the stream's options as slab flags (FLAG_NARROWBAND) */ readonly flags: number,
    /** The rate of the frames this stream takes and returns: 16000, narrowband 8000. */
    readonly sampleRate: number,
    readonly delayMs: number,
  ) {
    this.quantum = (sampleRate * QUANTUM_MS) / 1000;
    const delay = (delayMs * sampleRate) / 1000;
    // Every backend's delay is a whole number of samples at the rate it runs at; a fraction here
    // would mean a pass-through frame could not line up with the denoised ones around it.
    if (!Number.isInteger(delay)) throw new Error(`denoiser delay ${delayMs} ms is not a whole number of samples at ${sampleRate} Hz`);
    this.delaySamples = delay;
  }

  /** The worker runs this stream's VAD: frames come back with its probability (see the class). */
  get vad(): boolean {
    return (this.flags & FLAG_VAD) !== 0;
  }

  /**
   * The VAD's answer for the last frame back was "quiet": its silence gate is closed and digital
   * silence cannot open it, so a silent frame's probability is 0 without asking (see the class).
   */
  get vadQuiet(): boolean {
    return this.quiet;
  }

  process(frame: AudioFrame): Promise<AudioFrame> {
    return new Promise((resolve, reject) => this.processThen(frame, resolve, reject));
  }

  processThen(frame: AudioFrame, done: DenoisedThen, fail: (error: Error) => void): void {
    this.send(frame, this.flags, done, fail);
  }

  /** As processThen, but the frame is kept from the VAD (the silence gate's prime frame). */
  primeThen(frame: AudioFrame, done: DenoisedThen, fail: (error: Error) => void): void {
    this.send(frame, this.flags | ENTRY_NO_VAD, done, fail);
  }

  /**
   * A frame of digital silence the caller's gate skipped (`frame`: its zeros): not denoised, but
   * heard by the VAD; `done` gets `frame` itself back, with the probability.
   */
  silenceThen(frame: AudioFrame, done: DenoisedThen, fail: (error: Error) => void): void {
    this.send(frame, this.flags | ENTRY_SILENT, done, fail);
  }

  /** Silence answered without the worker (vadQuiet), `samples` long: the VAD hears it before the next frame. */
  skipSilence(samples: number): void {
    this.zeros += samples;
  }

  private send(frame: AudioFrame, flags: number, done: DenoisedThen, fail: (error: Error) => void): void {
    if (this.closed) return fail(new Error('WorkerDenoiseStream is closed'));
    const rate = this.sampleRate;
    if (frame.sampleRate !== rate) {
      const mode = rate === NARROWBAND_RATE ? 'narrowband' : 'wideband';
      return fail(new RangeError(`${mode} denoiser stream needs ${rate} Hz frames, got ${frame.sampleRate} Hz`));
    }
    if (frame.samples.length % this.quantum !== 0) {
      return fail(new RangeError(`denoiser frames at ${rate} Hz must be a multiple of ${this.quantum} samples, got ${frame.samples.length}`));
    }
    const zerosBefore = this.zeros;
    this.zeros = 0;
    this.owner.enqueue({ stream: this, frame, flags, zerosBefore, vad: VAD_NONE, probability: 0, resolve: done, reject: fail });
  }

  /** Frees the stream's state in the worker (after any frames already given). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.owner.release(this.id);
  }

  /** The frame is back (or fell back): the call hears of it. @internal */
  settle(p: Pending): void {
    const probability = p.vad === VAD_NONE ? undefined : p.probability;
    if (!(p.flags & ENTRY_NO_VAD)) this.quiet = p.vad === VAD_QUIET;
    // Silence stays silence, whatever became of the worker; it is no input the delay line keeps.
    if (p.flags & ENTRY_SILENT) return p.resolve(p.frame, probability);
    const samples = p.out ?? this.passThrough(p);
    this.previous = p.frame.samples;
    p.resolve({ samples, sampleRate: this.sampleRate }, probability);
  }

  /**
   * The frame as a plain delay line: the input `delaySamples` earlier, so the output stays
   * aligned with denoised frames before and after.
   */
  private passThrough(p: Pending): Int16Array {
    const cur = p.frame.samples;
    const d = this.delaySamples;
    const out = new Int16Array(cur.length);
    const prev = this.previous;
    const head = Math.min(d, cur.length);
    for (let i = 0; i < head; i++) {
      const j = (prev?.length ?? 0) - d + i;
      out[i] = prev && j >= 0 ? prev[j]! : 0;
    }
    if (cur.length > d) out.set(cur.subarray(0, cur.length - d), d);
    return out;
  }
}
