/**
 * The spectral suppressor itself, at either rate it runs at: 16 kHz (wideband streams) or 8 kHz
 * (narrowband streams, on a G.711 call's 8 kHz frames as they come; see ./denoise-spectral.ts). Classic
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
import { nativeDsp, type NativeDsp } from './native-dsp.ts';
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

// Telephone band inside wideband streams. G.711 calls get narrowband streams at 8 kHz, but 16 kHz
// audio may still be telephone band (upsampled 8 kHz: a wideband codec whose far end is the
// PSTN, a call that moved to a wideband codec), with nothing but the resampler's leakage (−60 dB
// and below from 5 kHz) above 4 kHz. While that holds, tracking noise and computing a gain for the empty bins is wasted
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

// Per-bin state (SpectralCore.state), at bin · STATE + one of:
/** Periodogram smoothed over frequency and time (MCRA's S). */
const S_SMOOTHED = 0;
/** Its minimum so far in the current sub-window. */
const S_SUB_MINIMUM = 1;
/** The minimum over the last SUB_WINDOWS complete sub-windows. */
const S_PAST_MINIMUM = 2;
/** Smoothed speech-presence probability. */
const S_PRESENCE = 3;
/** Noise PSD estimate. */
const S_NOISE = 4;
/** Previous hop's |clean estimate|² / noise, for the decision-directed a-priori SNR. */
const S_PREV_SNR = 5;
const STATE = 6;

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

/** h(v) from the table (see LSA_TABLE); small enough for the JIT to inline. */
function lsa(v: number): number {
  if (v >= LSA_MAX_V) return Math.sqrt(v);
  const x = v * LSA_STEP;
  const i = x | 0;
  const t = LSA_TABLE[i]!;
  return t + (x - i) * (LSA_TABLE[i + 1]! - t);
}

// Branch-free max for the gain loop. V8 compiles Math.max and `?:` on doubles to compares and
// jumps; where the outcome is a coin toss per bin (ξ or the gain at their floors in noise) the
// mispredictions cost about 7 % of a whole hop (measured at 8 kHz). Both give exactly
// Math.max's result for the finite values they get.

/** max(x, 0): x + |x| is 2x or 0, exactly. */
function pos(x: number): number {
  return (x + Math.abs(x)) * 0.5;
}

/** Scratch for `maxOf` (code runs synchronously, so one serves every stream). */
const SEL = new Float64Array(2);
/** max(a, b) for finite a, b: the comparison picks a slot (a set-on-condition, no jump). */
function maxOf(a: number, b: number): number {
  SEL[0] = a;
  SEL[1] = b;
  return SEL[+(a < b)]!;
}

/** The rates the suppressor runs at. */
export type SpectralRate = 8000 | 16000;

export interface SpectralBandOptions {
  /** Most attenuation applied to any bin, as a linear amplitude gain (0..1]. */
  gainFloor: number;
  /** At 16 kHz: skip the empty band above 5 kHz of telephone-band audio. Ignored at 8 kHz. */
  narrowbandSkip: boolean;
  /**
   * Run the hops in native/dsp's C core when that module is built and enabled (the same output,
   * bit for bit; see ./native-dsp.ts). Default false: this file's TypeScript.
   */
  native?: boolean;
}

