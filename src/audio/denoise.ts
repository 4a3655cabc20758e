/**
 * Noise suppression for the caller's audio (`enable_noise_cancellation`), before VAD and STT.
 *
 * Two ways to run a backend: in-thread (`loadDenoiser`: a synchronous `process`, for tools,
 * benchmarks and the replay on a virtual clock) or, what the engine uses (`loadEngineDenoiser`),
 * in one worker thread shared by all calls (./denoise-worker.ts: an async `process`, frames of all
 * calls batched per event-loop turn, the same output sample for sample).
 *
 * RNNoise (xiph, via the @echogarden/rnnoise-wasm build) works on 48 kHz audio in 10 ms frames,
 * so each 20 ms 16 kHz frame is upsampled ×3, run through RNNoise as two 480-sample frames and
 * downsampled back. One wasm module is loaded per process; each call gets its own RNNoise state
 * and resamplers (both carry history between frames). RNNoise takes the narrowband option and
 * ignores it: its cost is the network's, whatever the band, and on telephone-band audio its
 * band gains above 4 kHz just see nothing; a narrowband RNNoise stream is a wideband one (same
 * output, same 12 ms delay).
 */
import createRNNoise, { type RNNoiseModule } from '@echogarden/rnnoise-wasm';
import { SpectralDenoiser } from './denoise-spectral.ts';
import { WorkerDenoiser } from './denoise-worker.ts';
import { SAMPLE_RATE, type AudioFrame } from './frame.ts';
import { Resampler } from './resample.ts';

/** Per-call options of a denoiser stream. */
export interface DenoiserStreamOptions {
  /**
   * The call's audio is telephone band (G.711: 8 kHz upsampled to 16 kHz, nothing above 4 kHz).
   * The spectral backend then runs its suppressor at 8 kHz inside (half the work) between a
   * half-band decimator and interpolator, with the same 16 kHz frames in and out and a slightly
   * longer delay (12.0625 ms instead of 10): about 25–30 % less CPU per frame in all. The band
   * above 3.4 kHz rolls off (−0.8 dB there, −5 dB at 3.8 kHz) and nothing passes from ~4.5 kHz.
   * RNNoise ignores it. Default false.
   */
  narrowband?: boolean;
}

/** One call's denoiser: 16 kHz frames in, same-length frames out, `delayMs` later. */
export interface DenoiserStream {
  /** Exact audio delay this stream adds, in ms (recordings and timelines may align on it). */
  readonly delayMs: number;
  process(frame: AudioFrame): AudioFrame;
  /** Frees per-call state. Idempotent; a closed stream refuses audio. */
  close(): void;
}

