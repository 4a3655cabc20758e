/**
 * Cheap noise suppression for 16 kHz telephone speech: the engine's default denoiser backend
 * (see DenoiserBackend in ./denoise.ts). The suppressor — STFT, MCRA noise tracking, MMSE-LSA
 * gain, overlap-add — is ./denoise-spectral-core.ts; this file holds the backend and its two
 * kinds of stream:
 *
 *   wideband (default)  the suppressor at 16 kHz on the frames as they come: 20 ms window, hop
 *                       160, 512-point FFT, 257 bins. Delay exactly one hop: 160 samples, 10 ms.
 *   narrowband          for telephone-band calls (G.711: 8 kHz audio the media layer upsamples to
 *                       16 kHz, nothing above 4 kHz): decimated to 8 kHz (./resample.ts half-band,
 *                       per-stream state), the same suppressor at 8 kHz (hop 80, 256-point FFT,
 *                       129 bins: the same 31.25 Hz bins as wideband, minus the empty upper
 *                       half), interpolated back to 16 kHz. Delay exactly 193 samples, 12.0625 ms:
 *                       decimator 16 + suppressor 160 + interpolator 17 (at 16 kHz); not padded to
 *                       a round figure, since every sample of delay is latency on the turn.
 *                       The resampling pair rolls off above 3.4 kHz (−0.8 dB there, −2.5 dB at
 *                       3.6, −5 dB at 3.8 kHz) and passes nothing from ~4.5 kHz, so a call that
 *                       moves to a wideband codec keeps telephone band until its stream is
 *                       replaced.
 *
 * Contract, both modes: any 16 kHz frame whose length is a multiple of 160 samples (20 ms = 320
 * in practice) in, a new frame of the same length out, delayed by exactly `delayMs` (the stream's,
 * or the backend's `delayMsFor(options)`). Digital silence in gives digital silence out.
 *
 * Cost: wideband ~0.027 ms CPU per 20 ms frame on a 2.6 GHz EPYC (bench/denoise.ts; ~15 % less
 * on telephone-band audio, whose empty band above 5 kHz it skips, see NB_EDGE_HZ in the core).
 * Narrowband: the suppressor at 8 kHz is half the work of the full 16 kHz one (FFTs and per-bin
 * maths at half the size: ~0.016 against ~0.030 ms), and the two half-band filters add
 * ~0.005 ms, about a quarter of the total: ~0.02 ms per frame, 10–15 % below a wideband
 * stream on the same telephone-band audio (see bench/denoise.ts's narrowband lines). RNNoise
 * costs ~0.4–0.5 ms at 48 kHz with resampling, and (a recurrent network) is still the better
 * choice for heavy, fast-changing noise — babble, music, clatter — that a minimum-tracking
 * estimator follows too slowly; this one is for the steady and slowly varying noise of phone
 * lines, cars, streets, fans and rooms, which is most of what callers have.
 *
 * Known limits: a noise that steps up by more than ~7 dB is treated as speech until the minimum
 * window rolls over (~1 s), and a loud broadband burst over an otherwise suppressed background
 * stands out more than before, which can nudge Silero on a steady tonal background (hum).
 */
import { SAMPLE_RATE, type AudioFrame } from './frame.ts';
import { Resampler } from './resample.ts';
import { HOP_MS, SpectralBand, SpectralCore } from './denoise-spectral-core.ts';
import type { DenoiserBackend, DenoiserStream, DenoiserStreamOptions } from './denoise.ts';

/** The rate narrowband streams run the suppressor at. */
const NARROW_RATE = 8000;
/** Input frames must be whole hops at 16 kHz (whole hops at 8 kHz after decimation too). */
const QUANTUM = (SAMPLE_RATE * HOP_MS) / 1000;

export interface SpectralDenoiserOptions {
  /** Most attenuation applied to any bin, in dB (positive). Default 18. */
  floorDb?: number;
  /**
   * Wideband streams: skip the empty band above 5 kHz of telephone-band (upsampled 8 kHz) audio;
   * default true. Narrowband streams have no such band.
   */
  narrowbandSkip?: boolean;
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
  /** @internal the suppressor's tables and scratch at 16 kHz and at 8 kHz */
  readonly wide: SpectralBand;
  /** @internal */ readonly narrow: SpectralBand;

  constructor(options: SpectralDenoiserOptions = {}) {
    const floorDb = options.floorDb ?? 18;
    if (!(floorDb >= 0)) throw new RangeError(`floorDb must be ≥ 0, got ${floorDb}`);
    this.gainFloor = 10 ** (-floorDb / 20);
    this.narrowbandSkip = options.narrowbandSkip ?? true;
    const band = { gainFloor: this.gainFloor, narrowbandSkip: this.narrowbandSkip };
    this.wide = new SpectralBand(SAMPLE_RATE, band);
    this.narrow = new SpectralBand(NARROW_RATE, band);
  }

  /** Same shape as `Denoiser.load()`; nothing to load, but start-up code can treat both alike. */
  static load(options?: SpectralDenoiserOptions): Promise<SpectralDenoiser> {
    return Promise.resolve(new SpectralDenoiser(options));
  }