/** What a stream needs of its suppressor: whole hops in, as many samples out. */
export interface HopRunner {
  /** Denoise `input` (a whole number of hops) into `out` (as long). */
  frames(input: Int16Array, out: Int16Array): void;
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
  /**
   * Scratch: the windowed frame (nfft long, its zero padding never written), the spectrum, its
   * power and gain, the synthesised frame times the synthesis window (its first `win` samples).
   */
  readonly frame: Float64Array;
  readonly re: Float64Array;
  readonly im: Float64Array;
  readonly power: Float64Array;
  readonly gain: Float64Array;
  readonly time: Float64Array;
  /** The C core's module and its twin of this band, when `options.native` and it is built. */
  readonly native: { module: NativeDsp; band: object } | undefined;

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
    this.skipEdge = rate === 16000 && options.narrowbandSkip ? Math.round((NB_EDGE_HZ * this.nfft) / rate) | 0 : this.bins;
    this.skipAbs = NB_ABS_PER_BIN * (this.bins - this.skipEdge);
    this.fft = new RealFft(this.nfft);
    this.window = new Float64Array(this.win);
    // Periodic sqrt-Hann: sin(πn/N). Squared windows at hop N/2 sum to exactly 1.
    for (let n = 0; n < this.win; n++) this.window[n] = Math.sin((Math.PI * n) / this.win);
    this.frame = new Float64Array(this.nfft);
    this.re = new Float64Array(this.bins);
    this.im = new Float64Array(this.bins);
    this.power = new Float64Array(this.bins);
    this.gain = new Float64Array(this.bins);
    this.time = new Float64Array(this.nfft);
    const module = options.native ? nativeDsp() : undefined;
    this.native = module ? { module, band: module.createBand(...nativeBandArgs(this)) } : undefined;
  }

  /** One stream's suppressor: the C core's when the band has one, else a SpectralCore. */
  createCore(): HopRunner {
    const native = this.native;
    if (!native) return new SpectralCore(this);
    const core = native.module.createCore(native.band);
    return { frames: (input, out) => native.module.process(core, input, out) };
  }
}

/**
 * createBand's arguments (native/dsp/spectral.c): the sizes and every constant above, in its
 * P_* order, then the tables, the very values this file computes with (the C side evaluates no
 * libm function, so both compute the same bits).
 */
function nativeBandArgs(b: SpectralBand): Parameters<NativeDsp['createBand']> {
  const params = Float64Array.of(
    b.hop, b.win, b.nfft, b.bins, b.gainFloor, b.skipEdge, b.skipAbs,
    ALPHA_S, ALPHA_D, ALPHA_P, DELTA, SUB_WINDOWS, SUB_HOPS,
    ALPHA_DD, XI_MIN, NOISE_FLOOR, NB_RATIO, NB_EXIT, NB_HOPS,
    LSA_STEP, LSA_MAX_V,
  );
  const { rev, stages, split } = b.fft.tables();
  return [params, b.window, LSA_TABLE, rev, stages, split];
}

/**
 * One call's suppressor state at one rate: `hop()` turns `band.hop` input samples into as many
 * output samples, one hop (10 ms) later. Digital silence in gives digital silence out.
 */
export class SpectralCore implements HopRunner {
  /** The previous hop's input samples (first half of the next analysis window). */
  private readonly history: Float64Array;
  /** Second half of the previous hop's synthesis, waiting to be overlap-added. */
  private readonly tail: Float64Array;
  private hops = 0;
  /**
   * MCRA and gain state, per bin, interleaved: bin k's values at k · STATE + S_* (see there). One
   * array instead of six: fewer arrays for the optimised per-bin loops to check and keep in
   * registers, and one bin's state in one cache line or two.
   */
  private readonly state: Float64Array;
  /** Minima of the last SUB_WINDOWS complete sub-windows, SUB_WINDOWS per bin. */
  private readonly pastMinima: Float64Array;
  /** Consecutive hops whose band above the skip edge was empty (capped at NB_HOPS). */
  private narrowHops = 0;
  /** Consecutive hops with energy above the skip edge. */
  private wideHops = 0;

  constructor(readonly band: SpectralBand) {
    const { hop, bins } = band;
    this.history = new Float64Array(hop);
    this.tail = new Float64Array(hop);
    this.state = new Float64Array(STATE * bins);
    this.pastMinima = new Float64Array(SUB_WINDOWS * bins);
  }

