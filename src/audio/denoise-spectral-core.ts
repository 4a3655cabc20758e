/**
 * The spectral suppressor itself, at either rate it runs at: 16 kHz (wideband streams) or 8 kHz
 * (narrowband streams, which resample around it; see ./denoise-spectral.ts). Classic
 * single-channel STFT enhancement:
 *
 *   analysis   a 20 ms sqrt-Hann window, hop 10 ms (50 % overlap), zero-padded to the next power
 *              of two (./fft.ts): 320 samples into 512 points at 16 kHz, 160 into 256 at 8 kHz,
 *              31.25 Hz per bin either way. The window length is the usual one for speech (short
 *              enough to treat speech as stationary, long enough to resolve formants); the zero
 *              padding gives the gain's short impulse response room before it wraps.
 *   noise PSD  MCRA (Cohen & Berdugo 2002): time/frequency-smoothed periodogram, its minimum over
 *              a ~1 s sliding window (sub-windows, so no per-hop scan), a speech-presence
 *              probability from their ratio, and recursive averaging of the periodogram gated by
 *              that probability — noise keeps being learnt between words, not only before speech.
 *   gain       decision-directed a-priori SNR (Ephraim & Malah, α = 0.98, the main defence against
 *              musical noise) and the MMSE log-spectral-amplitude gain, floored (−18 dB by default:
 *              deeper floors make the residual noise "watery" and hurt STT more than they help),
 *              then smoothed across neighbouring bins so lone bins cannot flicker.
 *   synthesis  inverse FFT, the same sqrt-Hann window, overlap-add (sin² + cos² = 1, so a unit
 *              gain reconstructs the input exactly, one hop later).
 *
 * The hop is 10 ms at both rates, so every per-hop constant below (smoothing factors, the
 * minimum window counted in hops) means the same time at both; only the sizes scale with the rate.
 */
import { RealFft } from './fft.ts';

/** Hop length at either rate; every per-hop constant below assumes 10 ms. */
export const HOP_MS = 10;

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
 * Minimum window: SUB_WINDOWS sub-windows of SUB_WINDOW_MS (8 × 120 ms ≈ 1.0–1.1 s of
 * look-back). Longer than any stretch of speech without a dip in a given bin, short enough that a
 * noise which steps up (or fades in after digital silence) is learnt within about a second.
 */
const SUB_WINDOWS = 8;
const SUB_WINDOW_MS = 120;
const SUB_HOPS = SUB_WINDOW_MS / HOP_MS;

// Gain.
/** Decision-directed smoothing of the a-priori SNR. */
const ALPHA_DD = 0.98;
/** Lower bound on the a-priori SNR (−25 dB): keeps the gain's noise-only branch smooth. */
const XI_MIN = 10 ** (-25 / 10);
/** Noise PSD floor, in (int16 sample)² × window energy: avoids 0/0 after digital silence. */
const NOISE_FLOOR = 1e-3;

// Telephone band inside wideband streams. Most calls are G.711: 8 kHz audio the media layer
// upsamples to 16 kHz, so nothing but the resampler's leakage (−60 dB and below from 5 kHz) lies
// above 4 kHz. While that holds, tracking noise and computing a gain for the empty bins is wasted
// work (about 40 % of the per-bin part of a hop), and they just get the floor gain. Only at
// 16 kHz: at 8 kHz there is no band above 4 kHz (and a narrowband stream is the cheaper answer).
/** Lower edge of the band checked for emptiness (bin 160 at 16 kHz). */
const NB_EDGE_HZ = 5000;
/** The band counts as empty under this fraction of the energy below it (−50 dB)… */
const NB_RATIO = 1e-5;
/**
 * …or, in quiet passages, under this periodogram level per bin: about 7× what rounding to 16 bits
 * leaves in every bin (1/12 per sample × the window's energy of 160), the floor of any
 * resampled signal.
 */
const NB_ABS_PER_BIN = 100;
/** Hops in a row with energy above the edge that end the skipping (30 ms). */
const NB_EXIT = 3;
/** Hops (10 ms) of empty upper band before the bins above the edge are skipped. */
const NB_HOPS = 25;

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

