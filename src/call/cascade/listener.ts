/**
 * The caller's side of the pipeline: (denoise) → STT → VAD → speech events. Frames are processed
 * strictly in order: a few may be with the denoiser at once, but STT and the VAD get them one
 * at a time, the next once the VAD has answered for the last, which keeps the detector's
 * timeline exact. While any frame is in flight the listener holds tracked work, which gives a
 * virtual clock driver a clear "idle" point. Frames are piped from the inbound queue (read in
 * the media clock's playout turn) rather than awaited, which costs no promise per frame.
 *
 * The denoiser may answer synchronously (in-thread backends), by callback (`processThen`: the
 * gated stream the engine uses, over the worker-backed one, src/audio/denoise-worker.ts) or with
 * a promise; either way in the order it was given the frames. The engine's worker runs the
 * call's VAD as well and answers each frame with its probability too: such a frame skips the
 * call's own VAD stream (`vad`), which hears only frames that come without one (the worker lost
 * or starting, no denoiser, an in-thread one). After frames it missed it starts afresh (`reset`).
 *
 * Frame times are the call clock at the first frame plus 20 ms per frame: audio time, not
 * arrival time, so a late burst from the jitter buffer cannot bend the VAD's timeline.
 *
 * On a telephone-band call (`narrowband`) the caller's audio is handled at 8 kHz from here on:
 * the denoiser, STT and VAD all take 8 kHz frames, the G.711 frames' own samples
 * (NarrowbandFrame, src/audio/narrowband-frame.ts), so nothing upsamples them only to decimate
 * them again. Other frames on such a call (silence made elsewhere, a codec changed mid-call) are
 * decimated here. The recording still gets the 16 kHz frame.
 */
import { AsyncResource } from 'node:async_hooks';
import type { DenoiseStreamLike } from '../../audio/denoise-gate.ts';
import { FRAME_MS, type AudioFrame } from '../../audio/frame.ts';
import { NarrowbandReader } from '../../audio/narrowband-frame.ts';
import type { SpeechDetector, SpeechEvent } from '../../audio/vad/detector.ts';
import type { RecordingSink } from '../recorder.ts';
import type { WorkTracker } from './work.ts';
import { readThrough, type PipeControl } from '../../media/rtp-session-queue.ts';

/** A call's VAD stream (SileroStream). pushThen() is push() by callback; `done` may run inside it. */
export interface VadStreamLike {
  push(frame: AudioFrame): Promise<number>;
  pushThen(frame: AudioFrame, done: (probability: number) => void, fail: (error: Error) => void): void;
  /** Forget what was heard (state and context), as at the start of a stream; never called during a push. */
  reset?(): void;
}

/**
 * Per-call options of the shared caller-side models. `narrowband`: the call's codec carries only
 * the telephone band (G.711, see `isNarrowbandCodec`), so the VAD and the denoiser run at 8 kHz
 * and are given 8 kHz frames, for about half their CPU.
 */
export interface CallerAudioOptions {
  narrowband?: boolean;
}

/** The shared Silero model (SileroVad): one stream per call. */
export interface VadFactory {
  createStream(options?: CallerAudioOptions): VadStreamLike;
}

/**
 * The shared denoiser backend: one stream per call. `vad`: run the call's VAD with the denoiser
 * where it can (src/audio/denoise-worker.ts), answering each frame with its probability.
 */
export interface DenoiserFactory {
  createStream(options?: CallerAudioOptions & { vad?: boolean }): DenoiseStreamLike;
}

export interface ListenerOptions {
  inbound: AsyncIterable<AudioFrame>;
  vad: VadStreamLike;
  detector: SpeechDetector;
  denoise?: DenoiseStreamLike | undefined;
  /**
   * The call is telephone band: `denoise`, `stt` and `vad` take 8 kHz frames (narrowband streams,
   * an STT stream opened at 8 kHz). Default false: 16 kHz frames.
   */
  narrowband?: boolean;
  /** Where caller audio goes for transcription (the call's STT stream, through SttReader). */
  stt: { write(frame: AudioFrame): void };
  recorder?: RecordingSink | undefined;
  work: WorkTracker;
  /** ms since answer. */
  now: () => number;
  signal: AbortSignal;
  onSpeech(events: SpeechEvent[]): void;
}

