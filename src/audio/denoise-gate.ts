/**
 * The denoiser's silence gate (./silence-gate.ts): after `DENOISE_GATE_HANGOVER_FRAMES` caller
 * frames below −60 dBFS, further quiet frames are not denoised but come out as digital silence,
 * which is what suppression leaves of them anyway; the backend (in its worker or in this thread)
 * does no work for them. The first loud frame opens the gate: the backend is first given the last
 * skipped frame, whose output is dropped, so the history it carries into the loud frame (overlap,
 * filter state, the frame's first `delayMs` of output) is the line's real audio, not audio from
 * before the silence.
 *
 * Works over either kind of stream: in-thread (a frame back at once) or worker-backed (a promise,
 * or a callback). `process()` is for a caller that hands over one frame at a time;
 * `processThen()` also takes frames before the earlier ones are answered, and answers in order.
 *
 * Over a stream whose worker also runs the call's VAD (`VadDenoiseStream`, a WorkerDenoiseStream
 * created with `{ vad: true }`), processThen's answers carry the VAD's probability. The VAD must
 * hear every frame, so a skipped frame still goes to the worker, as silence (no samples, not
 * denoised), unless the worker has said that silence cannot wake the VAD (`vadQuiet`) and no frame
 * is out: then the answer is the silent frame with probability 0 at once, and the stream counts the
 * silence for the VAD to hear before its next frame. The prime frame is kept from the VAD, which
 * heard it as the silence it was answered with.
 */
import { zeroSamples, type AudioFrame } from './frame.ts';
import { meanSquareInt16, SILENCE_GATE_DBFS, SilenceGate } from './silence-gate.ts';

/**
 * Quiet 20 ms frames still denoised after the last loud one before the gate skips any: 1 s, the
 * memory of the suppressor's noise tracker (its ~1 s minimum window). By the time the gate closes,
 * the noise estimate has learnt the quiet line, so what the backend carries into the next
 * utterance is what it would have after running through the whole silence. Measured against the
 * clean speech on fixtures over line hiss (test/unit/denoise/gate.test.ts), the gated output is
 * as close to it as the ungated one or closer; with a 200 ms hangover it was up to 2 dB worse.
 */
export const DENOISE_GATE_HANGOVER_FRAMES = 50;

/** A call's denoiser stream of either kind: in-thread (a frame back at once) or worker-backed. */
export interface DenoiseStreamLike {
  process(frame: AudioFrame): AudioFrame | Promise<AudioFrame>;
  /**
   * `process()` by callback (./denoise.ts, AsyncDenoiserStream); `done` may run inside it. Frames
   * may be given before earlier ones are answered: they are answered in the order given. A stream
   * that runs the call's VAD too gives `done` the frame's probability (none: ask the call's own VAD).
   */
  processThen?(frame: AudioFrame, done: DenoisedThen, fail: (error: Error) => void): void;
  close?(): void;
}

/** A denoised frame, and its VAD probability where the denoiser's worker ran the call's VAD on it. */
export type DenoisedThen = (frame: AudioFrame, probability?: number) => void;

/** A worker-backed stream that runs the call's VAD too (src/audio/denoise-worker-stream.ts, WorkerDenoiseStream). */
export interface VadDenoiseStream extends DenoiseStreamLike {
  readonly vad: boolean;
  /** Silence cannot wake the VAD: a silent frame's probability is 0 without asking. */
  readonly vadQuiet: boolean;
  processThen(frame: AudioFrame, done: DenoisedThen, fail: (error: Error) => void): void;
  /** Denoised, kept from the VAD. */
  primeThen(frame: AudioFrame, done: DenoisedThen, fail: (error: Error) => void): void;
  /** Not denoised (`frame` is silence, answered as itself), heard by the VAD. */
  silenceThen(frame: AudioFrame, done: DenoisedThen, fail: (error: Error) => void): void;
  /** Silence answered here, for the VAD to hear before the next frame. */
  skipSilence(samples: number): void;
}

const isVadStream = (s: DenoiseStreamLike): s is VadDenoiseStream => (s as Partial<VadDenoiseStream>).vad === true;

const ignore = (): void => {};

/** A frame given to processThen, until it is answered. */
interface Answer {
  out: AudioFrame | undefined;
  probability: number | undefined;
  /** Still with the backend. */
  waiting: boolean;
  done: DenoisedThen;
  fail: (error: Error) => void;
}
const isPromise = (x: AudioFrame | Promise<AudioFrame>): x is Promise<AudioFrame> => typeof (x as Promise<AudioFrame>).then === 'function';