/** The rates the suppressor runs at. */
export type SpectralRate = 8000 | 16000;

export interface SpectralBandOptions {
  /** Most attenuation applied to any bin, as a linear amplitude gain (0..1]. */
  gainFloor: number;
  /** At 16 kHz: skip the empty band above 5 kHz of telephone-band audio. Ignored at 8 kHz. */
  narrowbandSkip: boolean;
}

/**
 * One rate's sizes, tables and scratch, shared by every stream at that rate. Streams run
 * synchronously to completion, so they can share scratch buffers exactly like RNNoise's wasm
 * frames in ./denoise.ts.
 */
export class SpectralBand {
  /** Samples per hop (10 ms): 160 at 16 kHz, 80 at 8 kHz. Frames must be whole hops. */
  readonly hop: number;
  /** Analysis window: two hops (20 ms). */
  readonly win: number;
  /** FFT size: the smallest power of two holding the window (512, 256). */
  readonly nfft: number;
  /** Spectrum bins, nfft / 2 + 1 (257, 129). */
  readonly bins: number;
  readonly gainFloor: number;
  /** First bin of the band the telephone-band skip leaves out; `bins` when there is no skip. */
  readonly skipEdge: number;
  /** Below this periodogram total the band above `skipEdge` counts as empty. */
  readonly skipAbs: number;
  readonly fft: RealFft;
  readonly window: Float64Array;
  /** Scratch: the windowed frame, the spectrum, its power and gain, the synthesised frame. */
  readonly frame: Float64Array;
  readonly re: Float64Array;
  readonly im: Float64Array;
  readonly power: Float64Array;
  readonly gain: Float64Array;
  readonly time: Float64Array;

  constructor(
    readonly rate: SpectralRate,
    options: SpectralBandOptions,
  ) {
    if (rate !== 8000 && rate !== 16000) throw new RangeError(`the spectral denoiser runs at 8 or 16 kHz, not ${String(rate)} Hz`);
    this.hop = (rate * HOP_MS) / 1000;
    this.win = 2 * this.hop;
    this.nfft = 2 ** Math.ceil(Math.log2(this.win));
    this.bins = this.nfft / 2 + 1;
    this.gainFloor = options.gainFloor;
    this.skipEdge = rate === 16000 && options.narrowbandSkip ? Math.round((NB_EDGE_HZ * this.nfft) / rate) : this.bins;
    this.skipAbs = NB_ABS_PER_BIN * (this.bins - this.skipEdge);
    this.fft = new RealFft(this.nfft);
    this.window = new Float64Array(this.win);
    // Periodic sqrt-Hann: sin(πn/N). Squared windows at hop N/2 sum to exactly 1.
    for (let n = 0; n < this.win; n++) this.window[n] = Math.sin((Math.PI * n) / this.win);
    this.frame = new Float64Array(this.win);
    this.re = new Float64Array(this.bins);
    this.im = new Float64Array(this.bins);
    this.power = new Float64Array(this.bins);
    this.gain = new Float64Array(this.bins);
    this.time = new Float64Array(this.nfft);
  }
}

/**
 * One call's suppressor state at one rate: `hop()` turns `band.hop` input samples into as many
 * output samples, one hop (10 ms) later. Digital silence in gives digital silence out.
 */
export class SpectralCore {
  /** The previous hop's input samples (first half of the next analysis window). */
  private readonly history: Float64Array;
  /** Second half of the previous hop's synthesis, waiting to be overlap-added. */
  private readonly tail: Float64Array;
  private hops = 0;
  // MCRA state, per bin.
  private readonly smoothed: Float64Array;
  private readonly minimum: Float64Array;
  private readonly subMinimum: Float64Array;
  /** Minima of the last SUB_WINDOWS complete sub-windows, and their running minimum. */
  private readonly pastMinima: Float64Array;
  private readonly pastMinimum: Float64Array;
  private readonly presence: Float64Array;
  private readonly noise: Float64Array;
  /** Previous hop's |clean estimate|² / noise, for the decision-directed a-priori SNR. */
  private readonly prevSnr: Float64Array;
  /** Consecutive hops whose band above the skip edge was empty (capped at NB_HOPS). */
  private narrowHops = 0;
  /** Consecutive hops with energy above the skip edge. */
  private wideHops = 0;