const isPromise = (x: AudioFrame | Promise<AudioFrame>): x is Promise<AudioFrame> => typeof (x as Promise<AudioFrame>).then === 'function';

/** Resolves when the caller's audio has ended (or the signal aborted it); rejects if the denoiser or the VAD fails. */
export function listen(o: ListenerOptions): Promise<void> {
  return new Promise((resolve, reject) => new Listener(o, resolve, reject).start());
}

/**
 * Frames taken but not yet answered by the VAD, at most: 100 ms of audio. The denoiser's worker
 * batches every call's frames together once per DENOISER_BATCH_INTERVAL_MS, so a call whose next
 * frame could only be taken once the VAD had answered for the last would move one frame per
 * batch: real time exactly, with no slack for a batch that starts late (its frames then aged in
 * the inbound queue, the oldest dropped). With a few in flight, each batch takes every frame that
 * has arrived since the last.
 */
export const LISTENER_FRAMES_IN_FLIGHT = 5;

/**
 * A few frames in flight (LISTENER_FRAMES_IN_FLIGHT): each is handed to the denoiser as it
 * arrives; the denoiser answers in order, and its clean frames go to STT and the VAD one at a
 * time, the next once the VAD has answered for the last (its recurrent state makes the order
 * matter). The inbound pipe is paused while the most are in flight, and frames arriving
 * meanwhile wait in the source's queue. The steps are functions made once and the VAD answers by
 * callback, so a frame costs no closure and no promise (only the worker denoiser's, when it runs).
 */
class Listener {
  private pipe!: PipeControl;
  private audioMs: number | undefined;
  /**
   * The frames in flight, a ring of LISTENER_FRAMES_IN_FLIGHT slots from `head`: each one's start
   * (call ms) and, once the denoiser has answered, its clean frame. Of the `open` frames, the first
   * `clean` are denoised (the first of them may be with the VAD: `hearing`).
   */
  private readonly starts = new Float64Array(LISTENER_FRAMES_IN_FLIGHT);
  private readonly cleanFrames: (AudioFrame | undefined)[] = new Array<AudioFrame | undefined>(LISTENER_FRAMES_IN_FLIGHT).fill(undefined);
  /** Each clean frame's VAD probability where the denoiser gave one; NaN: ask the call's VAD. */
  private readonly probabilities = new Float64Array(LISTENER_FRAMES_IN_FLIGHT);
  private head = 0;
  private open = 0;
  private clean = 0;
  private hearing = false;
  /**
   * The call's own VAD missed frames since it last heard one (the denoiser's worker answered
   * them): its state and context are from older audio, so it starts afresh on its next frame.
   */
  private ownVadBehind = false;
  private paused = false;
  /** The source has ended: finish once the frames in flight are through. */
  private ending = false;
  private finished = false;
  /**
   * Speech events, in the async context the listener was started in: frames come in the media
   * clock's turn and VAD answers in its worker's, yet a turn and its provider requests belong to
   * the call (AsyncLocalStorage users: tracing, APM, the latency benchmark's probe). Bound once,
   * here rather than per frame, since speech events are what sets such work off.
   */
  private readonly onSpeech: (events: SpeechEvent[]) => void;
  /**
   * The signal's state, kept by its 'abort' event: read three times a frame, where the `aborted`
   * getter's receiver check was 0.7 % of the event-loop thread at 100 calls.
   */
  private aborted: boolean;
  private readonly onAbort = (): void => {
    this.aborted = true;
  };
  /** Narrowband calls: every frame at 8 kHz. */
  private readonly narrow: NarrowbandReader | undefined;
  /**
   * Ends the tracked work held while any frame is in flight (a virtual clock waits for it). Taken
   * when the first frame goes in, released when the last is answered; releasing twice is harmless
   * (WorkTracker.hold).
   */
  private release: () => void = () => {};

