/**
 * Cheap noise suppression for telephone speech: the engine's default denoiser backend (see
 * DenoiserBackend in ./denoise.ts). The suppressor — STFT, MCRA noise tracking, MMSE-LSA gain,
 * overlap-add — is ./denoise-spectral-core.ts; this file holds the backend and its two kinds of
 * stream, one per rate the engine carries a caller's audio at:
 *
 *   wideband (default)  16 kHz frames: the suppressor at 16 kHz, 20 ms window, hop 160, 512-point
 *                       FFT, 257 bins. Delay exactly one hop: 160 samples, 10 ms.
 *   narrowband          8 kHz frames, for telephone-band calls (G.711), whose audio the engine
 *                       keeps at the codec's 8 kHz end to end: the same suppressor at 8 kHz, hop
 *                       80, 256-point FFT, 129 bins (the same 31.25 Hz bins as wideband, minus the
 *                       band above 4 kHz such a call does not carry). No resampling inside, so
 *                       nothing of the 0–4 kHz band is rolled off or delayed beyond the STFT's
 *                       own hop: delay exactly one hop, 80 samples, 10 ms, as wideband.
 *
 * Contract: a frame at the stream's rate (16 kHz wideband, 8 kHz narrowband) whose length is a
 * multiple of the hop (160 samples, narrowband 80: 10 ms; 20 ms in practice) in, a new frame of
 * the same rate and length out, delayed by exactly `delayMs` (the stream's, or the backend's
 * `delayMsFor(options)`). A frame at the other rate is refused (RangeError naming both rates):
 * a frame's length alone cannot tell them apart (320 samples is 20 ms at 16 kHz and four 8 kHz
 * hops), and audio taken for the wrong rate would be suppressed with every frequency off by a
 * factor of two, silently. Digital silence in gives digital silence out.
 *
 * Cost per 20 ms frame of one call in the TypeScript core (bench/denoise.ts, run on 2026-11-26:
 * 2-core AMD EPYC VM, Node 20.20.2, other work on the machine; an earlier run on a quieter 2.6 GHz
 * EPYC measured wideband at ~0.027 ms, so compare ratios rather than absolute figures across
 * machines):
 *   wideband    0.058 ms CPU on recorded audio; 0.044 ms on telephone-band audio at 16 kHz, whose
 *               empty band above 5 kHz it skips (NB_EDGE_HZ in the core; 0.052 ms without the
 *               skip). 150 calls interleaved: 0.049 and 0.038 ms.
 *   narrowband  0.020 ms (150 calls interleaved: 0.022 ms): 45 % of a wideband stream on the same
 *               telephone-band audio (58 % interleaved). The suppressor at 8 kHz is half the work
 *               (FFTs and per-bin maths at half the size), and nothing is added to it: the
 *               half-band decimator and interpolator of the former 16 kHz-in, 16 kHz-out
 *               narrowband stream (a quarter of its cost) are gone.
 * native/dsp's C core (./native-dsp.ts; the default where it is built) does the same
 * arithmetic in about a quarter of the time: 0.011 ms wideband, 0.005 ms narrowband (2026-11-27).
 * RNNoise costs 0.41 ms (narrowband 0.40 ms) at 48 kHz with resampling, and (a recurrent
 * network) is still the better choice for heavy, fast-changing noise — babble, music, clatter —
 * that a minimum-tracking estimator follows too slowly; this one is for the steady and slowly
 * varying noise of phone lines, cars, streets, fans and rooms, which is most of what callers have.
 *
 * Known limits: a noise that steps up by more than ~7 dB is treated as speech until the minimum
 * window rolls over (~1 s), and a loud broadband burst over an otherwise suppressed background
 * stands out more than before, which can nudge Silero on a steady tonal background (hum).
 */
import { SAMPLE_RATE, type AudioFrame } from './frame.ts';
import { HOP_MS, SpectralBand, type HopRunner } from './denoise-spectral-core.ts';
import { NARROWBAND_RATE } from './narrowband-frame.ts';
import type { DenoiserBackend, DenoiserStream, DenoiserStreamOptions } from './denoise.ts';

/**
 * A narrowband stream's frames (either backend) are at NARROWBAND_RATE: a G.711 call's own rate,
 * which the engine keeps the caller's audio at (./narrowband-frame.ts). Wideband streams take
 * SAMPLE_RATE (16 kHz).
 */
export { NARROWBAND_RATE };

/** The rate of the frames a stream created with `options` takes and returns. */
export function denoiserRate(options?: DenoiserStreamOptions): number {
  return options?.narrowband ? NARROWBAND_RATE : SAMPLE_RATE;
}

export interface SpectralDenoiserOptions {
  /** Most attenuation applied to any bin, in dB (positive). Default 18. */
  floorDb?: number;
  /**
   * Wideband streams: skip the empty band above 5 kHz of telephone-band (upsampled 8 kHz) audio;
   * default true. Narrowband streams have no such band.
   */
  narrowbandSkip?: boolean;
  /**
   * Run the suppressor in native/dsp's C core when that module is built and enabled
   * (./native-dsp.ts): the same output, bit for bit, for less CPU. Default true; false runs the
   * TypeScript.
   */
  native?: boolean;
}

