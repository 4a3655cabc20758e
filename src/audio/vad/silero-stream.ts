/**
 * One call's Silero VAD stream (the shared model and its cross-call batching: ./silero.ts): the
 * call's audio cut into the model's windows, its recurrent state and context, and the silence
 * gate that calls a quiet line's windows silence without a run (../silence-gate.ts).
 */
import { SAMPLE_RATE, type AudioFrame } from '../frame.ts';
import { narrowOf } from '../narrowband-frame.ts';
import { Resampler } from '../resample.ts';
import { meanSquareFloat, SilenceGate } from '../silence-gate.ts';
import { NARROWBAND, STATE_PER_WINDOW, WIDEBAND, type SileroRate } from './silero-backend.ts';
import type { SileroVad } from './silero.ts';
import { ulaw } from '../../media/codecs/g711.ts';
import { mulawOf } from '../../media/media-types.ts';

/** Quiet windows (32 ms each) still run after the last loud one before the gate skips any. */
export const VAD_GATE_HANGOVER_WINDOWS = 8;

/** What a push that completes no window resolves to before any window has run. */
const RESOLVED_ZERO: Promise<number> = Promise.resolve(0);
const noop = (): void => {};

/**
 * One call's VAD. Feed 16 kHz frames of any length (20 ms in practice); windows of 512 samples
 * (narrowband: the frames at 8 kHz, windows of 256) are cut internally, so a 20 ms frame
 * completes zero or one window. A narrowband stream also takes 8 kHz frames as they are (the
 * cascade's listener gives it those on G.711 calls), and reads a 16 kHz frame's 8 kHz samples
 * where it carries them (see narrowSamples).
 *
 * Allocation-light by design (it runs for every call every 20 ms): a push that completes no
 * window returns a promise already settled to the current probability (made once per value), and
 * one that does costs a single new promise; pushThen() costs none either way; samples are
 * written straight into the window buffer and the frame (narrowband: the decimator's reused
 * output) is held, not copied, while its window runs.
 */
export class SileroStream {
  /** The model's rate for this stream. */
  private readonly rate: SileroRate;
  /** Context + window, filled in place and never reallocated. @internal */
  readonly input: Float32Array;
  /** Recurrent state [2, 1, 128], updated after every window. @internal */
  readonly state = new Float32Array(STATE_PER_WINDOW);
  /**
   * Narrowband only: 16 → 8 kHz, this stream's own, so its filter history carries across frames.
   * It reads the frame by index, so a frame viewing a shared slab (copySamples) reads correctly.
   */
  private readonly decimator: Resampler | undefined;
  private readonly gate: SilenceGate;
  /** Narrowband only: a PCMU frame's μ-law bytes, expanded (see narrowSamples). */
  private expanded = new Int16Array(0);
  /** Samples of the current window collected so far (written at input[context + fill]). */
  private fill = 0;
  private busy = false;
  private lastProbability = 0;
  private windowCount = 0;
  /** A promise settled to `settledValue`: what a push that completes no window returns. */
  private settled = RESOLVED_ZERO;
  private settledValue = 0;
  /** The probability of the window just run, until windowDone takes it. @internal used by SileroVad */
  delivered = 0;
  /** While busy: the frame being consumed, the next sample to take, and where the answer goes. */
  private samples: Int16Array | undefined;
  private at = 0;
  private resolve: (probability: number) => void = noop;
  private reject: (error: Error) => void = noop;
  /** The executor of push()'s promise: the answer goes to its resolvers, and the window is queued. */
  private readonly capture = (resolve: (probability: number) => void, reject: (error: Error) => void): void => {
    this.resolve = resolve;
    this.reject = reject;
    this.vad.enqueue(this);
  };

  constructor(
    private readonly vad: SileroVad,
    /** Runs the model at 8 kHz (see SileroVad.createStream). */
    readonly narrowband: boolean,
  ) {
    this.rate = narrowband ? NARROWBAND : WIDEBAND;
    this.input = new Float32Array(this.rate.input);
    this.decimator = narrowband ? new Resampler(SAMPLE_RATE, NARROWBAND.sampleRate) : undefined;
    this.gate = new SilenceGate(VAD_GATE_HANGOVER_WINDOWS, vad.silenceGateDbfs);
  }

  /** Probability of the most recent complete window (0 before the first). */
  get probability(): number {
    return this.lastProbability;
  }

  /**
   * Digital silence from here on would be called silence without a run, window after window, so
   * the probability stays 0: the gate is closed, and the window being filled, completed with
   * zeros, would be skipped too.
   */
  get quiet(): boolean {
    if (this.fill === 0) return this.gate.closed;
    // As nextWindow() would measure the window completed with zeros: the same sum, over the whole window.
    const from = this.rate.context;
    const to = from + this.fill;
    let sum = 0;
    for (let i = from; i < to; i++) sum += this.input[i]! * this.input[i]!;
    return this.gate.wouldSkip(sum / this.rate.window);
  }

  /** Windows decided so far (run, or called silence by the gate); each covers 32 ms. */
  get windows(): number {
    return this.windowCount;
  }

  /**
   * Add a frame; resolves to the speech probability of the latest complete window, which is the
   * previous value when this frame did not complete one. Calls must not overlap: the recurrent
   * state makes the order of windows matter, so an overlapping call is a caller bug and rejects.
   */
  push(frame: AudioFrame): Promise<number> {
    let window: boolean;
    try {
      window = this.take(frame);
    } catch (e) {
      return Promise.reject(e);
    }
    if (!window) {
      // A push that completes no window answers with the probability it already has.
      if (this.settledValue !== this.lastProbability) {
        this.settled = Promise.resolve(this.lastProbability);
        this.settledValue = this.lastProbability;
      }
      return this.settled;
    }
    return new Promise<number>(this.capture);
  }

