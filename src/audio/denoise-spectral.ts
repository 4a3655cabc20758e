/**
 * Cheap noise suppression for 16 kHz telephone speech: the engine's default denoiser backend
 * (see DenoiserBackend in ./denoise.ts). Classic single-channel STFT enhancement:
 *
 *   analysis   320-sample (20 ms) sqrt-Hann window, hop 160 (10 ms, 50% overlap), zero-padded to
 *              a 512-point real FFT (./fft.ts). The window length is the usual one for speech
 *              (short enough to treat speech as stationary, long enough to resolve formants);
 *              the zero padding gives the gain's short impulse response room before it wraps.
 *   noise PSD  MCRA (Cohen & Berdugo 2002): time/frequency-smoothed periodogram, its minimum over
 *              a ~1 s sliding window (sub-windows, so no per-hop scan), a speech-presence
 *              probability from their ratio, and recursive averaging of the periodogram gated by
 *              that probability — noise keeps being learnt between words, not only before speech.
 *   gain       decision-directed a-priori SNR (Ephraim & Malah, α = 0.98, the main defence against
 *              musical noise) and the MMSE log-spectral-amplitude gain, floored (−18 dB by default:
 *              deeper floors make the residual noise "watery" and hurt STT more than they help),
 *              then smoothed across neighbouring bins so lone bins cannot flicker.
 *   synthesis  inverse FFT, the same sqrt-Hann window, overlap-add (sin² + cos² = 1, so a unit
 *              gain reconstructs the input exactly, delayed).
 *
 * Contract: any 16 kHz frame whose length is a multiple of 160 samples (20 ms = 320 in practice)
 * in, a new frame of the same length out, delayed by exactly HOP = 160 samples (10 ms, see
 * SpectralDenoiseStream.delayMs). Digital silence in gives digital silence out.
 *
 * Cost: ~0.04–0.06 ms CPU per 20 ms frame (bench/denoise.ts; ~13 % less on telephone-band audio,
 * whose empty band above 5 kHz is skipped, see NB_EDGE), against ~0.4–0.5 ms for RNNoise
 * at 48 kHz with resampling. RNNoise (a recurrent network) is still the better choice for
 * heavy, fast-changing noise — babble, music, clatter — that a minimum-tracking estimator follows
 * too slowly; this one is for the steady and slowly varying noise of phone lines, cars, streets,
 * fans and rooms, which is most of what callers have.
 *
 * Known limits: a noise that steps up by more than ~7 dB is treated as speech until the minimum
 * window rolls over (~1 s), and a loud broadband burst over an otherwise suppressed background
 * stands out more than before, which can nudge Silero on a steady tonal background (hum).
 */
import { SAMPLE_RATE, type AudioFrame } from './frame.ts';
import { RealFft } from './fft.ts';
import type { DenoiserBackend, DenoiserStream } from './denoise.ts';

const HOP = 160;
const WIN = 2 * HOP;
const NFFT = 512;
const BINS = NFFT / 2 + 1;

// MCRA (Cohen & Berdugo 2002, values from the paper, per 10 ms hop).
/** Periodogram smoothing over time for the minimum search. */
const ALPHA_S = 0.8;
/** Noise averaging when speech is surely absent (τ ≈ 200 ms). */
const ALPHA_D = 0.95;
/** Speech-presence probability smoothing. */
const ALPHA_P = 0.2;
/** Smoothed power above this many times its minimum means speech (or a rising noise) there. */
const DELTA = 5;
/**
 * Minimum window: U sub-windows of V hops (8 × 12 × 10 ms ≈ 1.0–1.1 s of look-back). Longer than
 * any stretch of speech without a dip in a given bin, short enough that a noise which steps up
 * (or fades in after digital silence) is learnt within about a second.
 */
const SUB_WINDOWS = 8;
const SUB_HOPS = 12;

// Gain.
/** Decision-directed smoothing of the a-priori SNR. */
const ALPHA_DD = 0.98;
/** Lower bound on the a-priori SNR (−25 dB): keeps the gain's noise-only branch smooth. */
const XI_MIN = 10 ** (-25 / 10);
/** Noise PSD floor, in (int16 sample)² × window energy: avoids 0/0 after digital silence. */
const NOISE_FLOOR = 1e-3;

