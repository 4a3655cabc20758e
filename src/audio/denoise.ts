/**
 * Noise suppression for the caller's audio (`enable_noise_cancellation`), before VAD and STT.
 *
 * Two ways to run a backend: in-thread (`loadDenoiser`: a synchronous `process`, for tools,
 * benchmarks and the replay on a virtual clock) or, what the engine uses (`loadEngineDenoiser`),
 * in one worker thread shared by all calls (./denoise-worker.ts: an async `process`, frames of all
 * calls batched per event-loop turn, the same output sample for sample).
 *
 * Streams come in two kinds, one per rate the engine carries a caller's audio at
 * (`createStream({ narrowband })`): wideband streams take and return 16 kHz frames, narrowband
 * ones 8 kHz frames (a G.711 call, whose audio stays at the codec's rate end to end). A frame at
 * the other rate is refused with a RangeError, never resampled on the quiet.
 *
 * RNNoise (xiph, via the @echogarden/rnnoise-wasm build) works on 48 kHz audio in 10 ms frames,
 * so each 20 ms frame is upsampled (×3 from 16 kHz, ×6 from 8 kHz: ./resample.ts's polyphase
 * path), run through RNNoise as two 480-sample frames and downsampled back to the stream's rate.
 * One wasm module is loaded per process; each call gets its own RNNoise state and resamplers
 * (both carry history between frames). The network costs the same whatever the band (on
 * telephone-band audio its band gains above 4 kHz just see nothing); only the resampling and the
 * delay differ: 12 ms wideband, 14 ms narrowband (see DenoiseStream.delayMsAt).
 */
import createRNNoise, { type RNNoiseModule } from '@echogarden/rnnoise-wasm';
import { denoiserRate, NARROWBAND_RATE, SpectralDenoiser, type SpectralDenoiserOptions } from './denoise-spectral.ts';
import { WorkerDenoiser } from './denoise-worker.ts';
import type { BusyPacing } from '../util/batch-pacer.ts';
import { SAMPLE_RATE, type AudioFrame } from './frame.ts';
import { Resampler } from './resample.ts';

export { denoiserRate, NARROWBAND_RATE };

/** Per-call options of a denoiser stream. */
export interface DenoiserStreamOptions {
  /**
   * The call's audio is telephone band (G.711) and reaches the denoiser at the codec's 8 kHz: the
   * stream takes and returns 8 kHz frames (`NARROWBAND_RATE`) instead of 16 kHz ones, and refuses
   * 16 kHz frames. The spectral backend runs its suppressor at 8 kHz on them as they come (half
   * the work of a wideband stream, the same 10 ms delay); RNNoise resamples 8 ↔ 48 kHz around the
   * network instead of 16 ↔ 48 kHz (14 ms delay instead of 12). Default false.
   */
  narrowband?: boolean;
  /**
   * Run the call's VAD alongside, where the denoiser can: a worker that loaded it
   * (./denoise-worker.ts, WorkerDenoiser.vad) answers each frame with its probability too. In-thread
   * streams ignore it.
   */
  vad?: boolean;
}

/**
 * One call's denoiser: frames at the stream's rate in (16 kHz, narrowband 8 kHz), frames of the
 * same rate and length out, `delayMs` later.
 */
export interface DenoiserStream {
  /** Exact audio delay this stream adds, in ms (recordings and timelines may align on it). */
  readonly delayMs: number;
  process(frame: AudioFrame): AudioFrame;
  /**
   * `process()` without the new frame: `samples` (at the stream's rate) are denoised where they
   * are, for a caller that would only copy the result back (the worker's shared slab). Optional.
   */
  processInPlace?(samples: Int16Array): void;
  /** Frees per-call state. Idempotent; a closed stream refuses audio. */
  close(): void;
}

/** One call's denoiser whose work happens elsewhere (a worker thread): same contract, async. */
export interface AsyncDenoiserStream {
  /** Exact audio delay this stream adds, in ms. */
  readonly delayMs: number;
  /** Frames resolve in the order they were given, even when given before earlier ones resolved. */
  process(frame: AudioFrame): Promise<AudioFrame>;
  /**
   * `process()` by callback, for the per-frame path (no promise per frame): exactly one of `done`
   * and `fail` is called, in the same order as the frames were given; a frame refused outright
   * (closed stream, wrong rate or length) fails at once, inside the call. Neither callback may
   * throw: they run in the denoiser's settling of a whole batch, other calls' frames with them.
   */
  processThen(frame: AudioFrame, done: (frame: AudioFrame) => void, fail: (error: Error) => void): void;
  /** Frees per-call state. Idempotent; a closed stream refuses audio. */
  close(): void;
}