  constructor(
    private readonly o: ListenerOptions,
    private readonly resolve: () => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.onSpeech = AsyncResource.bind(o.onSpeech);
    this.narrow = o.narrowband ? new NarrowbandReader() : undefined;
    this.aborted = o.signal.aborted;
    o.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  start(): void {
    this.pipe = readThrough(this.o.inbound, { item: (frame) => this.frame(frame), end: (error) => (error === undefined ? this.sourceEnded() : this.fail(error)) });
    this.pipe.resume();
  }

  private frame(frame: AudioFrame): void {
    const o = this.o;
    if (this.aborted) return this.end();
    const heard = this.narrow ? this.narrow.frame(frame) : frame;
    const frameMs = (heard.samples.length / heard.sampleRate) * 1000 || FRAME_MS;
    // The first frame arrived at its end: it started one frame earlier.
    this.audioMs ??= Math.max(0, o.now() - frameMs);
    const startMs = this.audioMs;
    this.audioMs += frameMs;
    if (this.open === 0) this.release = o.work.hold();
    this.starts[(this.head + this.open) % LISTENER_FRAMES_IN_FLIGHT] = startMs;
    if (++this.open === LISTENER_FRAMES_IN_FLIGHT) {
      this.paused = true;
      this.pipe.pause();
    }
    o.recorder?.caller(startMs, frame.samples);
    const denoise = o.denoise;
    if (!denoise) return this.denoised(heard);
    // By callback (no promise per frame): answered in order.
    if (denoise.processThen) return denoise.processThen(heard, this.denoised, this.failed);
    const clean = denoise.process(heard);
    if (isPromise(clean)) o.work.track(clean).then(this.denoised, this.failed);
    else this.denoised(clean);
  }

  /** The denoiser's answer for the oldest frame not yet denoised. */
  private readonly denoised = (clean: AudioFrame, probability?: number): void => {
    if (this.finished) return;
    if (this.aborted) return this.end();
    const slot = (this.head + this.clean) % LISTENER_FRAMES_IN_FLIGHT;
    this.cleanFrames[slot] = clean;
    this.probabilities[slot] = probability ?? NaN;
    this.clean++;
    if (!this.hearing) this.hear();
  };

  /** The oldest frame in flight, denoised, to STT and the VAD. */
  private hear(): void {
    const clean = this.cleanFrames[this.head]!;
    this.cleanFrames[this.head] = undefined;
    try {
      this.o.stt.write(clean);
    } catch (error) {
      return this.fail(error);
    }
    this.hearing = true;
    const probability = this.probabilities[this.head]!;
    if (!Number.isNaN(probability)) {
      this.ownVadBehind = true;
      return this.heard(probability);
    }
    if (this.ownVadBehind) {
      // Taking over from the worker (lost, or restarted): not from where it stopped long ago.
      this.ownVadBehind = false;
      this.o.vad.reset?.();
    }
    this.o.vad.pushThen(clean, this.heard, this.failed);
  }

  private readonly heard = (probability: number): void => {
    if (this.finished) return;
    const startMs = this.starts[this.head]!;
    this.hearing = false;
    this.head = (this.head + 1) % LISTENER_FRAMES_IN_FLIGHT;
    this.open--;
    this.clean--;
    if (this.aborted) return this.end();
    try {
      const events = this.o.detector.push(probability, startMs);
      if (events.length > 0) this.onSpeech(events);
    } catch (error) {
      return this.fail(error);
    }
    if (this.open === 0) {
      this.release();
      if (this.ending) return this.end();
    } else if (this.clean > 0) {
      this.hear();
      if (this.finished) return;
    }
    if (this.paused && this.open < LISTENER_FRAMES_IN_FLIGHT) {
      this.paused = false;
      this.pipe.resume();
    }
  };

  /** The denoiser's or the VAD's failure: the listener ends with it. */
  private readonly failed = (error: unknown): void => {
    this.fail(error);
  };

  private sourceEnded(): void {
    if (this.open === 0) this.end();
    else this.ending = true;
  }

  private end(): void {
    if (this.finished) return;
    this.finished = true;
    this.release();
    this.o.signal.removeEventListener('abort', this.onAbort);
    this.pipe.stop();
    const tail = this.o.detector.flush();
    if (tail.length > 0 && !this.aborted) this.onSpeech(tail);
    this.resolve();
  }

  private fail(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    this.release();
    this.o.signal.removeEventListener('abort', this.onAbort);
    this.pipe.stop();
    this.reject(error);
  }
}