// Telephone band. Most calls are G.711: 8 kHz audio the media layer upsamples to 16 kHz, so
// nothing but the resampler's leakage (−60 dB and below from 5 kHz) lies above 4 kHz. While that
// holds, tracking noise and computing a gain for the empty bins is wasted work (about 40 % of
// the per-bin part of a hop), and they just get the floor gain.
/** First bin of the band checked for emptiness: 5 kHz (31.25 Hz per bin). */
const NB_EDGE = 160;
/** The band counts as empty under this fraction of the energy below it (−50 dB)… */
const NB_RATIO = 1e-5;
/**
 * …or, in quiet passages, under this periodogram level per bin: about 7× what rounding to 16 bits
 * leaves in every bin (1/12 per sample × the window's energy of 160), the floor of any
 * resampled signal.
 */
const NB_ABS_PER_BIN = 100;
const NB_ABS = NB_ABS_PER_BIN * (BINS - NB_EDGE);
/** Hops in a row with energy above NB_EDGE that end the skipping (30 ms). */
const NB_EXIT = 3;
/** Hops (10 ms) of empty upper band before the bins above NB_EDGE are skipped. */
const NB_HOPS = 25;

export interface SpectralDenoiserOptions {
  /** Most attenuation applied to any bin, in dB (positive). Default 18. */
  floorDb?: number;
  /** Skip the empty band above 5 kHz of telephone-band (upsampled 8 kHz) audio; default true. */
  narrowbandSkip?: boolean;
}

/** E1(v), the exponential integral, by Abramowitz & Stegun 5.1.53 (v ≤ 1) and 5.1.56 (|ε| < 5e-5). */
function expint(v: number): number {
  if (v <= 1) return -Math.log(v) - 0.57721566 + v * (0.99999193 + v * (-0.24991055 + v * (0.05519968 + v * (-0.00976004 + v * 0.00107857))));
  return ((v * v + 2.334733 * v + 0.250621) / (v * v + 3.330657 * v + 1.681534)) * Math.exp(-v) / v;
}

/**
 * The LSA gain is G = ξ/(1+ξ) · exp(E1(v)/2) with v = ξγ/(1+ξ). A log and an exp per bin cost
 * more than the FFTs, so it is tabulated — as h(v) = √v · exp(E1(v)/2), which unlike exp(E1/2)
 * stays finite and smooth at v → 0 (h(0) = e^{-γ_Euler/2}), so linear interpolation on a uniform
 * grid is accurate to ~1e-5. Then G = √(ξ/((1+ξ)γ)) · h(v). Past the table E1 < 1e-7: h(v) = √v.
 */
const LSA_STEP = 64;
const LSA_MAX_V = 16;
const LSA_TABLE = new Float64Array(LSA_MAX_V * LSA_STEP + 2);
for (let i = 0; i < LSA_TABLE.length; i++) {
  const v = i / LSA_STEP;
  LSA_TABLE[i] = i === 0 ? Math.exp(-0.57721566 / 2) : Math.sqrt(v) * Math.exp(0.5 * expint(v));
}

/**
 * The shared part: tables and scratch used by every stream. Streams run synchronously to
 * completion, so they can share scratch buffers exactly like RNNoise's wasm frames in ./denoise.ts.
 */
export class SpectralDenoiser implements DenoiserBackend {
  readonly name = 'spectral';
  readonly delayMs = (HOP * 1000) / SAMPLE_RATE;
  readonly gainFloor: number;
  readonly narrowbandSkip: boolean;
  /** @internal */ readonly fft = new RealFft(NFFT);
  /** @internal */ readonly window = new Float64Array(WIN);
  /** @internal scratch */ readonly frame = new Float64Array(WIN);
  /** @internal scratch */ readonly re = new Float64Array(BINS);
  /** @internal scratch */ readonly im = new Float64Array(BINS);
  /** @internal scratch */ readonly power = new Float64Array(BINS);
  /** @internal scratch */ readonly gain = new Float64Array(BINS);
  /** @internal scratch */ readonly time = new Float64Array(NFFT);

  constructor(options: SpectralDenoiserOptions = {}) {
    const floorDb = options.floorDb ?? 18;
    if (!(floorDb >= 0)) throw new RangeError(`floorDb must be ≥ 0, got ${floorDb}`);
    this.gainFloor = 10 ** (-floorDb / 20);
    this.narrowbandSkip = options.narrowbandSkip ?? true;
    // Periodic sqrt-Hann: sin(πn/N). Squared windows at hop N/2 sum to exactly 1.
    for (let n = 0; n < WIN; n++) this.window[n] = Math.sin((Math.PI * n) / WIN);
  }

  /** Same shape as `Denoiser.load()`; nothing to load, but start-up code can treat both alike. */
  static load(options?: SpectralDenoiserOptions): Promise<SpectralDenoiser> {
    return Promise.resolve(new SpectralDenoiser(options));
  }

  createStream(): SpectralDenoiseStream {
    return new SpectralDenoiseStream(this);
  }
}