/**
 * A denoiser implementation, loaded once per process and shared by calls (one stream each),
 * running on the calling thread. Structurally what the cascade takes as `CascadeDeps['denoiser']`.
 */
export interface DenoiserBackend {
  readonly name: DenoiserBackendName;
  /** Fixed audio delay of a default (wideband) stream, in ms; the same as `delayMsFor()`. */
  readonly delayMs: number;
  /** Fixed audio delay of every stream created with `options`, in ms (= that stream's `delayMs`). */
  delayMsFor(options?: DenoiserStreamOptions): number;
  createStream(options?: DenoiserStreamOptions): DenoiserStream;
}

/**
 * - `spectral` (default): STFT noise suppression in plain TypeScript (./denoise-spectral.ts),
 *   ~0.05 ms CPU per 20 ms frame, 10 ms delay; ~0.02 ms on telephone-band calls' 8 kHz
 *   `narrowband` streams (the same 10 ms delay). Steady and slowly varying noise: line hiss, hum,
 *   car, street, fans.
 * - `rnnoise`: the RNNoise network via wasm at 48 kHz, ~0.4–0.5 ms per frame (8–9× the CPU), 12 ms
 *   delay (14 ms narrowband). Better on heavy, fast-changing noise (babble, music, clatter,
 *   keyboard); worth it when calls are few or the callers' surroundings are known to be loud.
 */
export type DenoiserBackendName = 'spectral' | 'rnnoise';
export const DEFAULT_DENOISER_BACKEND: DenoiserBackendName = 'spectral';

/** Load the named backend, in-thread (the engine's default backend when omitted). */
export async function loadDenoiser(name: DenoiserBackendName = DEFAULT_DENOISER_BACKEND, spectral?: SpectralDenoiserOptions): Promise<DenoiserBackend> {
  if (name === 'rnnoise') return Denoiser.load();
  if (name === 'spectral') return SpectralDenoiser.load(spectral);
  throw new RangeError(`unknown denoiser backend '${String(name)}'`);
}

/**
 * Where the engine runs the denoiser: `worker` (default) keeps the per-frame maths off the
 * event-loop thread that paces every call's RTP; `inline` runs it there.
 */
export type DenoiserThread = 'worker' | 'inline';
export const DEFAULT_DENOISER_THREAD: DenoiserThread = 'worker';

/** What the engine holds: a backend for its calls, on some thread, released at shutdown. */
export interface EngineDenoiser {
  readonly name: DenoiserBackendName;
  /** As DenoiserBackend's: a default stream's delay, and a stream's with given options. */
  readonly delayMs: number;
  delayMsFor(options?: DenoiserStreamOptions): number;
  readonly thread: DenoiserThread;
  /** Asked to run the callers' VAD too (the worker's `vad` option) and the model would not load: why. */
  readonly vadError?: string | undefined;
  createStream(options?: DenoiserStreamOptions): DenoiserStream | AsyncDenoiserStream;
  /** Releases the backend (terminates its worker). Idempotent. */
  close(): Promise<void>;
}

/** The engine's denoiser: the default backend in its worker thread unless told otherwise. */
export async function loadEngineDenoiser(
  o: { backend?: DenoiserBackendName; thread?: DenoiserThread; batchIntervalMs?: number; busy?: BusyPacing; spectral?: SpectralDenoiserOptions; vad?: { modelPath?: string } } = {},
): Promise<EngineDenoiser> {
  const name = o.backend ?? DEFAULT_DENOISER_BACKEND;
  if ((o.thread ?? DEFAULT_DENOISER_THREAD) === 'worker') {
    return WorkerDenoiser.load({
      backend: name,
      batchIntervalMs: o.batchIntervalMs ?? 0,
      ...(o.busy ? { busy: o.busy } : {}),
      ...(o.spectral ? { spectral: o.spectral } : {}),
      ...(o.vad ? { vad: o.vad } : {}),
    });
  }
  const backend = await loadDenoiser(name, o.spectral);
  return {
    name: backend.name,
    delayMs: backend.delayMs,
    delayMsFor: (options) => backend.delayMsFor(options),
    thread: 'inline',
    createStream: (options) => backend.createStream(options),
    close: () => Promise.resolve(),
  };
}