/**
 * The shared part: one SpectralBand (tables and scratch) per rate, used by every stream at that
 * rate. Streams run synchronously to completion, so they can share scratch.
 */
export class SpectralDenoiser implements DenoiserBackend {
  readonly name = 'spectral';
  /** The delay of a default (wideband) stream; see `delayMsFor`. */
  readonly delayMs = SpectralDenoiseStream.delayMs;
  readonly gainFloor: number;
  readonly narrowbandSkip: boolean;
  /** True when the streams run the C core (asked for, and built). */
  readonly native: boolean;
  /** @internal the suppressor's tables and scratch at 16 kHz and at 8 kHz */
  readonly wide: SpectralBand;
  /** @internal */ readonly narrow: SpectralBand;

  constructor(options: SpectralDenoiserOptions = {}) {
    const floorDb = options.floorDb ?? 18;
    if (!(floorDb >= 0)) throw new RangeError(`floorDb must be ≥ 0, got ${floorDb}`);
    this.gainFloor = 10 ** (-floorDb / 20);
    this.narrowbandSkip = options.narrowbandSkip ?? true;
    const band = { gainFloor: this.gainFloor, narrowbandSkip: this.narrowbandSkip, native: options.native ?? true };
    this.wide = new SpectralBand(SAMPLE_RATE, band);
    this.narrow = new SpectralBand(NARROWBAND_RATE, band);
    this.native = this.wide.native !== undefined;
  }

  /** Same shape as `Denoiser.load()`; nothing to load, but start-up code can treat both alike. */
  static load(options?: SpectralDenoiserOptions): Promise<SpectralDenoiser> {
    return Promise.resolve(new SpectralDenoiser(options));
  }

  /**
   * The exact delay of a stream created with `options`, in ms: 10 in both modes (one hop of the
   * suppressor: 160 samples at 16 kHz, 80 at 8 kHz).
   */
  delayMsFor(options?: DenoiserStreamOptions): number {
    return options?.narrowband ? SpectralNarrowbandStream.delayMs : SpectralDenoiseStream.delayMs;
  }

  createStream(options?: DenoiserStreamOptions): SpectralDenoiseStream | SpectralNarrowbandStream {
    return options?.narrowband ? new SpectralNarrowbandStream(this) : new SpectralDenoiseStream(this);
  }
}

/**
 * One call's suppressor at one rate, on the frames as they come (no resampling): `hop` samples
 * of input become as many of output, one hop later. close() only marks it closed: the C core's
 * state is freed when the stream is collected.
 */
abstract class SpectralStream implements DenoiserStream {
  /** Audio delay in ms: one hop (the second half of each window waits for the next hop). */
  static readonly delayMs = HOP_MS;
  readonly delayMs = HOP_MS;
  private closed = false;
  private readonly core: HopRunner;
  /** Samples per hop at the stream's rate. */
  private readonly hop: number;

  constructor(
    band: SpectralBand,
    /** The rate of the frames this stream takes and returns. */
    readonly sampleRate: number,
    private readonly what: string,
  ) {
    this.core = band.createCore();
    this.hop = band.hop;
  }

  /** Denoise one frame (a multiple of 10 ms at the stream's rate; 20 ms in practice) into a new frame. */
  process(frame: AudioFrame): AudioFrame {
    this.accept(frame.samples, frame.sampleRate);
    // The frame contract: the output owns its samples, so this is the one allocation per frame.
    const out = new Int16Array(frame.samples.length);
    this.core.frames(frame.samples, out);
    return { samples: out, sampleRate: this.sampleRate };
  }

  /**
   * Samples at the stream's rate denoised where they are. Safe in place: each hop's input is read
   * in full before its output is written, in both cores.
   */
  processInPlace(samples: Int16Array): void {
    this.accept(samples, this.sampleRate);
    this.core.frames(samples, samples);
  }

  private accept(samples: Int16Array, rate: number): void {
    if (this.closed) throw new Error(`${this.what} is closed`);
    if (rate !== this.sampleRate) throw new RangeError(`${this.what} needs ${this.sampleRate} Hz frames, got ${rate} Hz`);
    if (samples.length % this.hop !== 0) throw new RangeError(`denoiser frames at ${rate} Hz must be a multiple of ${this.hop} samples, got ${samples.length}`);
  }

  /** Marks the stream closed (idempotent); the C core's memory, if any, goes with the stream. */
  close(): void {
    this.closed = true;
  }
}

/** One call's wideband denoiser: 16 kHz frames, the suppressor at 16 kHz. Delay 160 samples, 10 ms. */
export class SpectralDenoiseStream extends SpectralStream {
  constructor(shared: SpectralDenoiser) {
    super(shared.wide, SAMPLE_RATE, 'SpectralDenoiseStream');
  }
}

/**
 * One call's narrowband denoiser: 8 kHz frames (a G.711 call's audio at its own rate), the
 * suppressor at 8 kHz. Delay 80 samples, 10 ms.
 */
export class SpectralNarrowbandStream extends SpectralStream {
  constructor(shared: SpectralDenoiser) {
    super(shared.narrow, NARROWBAND_RATE, 'SpectralNarrowbandStream');
  }
}