/** One call's denoiser state. Plain JS memory: close() only marks it closed. */
export class SpectralDenoiseStream implements DenoiserStream {
  /** Audio delay in ms: one hop (the second half of each window waits for the next hop). */
  static readonly delayMs = (HOP * 1000) / SAMPLE_RATE;

  private closed = false;
  /** The previous hop's input samples (first half of the next analysis window). */
  private readonly history = new Float64Array(HOP);
  /** Second half of the previous hop's synthesis, waiting to be overlap-added. */
  private readonly tail = new Float64Array(HOP);
  private hops = 0;
  // MCRA state, per bin.
  private readonly smoothed = new Float64Array(BINS);
  private readonly minimum = new Float64Array(BINS);
  private readonly subMinimum = new Float64Array(BINS);
  /** Minima of the last SUB_WINDOWS complete sub-windows, and their running minimum. */
  private readonly pastMinima = new Float64Array(SUB_WINDOWS * BINS);
  private readonly pastMinimum = new Float64Array(BINS);
  private readonly presence = new Float64Array(BINS);
  private readonly noise = new Float64Array(BINS);
  /** Previous hop's |clean estimate|² / noise, for the decision-directed a-priori SNR. */
  private readonly prevSnr = new Float64Array(BINS);
  /** Consecutive hops whose band above NB_EDGE was empty (capped at NB_HOPS). */
  private narrowHops = 0;
  /** Consecutive hops with energy above NB_EDGE. */
  private wideHops = 0;

  constructor(private readonly shared: SpectralDenoiser) {}

  /** Denoise one 16 kHz frame (a multiple of 10 ms; 20 ms in practice) into a new frame. */
  process(frame: AudioFrame): AudioFrame {
    if (this.closed) throw new Error('SpectralDenoiseStream is closed');
    if (frame.sampleRate !== SAMPLE_RATE) throw new RangeError(`denoiser needs ${SAMPLE_RATE} Hz frames, got ${frame.sampleRate}`);
    const input = frame.samples;
    if (input.length % HOP !== 0) throw new RangeError(`denoiser frames must be a multiple of ${HOP} samples, got ${input.length}`);
    // The frame contract: the output owns its samples, so this is the one allocation per frame.
    const out = new Int16Array(input.length);
    for (let at = 0; at < input.length; at += HOP) this.hop(input, at, out);
    return { samples: out, sampleRate: SAMPLE_RATE };
  }

  /** Marks the stream closed (idempotent); there is no native memory to free. */
  close(): void {
    this.closed = true;
  }