export class GatedDenoiseStream implements DenoiseStreamLike {
  private readonly gate: SilenceGate;
  /** The last frame given: while the gate is closed, the one to prime the backend with. */
  private previous: AudioFrame | undefined;
  private skippedFrames = 0;
  /**
   * Frames given by processThen and not yet answered, oldest first: those with the backend
   * (`waiting`) and silent ones behind them. The head is always waiting.
   */
  private readonly answers: Answer[] = [];
  /** The inner stream, when it runs the call's VAD too. */
  private readonly vad: VadDenoiseStream | undefined;

  constructor(
    private readonly inner: DenoiseStreamLike,
    dbfs = SILENCE_GATE_DBFS,
  ) {
    this.gate = new SilenceGate(DENOISE_GATE_HANGOVER_FRAMES, dbfs);
    this.vad = isVadStream(inner) ? inner : undefined;
  }

  /** Frames the gate answered with silence, not run through the backend. */
  get skipped(): number {
    return this.skippedFrames;
  }

  /**
   * Over a stream that runs the call's VAD, by processThen (a promise), so the VAD still hears
   * every frame, skipped ones as silence; the probability is processThen's to give.
   */
  process(frame: AudioFrame): AudioFrame | Promise<AudioFrame> {
    if (this.vad) return new Promise((resolve, reject) => this.processThen(frame, resolve, reject));
    return this.gated(frame) ?? this.inner.process(frame);
  }

  /**
   * Always available: by the inner stream's `processThen` when it has one, else by its `process`.
   * Several frames may be given before the first is answered (the cascade's listener keeps a few
   * in flight); they are answered in the order given, a silent frame after those still with the
   * backend, even though the gate decided it at once.
   */
  processThen(frame: AudioFrame, done: DenoisedThen, fail: (error: Error) => void): void {
    const silent = this.gated(frame);
    const vad = this.vad;
    if (silent && vad) {
      if (this.answers.length === 0 && vad.vadQuiet) {
        vad.skipSilence(silent.samples.length);
        return done(silent, 0);
      }
      this.answers.push({ out: undefined, probability: undefined, waiting: true, done, fail });
      return vad.silenceThen(silent, this.answered, this.refused);
    }
    if (silent) {
      if (this.answers.length === 0) return done(silent);
      this.answers.push({ out: silent, probability: undefined, waiting: false, done, fail });
      return;
    }
    this.answers.push({ out: undefined, probability: undefined, waiting: true, done, fail });
    this.toBackend(frame);
  }

  /**
   * Gives the backend a frame whose answer is the oldest still waiting in `answers` (the backend
   * answers in order).
   */
  private toBackend(frame: AudioFrame): void {
    const inner = this.inner;
    if (inner.processThen) return inner.processThen(frame, this.answered, this.refused);
    let out: AudioFrame | Promise<AudioFrame>;
    try {
      out = inner.process(frame);
    } catch (error) {
      return this.refused(error as Error);
    }
    if (isPromise(out)) out.then(this.answered, this.refused);
    else this.answered(out);
  }

  private readonly answered = (out: AudioFrame, probability?: number): void => {
    const head = this.answers[0]!;
    head.out = out;
    head.probability = probability;
    head.waiting = false;
    this.drain();
  };

  private readonly refused = (error: Error): void => {
    const head = this.answers.shift()!;
    head.fail(error);
    this.drain();
  };

  /** Answers the frames at the head of the line whose output is ready. */
  private drain(): void {
    const answers = this.answers;
    while (answers.length > 0 && !answers[0]!.waiting) {
      const a = answers.shift()!;
      a.done(a.out!, a.probability);
    }
  }

  /**
   * Digital silence for a frame the gate skips; undefined when the backend must run (primed first
   * with the skipped frame before it when the gate has just opened).
   */
  private gated(frame: AudioFrame): AudioFrame | undefined {
    const wasClosed = this.gate.closed;
    const previous = this.previous;
    this.previous = frame;
    if (this.gate.push(meanSquareInt16(frame.samples))) {
      this.skippedFrames++;
      return { samples: zeroSamples(frame.samples.length), sampleRate: frame.sampleRate };
    }
    if (wasClosed && previous) this.prime(previous);
    return undefined;
  }

  /**
   * Once per utterance, not per frame: the backend is given the skipped frame before the loud
   * one, and its output is dropped, a failure with it (a frame it refuses, say at a rate the call
   * has since left, must not cost the loud frame its turn).
   */
  private prime(previous: AudioFrame): void {
    this.answers.push({ out: undefined, probability: undefined, waiting: true, done: ignore, fail: ignore });
    if (this.vad) this.vad.primeThen(previous, this.answered, this.refused);
    else this.toBackend(previous);
  }

  close(): void {
    this.inner.close?.();
  }
}