  constructor(readonly band: SpectralBand) {
    const { hop, bins } = band;
    this.history = new Float64Array(hop);
    this.tail = new Float64Array(hop);
    this.smoothed = new Float64Array(bins);
    this.minimum = new Float64Array(bins);
    this.subMinimum = new Float64Array(bins);
    this.pastMinima = new Float64Array(SUB_WINDOWS * bins);
    this.pastMinimum = new Float64Array(bins);
    this.presence = new Float64Array(bins);
    this.noise = new Float64Array(bins);
    this.prevSnr = new Float64Array(bins);
  }

  /** Denoise input[at, at + hop) into out[at, at + hop). */
  hop(input: Int16Array, at: number, out: Int16Array): void {
    const b = this.band;
    const { hop, bins: allBins, skipEdge, window, frame, re, im, power, gain, time } = b;
    const history = this.history;
    for (let n = 0; n < hop; n++) {
      frame[n] = history[n]! * window[n]!;
      const x = input[at + n]!;
      frame[hop + n] = x * window[hop + n]!;
      history[n] = x;
    }
    b.fft.forward(frame, re, im);
    let low = 0;
    for (let k = 0; k < skipEdge; k++) low += power[k] = re[k]! * re[k]! + im[k]! * im[k]!;
    let bins = allBins;
    if (skipEdge < allBins) {
      let high = 0;
      for (let k = skipEdge; k < allBins; k++) high += power[k] = re[k]! * re[k]! + im[k]! * im[k]!;
      // A narrowband line: only the bins below the edge are tracked (see NB_EDGE_HZ). Energy up
      // there for NB_EXIT hops in a row brings the whole spectrum back (those bins resume from
      // their old state); a lone hop of it (a clipped peak's distortion) just gets the floor there.
      if (high <= low * NB_RATIO || high <= b.skipAbs) {
        this.wideHops = 0;
        if (this.narrowHops < NB_HOPS) this.narrowHops++;
      } else if (++this.wideHops >= NB_EXIT) this.narrowHops = 0;
      if (this.hops > 0 && this.narrowHops >= NB_HOPS) bins = skipEdge;
    }

    this.trackNoise(power, bins);
    this.computeGain(power, gain, bins);

    for (let k = 0; k < allBins; k++) {
      re[k] = re[k]! * gain[k]!;
      im[k] = im[k]! * gain[k]!;
    }
    b.fft.inverse(re, im, time);
    // Overlap-add: the first half completes this hop's output, the second half waits. What the
    // filter spreads past the window (into the zero padding) is dropped by the synthesis window.
    const tail = this.tail;
    for (let n = 0; n < hop; n++) {
      const y = tail[n]! + time[n]! * window[n]!;
      tail[n] = time[hop + n]! * window[hop + n]!;
      const v = Math.round(y);
      out[at + n] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    this.hops++;
  }

  /** MCRA noise PSD update from this hop's periodogram, for bins below `bins`. */
  private trackNoise(power: Float64Array, bins: number): void {
    const { smoothed, minimum, subMinimum, pastMinimum, presence, noise } = this;
    const last = this.band.bins - 1;
    const first = this.hops === 0;
    for (let k = 0; k < bins; k++) {
      // Frequency smoothing (1/4, 1/2, 1/4; mirrored at the edges) before time smoothing: a
      // steadier estimate for the minimum search, as in MCRA's b(i) window.
      const lo = power[k === 0 ? 1 : k - 1]!;
      const hi = power[k === last ? last - 1 : k + 1]!;
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
    const bins = this.band.bins;
    for (let k = 0; k < bins; k++) {
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
    const floor = this.band.gainFloor;
    const allBins = this.band.bins;
    for (let k = bins; k < allBins; k++) gain[k] = floor;
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
    for (let k = 1; k < allBins - 1; k++) {
      const cur = gain[k]!;
      gain[k] = 0.25 * prev + 0.5 * cur + 0.25 * gain[k + 1]!;
      prev = cur;
    }
  }
}