  private hop(input: Int16Array, at: number, out: Int16Array): void {
    const sh = this.shared;
    const { window, frame, re, im, power, gain, time } = sh;
    const history = this.history;
    for (let n = 0; n < HOP; n++) {
      frame[n] = history[n]! * window[n]!;
      const x = input[at + n]!;
      frame[HOP + n] = x * window[HOP + n]!;
      history[n] = x;
    }
    sh.fft.forward(frame, re, im);
    let low = 0;
    for (let k = 0; k < NB_EDGE; k++) low += power[k] = re[k]! * re[k]! + im[k]! * im[k]!;
    let high = 0;
    for (let k = NB_EDGE; k < BINS; k++) high += power[k] = re[k]! * re[k]! + im[k]! * im[k]!;
    // A narrowband line: only the bins below NB_EDGE are tracked (see NB_EDGE). Energy up there
    // for NB_EXIT hops in a row brings the whole spectrum back (those bins resume from their old
    // state); a lone hop of it (a clipped peak's distortion) just gets the floor there.
    if (high <= low * NB_RATIO || high <= NB_ABS) {
      this.wideHops = 0;
      if (this.narrowHops < NB_HOPS) this.narrowHops++;
    } else if (++this.wideHops >= NB_EXIT) this.narrowHops = 0;
    const bins = this.hops > 0 && this.narrowHops >= NB_HOPS && sh.narrowbandSkip ? NB_EDGE : BINS;

    this.trackNoise(power, bins);
    this.computeGain(power, gain, bins);

    for (let k = 0; k < BINS; k++) {
      re[k] = re[k]! * gain[k]!;
      im[k] = im[k]! * gain[k]!;
    }
    sh.fft.inverse(re, im, time);
    // Overlap-add: the first half completes this hop's output, the second half waits. What the
    // filter spreads past the window (into the zero padding) is dropped by the synthesis window.
    const tail = this.tail;
    for (let n = 0; n < HOP; n++) {
      const y = tail[n]! + time[n]! * window[n]!;
      tail[n] = time[HOP + n]! * window[HOP + n]!;
      const v = Math.round(y);
      out[at + n] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    this.hops++;
  }

  /** MCRA noise PSD update from this hop's periodogram, for bins below `bins`. */
  private trackNoise(power: Float64Array, bins: number): void {
    const { smoothed, minimum, subMinimum, pastMinimum, presence, noise } = this;
    const first = this.hops === 0;
    for (let k = 0; k < bins; k++) {
      // Frequency smoothing (1/4, 1/2, 1/4; mirrored at the edges) before time smoothing: a
      // steadier estimate for the minimum search, as in MCRA's b(i) window.
      const lo = power[k === 0 ? 1 : k - 1]!;
      const hi = power[k === BINS - 1 ? BINS - 2 : k + 1]!;
      const sf = 0.25 * lo + 0.5 * power[k]! + 0.25 * hi;
      if (first) {
        // Start from the first hop as if it were noise: calls open on line noise, not speech.
        smoothed[k] = sf;
        subMinimum[k] = sf;
        pastMinimum[k] = sf;
        this.pastMinima.fill(sf, k * SUB_WINDOWS, (k + 1) * SUB_WINDOWS);
        noise[k] = Math.max(sf, NOISE_FLOOR);
        continue;
      }
      const s = ALPHA_S * smoothed[k]! + (1 - ALPHA_S) * sf;
      smoothed[k] = s;
      if (s < subMinimum[k]!) subMinimum[k] = s;
      const m = Math.min(pastMinimum[k]!, subMinimum[k]!);
      minimum[k] = m;
      const speech = s > DELTA * m ? 1 : 0;
      const p = ALPHA_P * presence[k]! + (1 - ALPHA_P) * speech;
      presence[k] = p;
      const a = ALPHA_D + (1 - ALPHA_D) * p;
      noise[k] = Math.max(a * noise[k]! + (1 - a) * power[k]!, NOISE_FLOOR);
    }
    if (!first && (this.hops % SUB_HOPS) === 0) this.rollSubWindow();
  }

  /** Close a sub-window: store its minimum, drop the oldest, recompute the running minimum. */
  private rollSubWindow(): void {
    const slot = (this.hops / SUB_HOPS) % SUB_WINDOWS;
    const { pastMinima, pastMinimum, subMinimum, smoothed } = this;
    for (let k = 0; k < BINS; k++) {
      const base = k * SUB_WINDOWS;
      pastMinima[base + slot] = subMinimum[k]!;
      let m = pastMinima[base]!;
      for (let u = 1; u < SUB_WINDOWS; u++) m = Math.min(m, pastMinima[base + u]!);
      pastMinimum[k] = m;
      subMinimum[k] = smoothed[k]!;
    }
  }

  /**
   * Decision-directed a-priori SNR → LSA gain → floor → smoothing across bins, into `gain`. Bins
   * from `bins` up (an empty band) get the floor.
   */
  private computeGain(power: Float64Array, gain: Float64Array, bins: number): void {
    const { noise, prevSnr } = this;
    const floor = this.shared.gainFloor;
    for (let k = bins; k < BINS; k++) gain[k] = floor;
    for (let k = 0; k < bins; k++) {
      const p = power[k]!;
      // A zero bin (digital silence) stays zero whatever the gain: skip the maths, keep ξ low.
      if (p === 0) {
        prevSnr[k] = 0;
        gain[k] = floor;
        continue;
      }
      const gamma = p / noise[k]!;
      const xi = Math.max(ALPHA_DD * prevSnr[k]! + (1 - ALPHA_DD) * Math.max(gamma - 1, 0), XI_MIN);
      const w = xi / (1 + xi);
      const v = w * gamma;
      let h: number;
      if (v >= LSA_MAX_V) {
        h = Math.sqrt(v);
      } else {
        const x = v * LSA_STEP;
        const i = x | 0;
        const lo = LSA_TABLE[i]!;
        h = lo + (x - i) * (LSA_TABLE[i + 1]! - lo);
      }
      let g = Math.sqrt(w / gamma) * h;
      if (g > 1) g = 1;
      // The unfloored estimate feeds the next a-priori SNR: feeding back the floor would raise
      // ξ in noise-only bins and undo part of the attenuation.
      prevSnr[k] = g * g * gamma;
      gain[k] = g < floor ? floor : g;
    }
    // Spectral smoothing of the gain, in place with a one-bin lag.
    let prev = gain[0]!;
    for (let k = 1; k < BINS - 1; k++) {
      const cur = gain[k]!;
      gain[k] = 0.25 * prev + 0.5 * cur + 0.25 * gain[k + 1]!;
      prev = cur;
    }
  }
}