const RNNOISE_RATE = 48_000;
/** 10 ms at 48 kHz; also RNNoise's own delay (its overlap-add holds back one frame). */
const RNNOISE_FRAME = 480;

/** The shared RNNoise module. `Denoiser.load()` once at start-up; `createStream()` per call. */
export class Denoiser implements DenoiserBackend {
  readonly name = 'rnnoise';
  readonly delayMs = DenoiseStream.delayMs;
  /** Scratch frames in wasm memory, shared: processing is synchronous, so calls cannot overlap. */
  private readonly inPtr: number;
  private readonly outPtr: number;

  private constructor(readonly module: RNNoiseModule) {
    const size = module._rnnoise_get_frame_size();
    if (size !== RNNOISE_FRAME) throw new Error(`RNNoise frame size is ${size}, expected ${RNNOISE_FRAME}`);
    this.inPtr = module._malloc(RNNOISE_FRAME * 4);
    this.outPtr = module._malloc(RNNOISE_FRAME * 4);
  }

  static async load(): Promise<Denoiser> {
    return new Denoiser(await createRNNoise());
  }

  /** The exact delay of a stream created with `options`, in ms: 12 wideband, 14 narrowband. */
  delayMsFor(options?: DenoiserStreamOptions): number {
    return DenoiseStream.delayMsAt(denoiserRate(options));
  }

  /** A stream of 16 kHz frames, or with `narrowband` of 8 kHz ones. */
  createStream(options?: DenoiserStreamOptions): DenoiseStream {
    return new DenoiseStream(this, denoiserRate(options));
  }

  /**
   * Run one 48 kHz frame in place through `state`. Samples are in int16 scale, as RNNoise
   * expects. Returns RNNoise's voice probability for the frame.
   * @internal used by DenoiseStream
   */
  processFrame48k(state: number, frame: Float32Array): number {
    const m = this.module;
    const inAt = this.inPtr >> 2;
    const outAt = this.outPtr >> 2;
    m.HEAPF32.set(frame, inAt);
    const vad = m._rnnoise_process_frame(state, this.outPtr, this.inPtr);
    frame.set(m.HEAPF32.subarray(outAt, outAt + RNNOISE_FRAME));
    return vad;
  }
}

/**
 * The delay of an RNNoise stream at `rate`, in 48 kHz samples: the upsampler's (in 48 kHz
 * samples), RNNoise's own frame (480) and the downsampler's (in samples at `rate`, ×48000/rate).
 * Each is exact (the polyphase filters are symmetric around a whole output sample): 16 kHz
 * 48 + 480 + 16×3 = 576 (12 ms), 8 kHz 96 + 480 + 16×6 = 672 (14 ms), a whole number of samples
 * at the stream's rate either way (192, 112).
 */
function delaySamples48k(rate: number): number {
  return new Resampler(rate, RNNOISE_RATE).delay + RNNOISE_FRAME + new Resampler(RNNOISE_RATE, rate).delay * (RNNOISE_RATE / rate);
}
const DELAY_MS = {
  [SAMPLE_RATE]: (delaySamples48k(SAMPLE_RATE) * 1000) / RNNOISE_RATE,
  [NARROWBAND_RATE]: (delaySamples48k(NARROWBAND_RATE) * 1000) / RNNOISE_RATE,
} as const;

/**
 * One call's denoiser, on frames at 16 kHz (wideband) or 8 kHz (narrowband). Owns native memory:
 * call `close()` when the call ends.
 */
export class DenoiseStream implements DenoiserStream {
  private state: number;
  /** 48 kHz samples per input sample: 3 wideband, 6 narrowband. */
  private readonly ratio: number;
  /** 10 ms at the stream's rate (160, 80): frames must be whole multiples so every RNNoise frame is complete. */
  private readonly quantum: number;
  private readonly up: Resampler;
  private readonly down: Resampler;
  private readonly work = new Float32Array(RNNOISE_FRAME);
  private readonly hiRes = new Int16Array(RNNOISE_FRAME * 4);
  private voice = 0;