/** One call's denoiser whose work happens elsewhere (a worker thread): same contract, async. */
export interface AsyncDenoiserStream {
  /** Exact audio delay this stream adds, in ms. */
  readonly delayMs: number;
  /** Frames resolve in the order they were given, even when given before earlier ones resolved. */
  process(frame: AudioFrame): Promise<AudioFrame>;
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
 *   ~0.05 ms CPU per 20 ms frame, 10 ms delay; ~0.03 ms on telephone-band calls with
 *   `narrowband` (12.0625 ms delay). Steady and slowly varying noise: line hiss, hum, car,
 *   street, fans.
 * - `rnnoise`: the RNNoise network via wasm at 48 kHz, ~0.4–0.5 ms per frame (8–9× the CPU), 12 ms
 *   delay. Better on heavy, fast-changing noise (babble, music, clatter, keyboard); worth it when
 *   calls are few or the callers' surroundings are known to be loud.
 */
export type DenoiserBackendName = 'spectral' | 'rnnoise';
export const DEFAULT_DENOISER_BACKEND: DenoiserBackendName = 'spectral';

/** Load the named backend, in-thread (the engine's default backend when omitted). */
export async function loadDenoiser(name: DenoiserBackendName = DEFAULT_DENOISER_BACKEND): Promise<DenoiserBackend> {
  if (name === 'rnnoise') return Denoiser.load();
  if (name === 'spectral') return SpectralDenoiser.load();
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
  createStream(options?: DenoiserStreamOptions): DenoiserStream | AsyncDenoiserStream;
  /** Releases the backend (terminates its worker). Idempotent. */
  close(): Promise<void>;
}

/** The engine's denoiser: the default backend in its worker thread unless told otherwise. */
export async function loadEngineDenoiser(
  o: { backend?: DenoiserBackendName; thread?: DenoiserThread; batchIntervalMs?: number } = {},
): Promise<EngineDenoiser> {
  const name = o.backend ?? DEFAULT_DENOISER_BACKEND;
  if ((o.thread ?? DEFAULT_DENOISER_THREAD) === 'worker') return WorkerDenoiser.load({ backend: name, batchIntervalMs: o.batchIntervalMs ?? 0 });
  const backend = await loadDenoiser(name);
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
const RNNOISE_FRAME = 480;
const UP = RNNOISE_RATE / SAMPLE_RATE;
/** 10 ms at 16 kHz: frames must be whole multiples so every RNNoise frame is complete. */
const INPUT_QUANTUM = RNNOISE_FRAME / UP;

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

  /** RNNoise runs the same whatever the band: `narrowband` is accepted and ignored (see the header). */
  delayMsFor(_options?: DenoiserStreamOptions): number {
    return DenoiseStream.delayMs;
  }

  /** `options.narrowband` is ignored: the stream is the same either way (see the header). */
  createStream(_options?: DenoiserStreamOptions): DenoiseStream {
    return new DenoiseStream(this);
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

/** One call's denoiser. Owns native memory: call `close()` when the call ends. */
export class DenoiseStream implements DenoiserStream {
  private state: number;
  private readonly up = new Resampler(SAMPLE_RATE, RNNOISE_RATE);
  private readonly down = new Resampler(RNNOISE_RATE, SAMPLE_RATE);
  private readonly work = new Float32Array(RNNOISE_FRAME);
  private readonly hiRes = new Int16Array(RNNOISE_FRAME * 4);
  private voice = 0;

  constructor(private readonly denoiser: Denoiser) {
    this.state = denoiser.module._rnnoise_create(0);
    if (this.state === 0) throw new Error('rnnoise_create failed');
  }

  /**
   * Audio delay added by denoising, in ms: the two resampling filters (1 ms each) plus RNNoise's
   * own 10 ms of overlap-add. Alignment with the raw audio (recordings) must account for it.
   */
  static readonly delayMs = 12;
  readonly delayMs = DenoiseStream.delayMs;

  /** RNNoise's own voice-activity estimate for the latest 10 ms (a by-product, not the VAD). */
  get voiceProbability(): number {
    return this.voice;
  }

  /** Denoise one 16 kHz frame (a multiple of 10 ms; 20 ms in practice) into a new frame. */
  process(frame: AudioFrame): AudioFrame {
    if (this.state === 0) throw new Error('DenoiseStream is closed');
    if (frame.sampleRate !== SAMPLE_RATE) throw new RangeError(`denoiser needs ${SAMPLE_RATE} Hz frames, got ${frame.sampleRate}`);
    if (frame.samples.length % INPUT_QUANTUM !== 0) {
      throw new RangeError(`denoiser frames must be a multiple of ${INPUT_QUANTUM} samples, got ${frame.samples.length}`);
    }
    const hi = this.up.process(frame.samples);
    // Exact for an integer ratio and whole 10 ms frames; a mismatch would silently shift audio.
    if (hi.length !== frame.samples.length * UP) throw new Error(`upsampler produced ${hi.length} samples`);
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
    return { samples: this.down.process(cleaned), sampleRate: SAMPLE_RATE };
  }

  /** Free the RNNoise state. Idempotent. */
  close(): void {
    if (this.state === 0) return;
    this.denoiser.module._rnnoise_destroy(this.state);
    this.state = 0;
  }
}