  /**
   * As push(), without a promise: `done` gets the probability (at once, inside this call, when
   * the frame completes no window), `fail` the error. For a caller that feeds every frame of a
   * call and wants nothing allocated per frame (the cascade's listener).
   */
  pushThen(frame: AudioFrame, done: (probability: number) => void, fail: (error: Error) => void): void {
    let window: boolean;
    try {
      window = this.take(frame);
    } catch (e) {
      return fail(e as Error);
    }
    if (!window) return done(this.lastProbability);
    this.resolve = done;
    this.reject = fail;
    this.vad.enqueue(this);
  }

  /**
   * Holds `frame` and fills the window from it; true when a window needs a run (the stream is
   * then busy, and the caller sets the answer's callbacks and enqueues it). Throws on a bad
   * frame or an overlapping push.
   */
  private take(frame: AudioFrame): boolean {
    // 16 kHz frames; a narrowband stream also takes 8 kHz ones as they are.
    const rate = frame.sampleRate;
    if (rate !== SAMPLE_RATE && !(this.narrowband && rate === NARROWBAND.sampleRate)) {
      const accepted = this.narrowband ? `${SAMPLE_RATE} or ${NARROWBAND.sampleRate}` : `${SAMPLE_RATE}`;
      throw new RangeError(`Silero VAD needs ${accepted} Hz frames, got ${rate} Hz (resample at the edge)`);
    }
    if (this.busy) throw new Error('SileroStream.push called again before the previous push resolved');
    this.samples = !this.narrowband || rate === NARROWBAND.sampleRate ? frame.samples : this.narrowSamples(frame);
    this.at = 0;
    if (!this.nextWindow()) {
      this.samples = undefined;
      return false;
    }
    this.busy = true;
    return true;
  }

  /**
   * A narrowband stream's 8 kHz samples of a 16 kHz `frame`: a G.711 frame's own (NarrowbandFrame,
   * src/audio/narrowband-frame.ts); else, on a PCMU call, the frame's μ-law bytes
   * (PassThroughFrame: the packet it was decoded from) expanded into a buffer of this stream's,
   * a table lookup a sample; else `samples` decimated. Each stays valid until this stream's next
   * push: past this one's end. (A stream whose frames switch between kinds, as after a
   * re-INVITE to a wideband codec, sees a transient of about 2 ms, the resamplers' delay.)
   */
  private narrowSamples(frame: AudioFrame): Int16Array {
    const narrow = narrowOf(frame);
    if (narrow) return narrow;
    const mulaw = mulawOf(frame);
    if (mulaw && mulaw.length * 2 === frame.samples.length) {
      if (this.expanded.length !== mulaw.length) this.expanded = new Int16Array(mulaw.length);
      return ulaw.decodeInto(mulaw, this.expanded);
    }
    return this.decimator!.processShared(frame.samples);
  }

  /**
   * Copy samples of the held frame into the window until it is full (true: it needs a run) or
   * the frame is used up (false). A window left full by a failed run goes again first.
   */
  private consume(): boolean {
    const samples = this.samples!;
    const input = this.input;
    const { window, context } = this.rate;
    const length = samples.length;
    let at = this.at;
    let fill = this.fill;
    while (at < length) {
      const take = Math.min(window - fill, length - at);
      const base = context + fill;
      for (let i = 0; i < take; i++) input[base + i] = samples[at + i]! / 32768;
      fill += take;
      at += take;
      if (fill === window) break;
    }
    this.fill = fill;
    this.at = at;
    return fill === window;
  }

  /**
   * Fill the window from the held frame, calling silence (probability 0, no run) each full window
   * the gate closes on; true when a full window needs a run.
   */
  private nextWindow(): boolean {
    const { context, input } = this.rate;
    while (this.consume()) {
      if (!this.gate.push(meanSquareFloat(this.input, context, input))) return true;
      this.lastProbability = 0;
      this.endWindow();
      this.vad.windowSkipped();
    }
    return false;
  }

  /** The current window is decided (run or gated): its tail becomes the next one's context. */
  private endWindow(): void {
    this.input.copyWithin(0, this.rate.window, this.rate.input);
    this.fill = 0;
    this.windowCount++;
  }

  /** The window ran (`state` already holds the next state). @internal used by SileroVad */
  windowDone(probability: number): void {
    this.lastProbability = probability;
    this.endWindow();
    // A frame longer than the rest of the window may hold further windows.
    if (this.at < this.samples!.length && this.nextWindow()) {
      this.vad.enqueue(this);
      return;
    }
    const resolve = this.resolve;
    this.release();
    resolve(this.lastProbability);
  }

  /**
   * The window's run failed: the push rejects, the rest of its frame is dropped, and the window
   * stays full (state untouched) so the next push runs it again. @internal used by SileroVad
   */
  windowFailed(error: Error): void {
    const reject = this.reject;
    this.release();
    reject(error);
  }

  private release(): void {
    this.samples = undefined;
    this.busy = false;
    this.resolve = noop;
    this.reject = noop;
  }

  /** Forget everything heard (e.g. reuse after a long hold); the session stays shared. */
  reset(): void {
    if (this.busy) throw new Error('SileroStream.reset during a push');
    this.input.fill(0);
    this.state.fill(0);
    this.decimator?.reset();
    this.gate.reset();
    this.fill = 0;
    this.lastProbability = 0;
    this.windowCount = 0;
  }
}