  constructor(
    private readonly denoiser: Denoiser,
    /** The rate of the frames this stream takes and returns: 16000, or 8000 (narrowband). */
    readonly sampleRate: number = SAMPLE_RATE,
  ) {
    if (sampleRate !== SAMPLE_RATE && sampleRate !== NARROWBAND_RATE) {
      throw new RangeError(`RNNoise streams run at ${SAMPLE_RATE} or ${NARROWBAND_RATE} Hz, not ${sampleRate}`);
    }
    this.ratio = RNNOISE_RATE / sampleRate;
    this.quantum = RNNOISE_FRAME / this.ratio;
    this.up = new Resampler(sampleRate, RNNOISE_RATE);
    this.down = new Resampler(RNNOISE_RATE, sampleRate);
    this.delayMs = DenoiseStream.delayMsAt(sampleRate);
    this.state = denoiser.module._rnnoise_create(0);
    if (this.state === 0) throw new Error('rnnoise_create failed');
  }

  /**
   * Audio delay added by denoising a wideband stream, in ms: the two resampling filters (1 ms
   * each) plus RNNoise's own 10 ms of overlap-add. Alignment with the raw audio (recordings)
   * must account for it.
   */
  static readonly delayMs = DELAY_MS[SAMPLE_RATE];

  /**
   * The delay of a stream at `rate`, in ms: 12 at 16 kHz; 14 at 8 kHz, where each resampling
   * filter takes 2 ms instead of 1 (its sinc, cut at the lower rate's 4 kHz Nyquist, spans the
   * same 16 zero crossings either side, twice as far apart; see delaySamples48k).
   */
  static delayMsAt(rate: number): number {
    return rate === NARROWBAND_RATE ? DELAY_MS[NARROWBAND_RATE] : DELAY_MS[SAMPLE_RATE];
  }

  /** This stream's exact audio delay in ms (12, narrowband 14). */
  readonly delayMs: number;

  /** RNNoise's own voice-activity estimate for the latest 10 ms (a by-product, not the VAD). */
  get voiceProbability(): number {
    return this.voice;
  }

  /** Denoise one frame at the stream's rate (a multiple of 10 ms; 20 ms in practice) into a new frame. */
  process(frame: AudioFrame): AudioFrame {
    if (this.state === 0) throw new Error('DenoiseStream is closed');
    const rate = this.sampleRate;
    if (frame.sampleRate !== rate) {
      throw new RangeError(`${rate === NARROWBAND_RATE ? 'narrowband' : 'wideband'} RNNoise stream needs ${rate} Hz frames, got ${frame.sampleRate} Hz`);
    }
    if (frame.samples.length % this.quantum !== 0) {
      throw new RangeError(`denoiser frames at ${rate} Hz must be a multiple of ${this.quantum} samples, got ${frame.samples.length}`);
    }
    const hi = this.up.process(frame.samples);
    // Exact for an integer ratio and whole 10 ms frames; a mismatch would silently shift audio.
    if (hi.length !== frame.samples.length * this.ratio) throw new Error(`upsampler produced ${hi.length} samples`);
    const work = this.work;
    const cleaned = hi.length <= this.hiRes.length ? this.hiRes.subarray(0, hi.length) : new Int16Array(hi.length);
    for (let at = 0; at < hi.length; at += RNNOISE_FRAME) {
      for (let i = 0; i < RNNOISE_FRAME; i++) work[i] = hi[at + i]!;
      this.voice = this.denoiser.processFrame48k(this.state, work);
      for (let i = 0; i < RNNOISE_FRAME; i++) {
        const v = Math.round(work[i]!);
        cleaned[at + i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      }
    }
    const samples = this.down.process(cleaned);
    if (samples.length !== frame.samples.length) throw new Error(`downsampler produced ${samples.length} samples for ${frame.samples.length}`);
    return { samples, sampleRate: rate };
  }

  /** Free the RNNoise state. Idempotent. */
  close(): void {
    if (this.state === 0) return;
    this.denoiser.module._rnnoise_destroy(this.state);
    this.state = 0;
  }
}