  /** The exact delay of a stream created with `options`, in ms: 10 wideband, 12.0625 narrowband. */
  delayMsFor(options?: DenoiserStreamOptions): number {
    return options?.narrowband ? SpectralNarrowbandStream.delayMs : SpectralDenoiseStream.delayMs;
  }

  createStream(options?: DenoiserStreamOptions): SpectralDenoiseStream | SpectralNarrowbandStream {
    return options?.narrowband ? new SpectralNarrowbandStream(this) : new SpectralDenoiseStream(this);
  }
}

function checkFrame(frame: AudioFrame, closed: boolean, what: string): void {
  if (closed) throw new Error(`${what} is closed`);
  if (frame.sampleRate !== SAMPLE_RATE) throw new RangeError(`denoiser needs ${SAMPLE_RATE} Hz frames, got ${frame.sampleRate}`);
  const n = frame.samples.length;
  if (n % QUANTUM !== 0) throw new RangeError(`denoiser frames must be a multiple of ${QUANTUM} samples, got ${n}`);
}

/** One call's wideband denoiser: the suppressor at 16 kHz. Plain JS memory: close() only marks it closed. */
export class SpectralDenoiseStream implements DenoiserStream {
  /** Audio delay in ms: one hop, 160 samples (the second half of each window waits for the next hop). */
  static readonly delayMs = HOP_MS;
  readonly delayMs = SpectralDenoiseStream.delayMs;
  private closed = false;
  private readonly core: SpectralCore;

  constructor(shared: SpectralDenoiser) {
    this.core = new SpectralCore(shared.wide);
  }

  /** Denoise one 16 kHz frame (a multiple of 10 ms; 20 ms in practice) into a new frame. */
  process(frame: AudioFrame): AudioFrame {
    checkFrame(frame, this.closed, 'SpectralDenoiseStream');
    const input = frame.samples;
    // The frame contract: the output owns its samples, so this is the one allocation per frame.
    const out = new Int16Array(input.length);
    const hop = this.core.band.hop;
    for (let at = 0; at < input.length; at += hop) this.core.hop(input, at, out);
    return { samples: out, sampleRate: SAMPLE_RATE };
  }

  /** Marks the stream closed (idempotent); there is no native memory to free. */
  close(): void {
    this.closed = true;
  }
}

/**
 * The narrowband path's delay in 16 kHz samples, from the resamplers' own figures: the decimator
 * (8 samples at 8 kHz), one hop of the suppressor at 8 kHz (80), the interpolator (17 at 16 kHz).
 * Each is exact: the half-band filters are symmetric around a whole sample.
 */
function narrowbandDelaySamples(): number {
  const up = SAMPLE_RATE / NARROW_RATE;
  const down = new Resampler(SAMPLE_RATE, NARROW_RATE).delay;
  const hop = (NARROW_RATE * HOP_MS) / 1000;
  return up * (down + hop) + new Resampler(NARROW_RATE, SAMPLE_RATE).delay;
}
const NARROWBAND_DELAY = narrowbandDelaySamples();

/**
 * One call's narrowband denoiser: 16 kHz frames in and out, the suppressor at 8 kHz in between
 * (see the header). Plain JS memory: close() only marks it closed.
 */
export class SpectralNarrowbandStream implements DenoiserStream {
  /** Audio delay in ms: 193 samples at 16 kHz, 12.0625 ms (see narrowbandDelaySamples). */
  static readonly delayMs = (NARROWBAND_DELAY * 1000) / SAMPLE_RATE;
  readonly delayMs = SpectralNarrowbandStream.delayMs;
  private closed = false;
  private readonly core: SpectralCore;
  private readonly down = new Resampler(SAMPLE_RATE, NARROW_RATE);
  private readonly up = new Resampler(NARROW_RATE, SAMPLE_RATE);
  /** The denoised 8 kHz frame, reused (its length follows the frames', 160 in practice). */
  private low = new Int16Array(0);

  constructor(shared: SpectralDenoiser) {
    this.core = new SpectralCore(shared.narrow);
  }

  /** Denoise one 16 kHz frame (a multiple of 10 ms; 20 ms in practice) into a new frame. */
  process(frame: AudioFrame): AudioFrame {
    checkFrame(frame, this.closed, 'SpectralNarrowbandStream');
    const input = frame.samples;
    // A view the decimator reuses; read fully below before its next call. Exactly half the
    // input for an even length: any other count would shift the audio silently.
    const narrow = this.down.processShared(input);
    if (narrow.length * 2 !== input.length) throw new Error(`decimator produced ${narrow.length} samples for ${input.length}`);
    if (this.low.length !== narrow.length) this.low = new Int16Array(narrow.length);
    const low = this.low;
    const hop = this.core.band.hop;
    for (let at = 0; at < narrow.length; at += hop) this.core.hop(narrow, at, low);
    // process() (not processShared) returns a new array: the frame's own samples.
    const samples = this.up.process(low);
    if (samples.length !== input.length) throw new Error(`interpolator produced ${samples.length} samples for ${input.length}`);
    return { samples, sampleRate: SAMPLE_RATE };
  }

  /** Marks the stream closed (idempotent); there is no native memory to free. */
  close(): void {
    this.closed = true;
  }
}