  frames(input: Int16Array, out: Int16Array): void {
    for (let at = 0; at < input.length; at += this.band.hop) this.hop(input, at, out);
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
    // `frame` is nfft long: its zero padding is never written.
    b.fft.forwardPower(frame, re, im, power);
    let bins = allBins;
    if (skipEdge < allBins) {
      let low = 0;
      for (let k = 0; k < skipEdge; k++) low += power[k]!;
      let high = 0;
      for (let k = skipEdge; k < allBins; k++) high += power[k]!;
      // A narrowband line: only the bins below the edge are tracked (see NB_EDGE_HZ). Energy up
      // there for NB_EXIT hops in a row brings the whole spectrum back (those bins resume from
      // their old state); a lone hop of it (a clipped peak's distortion) just gets the floor there.
      if (high <= low * NB_RATIO || high <= b.skipAbs) {
        this.wideHops = 0;
        if (this.narrowHops < NB_HOPS) this.narrowHops++;
      } else if (++this.wideHops >= NB_EXIT) this.narrowHops = 0;
      if (this.hops > 0 && this.narrowHops >= NB_HOPS) bins = skipEdge;
    }

    if (this.hops === 0) this.startNoise(power);
    this.update(power, gain, bins);
    if (this.hops > 0 && this.hops % SUB_HOPS === 0) this.rollSubWindow();

    // The gain is applied inside the inverse transform, and the synthesis window with it.
    b.fft.inverseWindowed(re, im, gain, window, time);
    // Overlap-add: the first half completes this hop's output, the second half waits. What the
    // filter spreads past the window (into the zero padding) is dropped by the synthesis window.
    const tail = this.tail;
    for (let n = 0; n < hop; n++) {
      const y = tail[n]! + time[n]!;
      tail[n] = time[hop + n]!;
      // Math.round(y), without its jump on the fraction (a coin toss per sample, so mispredicted
      // half the time: about half this loop's time). floor(y + 0.5) is the same
      // except where the addition rounds up to the next integer (y = 0.5 − 2⁻⁵⁴); the test
      // below catches exactly that case, and is never taken otherwise.
      let v = Math.floor(y + 0.5);
      if (v - 0.5 > y) v -= 1;
      out[at + n] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    this.hops++;
  }

  /**
   * The first hop's MCRA state: calls open on line noise, not speech, so every estimate starts
   * from this periodogram (frequency-smoothed as in `update`). `update` then leaves it as is.
   */
  private startNoise(power: Float64Array): void {
    const { state, pastMinima } = this;
    const last = this.band.bins - 1;
    for (let k = 0; k <= last; k++) {
      const lo = power[k === 0 ? 1 : k - 1]!;
      const hi = power[k === last ? last - 1 : k + 1]!;
      const sf = 0.25 * lo + 0.5 * power[k]! + 0.25 * hi;
      const at = k * STATE;
      state[at + S_SMOOTHED] = sf;
      state[at + S_SUB_MINIMUM] = sf;
      state[at + S_PAST_MINIMUM] = sf;
      pastMinima.fill(sf, k * SUB_WINDOWS, (k + 1) * SUB_WINDOWS);
      state[at + S_NOISE] = Math.max(sf, NOISE_FLOOR);
    }
  }

  /**
   * The bins below `bins`: the MCRA noise PSD update from this hop's periodogram (not on the
   * first hop, see `startNoise`), then decision-directed a-priori SNR → LSA gain → floor, into
   * `gain`; then the smoothing of the gain across all bins. Bins from `bins` up (an empty band)
   * keep their noise state and get the floor.
   */
  private update(power: Float64Array, gain: Float64Array, bins: number): void {
    const state = this.state;
    const floor = this.band.gainFloor;
    const allBins = this.band.bins;
    const last = allBins - 1;
    const track = this.hops > 0;
    // Two passes rather than one: each bin's maths is a long chain of dependent operations
    // (divisions and square roots in the gain), and shorter loop bodies let the CPU overlap the
    // chains of several bins (measured: one fused pass was ~10 % slower).
    if (track) {
      let lo = power[1]!;
      let pk = power[0]!;
      for (let k = 0, at = 0; k < bins; k++, at += STATE) {
        // Frequency smoothing (1/4, 1/2, 1/4; mirrored at the edges) before time smoothing: a
        // steadier estimate for the minimum search, as in MCRA's b(i) window.
        const hi = power[k === last ? last - 1 : k + 1]!;
        const sf = 0.25 * lo + 0.5 * pk + 0.25 * hi;
        const s = ALPHA_S * state[at + S_SMOOTHED]! + (1 - ALPHA_S) * sf;
        state[at + S_SMOOTHED] = s;
        const sub = Math.min(state[at + S_SUB_MINIMUM]!, s);
        state[at + S_SUB_MINIMUM] = sub;
        const m = Math.min(state[at + S_PAST_MINIMUM]!, sub);
        const speech = +(s > DELTA * m);
        const p = ALPHA_P * state[at + S_PRESENCE]! + (1 - ALPHA_P) * speech;
        state[at + S_PRESENCE] = p;
        const a = ALPHA_D + (1 - ALPHA_D) * p;
        state[at + S_NOISE] = Math.max(a * state[at + S_NOISE]! + (1 - a) * pk, NOISE_FLOOR);
        lo = pk;
        pk = hi;
      }
    }
    // The gain, two bins at a time: the two chains of divisions and square roots interleave. A
    // zero bin (digital silence) stays zero whatever the gain, so it gets the floor and ξ stays
    // low: its γ is 0, so the maths below gives g = 1 (from √∞) and |clean|²/noise = 0 anyway.
    let k = 0;
    for (let at = 0; k + 1 < bins; k += 2, at += 2 * STATE) {
      const bt = at + STATE;
      const p0 = power[k]!;
      const p1 = power[k + 1]!;
      const gamma0 = p0 / state[at + S_NOISE]!;
      const gamma1 = p1 / state[bt + S_NOISE]!;
      const xi0 = maxOf(ALPHA_DD * state[at + S_PREV_SNR]! + (1 - ALPHA_DD) * pos(gamma0 - 1), XI_MIN);
      const xi1 = maxOf(ALPHA_DD * state[bt + S_PREV_SNR]! + (1 - ALPHA_DD) * pos(gamma1 - 1), XI_MIN);
      const w0 = xi0 / (1 + xi0);
      const w1 = xi1 / (1 + xi1);
      const v0 = w0 * gamma0;
      const v1 = w1 * gamma1;
      const g0 = Math.min(Math.sqrt(w0 / gamma0) * lsa(v0), 1);
      const g1 = Math.min(Math.sqrt(w1 / gamma1) * lsa(v1), 1);
      // The unfloored estimate feeds the next a-priori SNR: feeding back the floor would raise
      // ξ in noise-only bins and undo part of the attenuation.
      state[at + S_PREV_SNR] = g0 * g0 * gamma0;
      state[bt + S_PREV_SNR] = g1 * g1 * gamma1;
      gain[k] = p0 === 0 ? floor : maxOf(g0, floor);
      gain[k + 1] = p1 === 0 ? floor : maxOf(g1, floor);
    }
    if (k < bins) {
      const at = k * STATE;
      const p0 = power[k]!;
      const gamma0 = p0 / state[at + S_NOISE]!;
      const xi0 = maxOf(ALPHA_DD * state[at + S_PREV_SNR]! + (1 - ALPHA_DD) * pos(gamma0 - 1), XI_MIN);
      const w0 = xi0 / (1 + xi0);
      const g0 = Math.min(Math.sqrt(w0 / gamma0) * lsa(w0 * gamma0), 1);
      state[at + S_PREV_SNR] = g0 * g0 * gamma0;
      gain[k] = p0 === 0 ? floor : maxOf(g0, floor);
    }
    for (k = bins; k < allBins; k++) gain[k] = floor;
    // Spectral smoothing of the gain, in place with a one-bin lag.
    let prev = gain[0]!;
    for (k = 1; k < last; k++) {
      const cur = gain[k]!;
      gain[k] = 0.25 * prev + 0.5 * cur + 0.25 * gain[k + 1]!;
      prev = cur;
    }
  }

  /** Close a sub-window: store its minimum, drop the oldest, recompute the running minimum. */
  private rollSubWindow(): void {
    const slot = (this.hops / SUB_HOPS) % SUB_WINDOWS;
    const { pastMinima, state } = this;
    const bins = this.band.bins;
    for (let k = 0; k < bins; k++) {
      const base = k * SUB_WINDOWS;
      const at = k * STATE;
      pastMinima[base + slot] = state[at + S_SUB_MINIMUM]!;
      let m = pastMinima[base]!;
      for (let u = 1; u < SUB_WINDOWS; u++) m = Math.min(m, pastMinima[base + u]!);
      state[at + S_PAST_MINIMUM] = m;
      state[at + S_SUB_MINIMUM] = state[at + S_SMOOTHED]!;
    }
  }
}
