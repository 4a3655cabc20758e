/**
 * The resampler's filters, designed once per process and shared by every stream
 * (./resample.ts runs them; its header gives each path's measured response):
 * - the general windowed-sinc (Kaiser) polyphase bank for any rational ratio, cached per
 *   reduced ratio, plus the telephone-band 24 → 16 kHz bank;
 * - the 35-tap half-band filter of the exact 2:1 ratios.
 */

/** Zero crossings of the sinc on each side, counted at the lower of the two rates. */
const HALF_ZERO_CROSSINGS = 16;
/** Passband edge as a fraction of the lower Nyquist: leaves room for the transition band. */
const ROLLOFF = 0.9;
/** Kaiser beta: about 80 dB stopband, well below 16-bit telephony noise. */
const KAISER_BETA = 8;
/** Guards against absurd rate pairs (e.g. 44101 → 16000) that would need a huge table. */
const MAX_PHASES = 2048;
/**
 * The telephone-band 24 → 16 kHz filter (resample.ts, header): centre (= taps per phase) at the 48 kHz
 * virtual rate, cutoff and Kaiser beta.
 */
export const TELEPHONE_CENTRE = 12;
export const TELEPHONE_CUTOFF_HZ = 7300;
export const TELEPHONE_BETA = 7.5;

export interface FilterBank {
  /** Upsampling factor L: number of phases. */
  readonly up: number;
  /** Downsampling factor M. */
  readonly down: number;
  /** Taps per phase. */
  readonly taps: number;
  /**
   * Phase p's taps, newest input sample first. The values are float32 (the table's precision)
   * held in doubles: the hot loops then load without a conversion, and products are unchanged.
   */
  readonly phases: readonly Float64Array[];
  /** Group delay of the filter, in output samples. */
  readonly delay: number;
}

const banks = new Map<string, FilterBank>();

/** Half-band filter length (4K - 1 taps, K = 9) and Kaiser beta; see the header for its response. */
const HALF_BAND_TAPS = 35;
const HALF_BAND_BETA = 6;
/** Centre tap index; side taps sit at odd distances 1, 3, ..., HB_CENTRE from it. */
export const HB_CENTRE = (HALF_BAND_TAPS - 1) / 2;
/** Non-zero side taps on each side of the centre. */
export const HB_SIDE = (HB_CENTRE + 1) / 2;

export interface HalfBand {
  /** Decimation: centre tap, and side taps g[t] at distance 2t + 1 (both sides). Sum is 1. */
  readonly downCentre: number;
  readonly downSide: Float64Array;
  /** Interpolation, even phase: taps at distance 2t + 1 around the half-sample point, sum 1. */
  readonly upSide: Float64Array;
}

let halfBandCache: HalfBand | undefined;

export function halfBand(): HalfBand {
  if (halfBandCache) return halfBandCache;
  const i0Beta = besselI0(HALF_BAND_BETA);
  const side = new Float64Array(HB_SIDE);
  // h[c ± d] for odd d: the ideal half-band sinc (cutoff at a quarter of the high rate), windowed.
  for (let t = 0; t < HB_SIDE; t++) {
    const d = 2 * t + 1;
    const r = d / HB_CENTRE;
    const window = besselI0(HALF_BAND_BETA * Math.sqrt(Math.max(0, 1 - r * r))) / i0Beta;
    side[t] = (Math.sin((Math.PI * d) / 2) / (Math.PI * d)) * window;
  }
  let sideSum = 0;
  for (const g of side) sideSum += 2 * g;
  // Each phase normalised to unit DC gain, as in the general bank: the centre phase is a plain
  // copy (0.5 after ×2 interpolation gain), the side phase sums to exactly 1 (0.5 going down).
  const upSide = side.map((g) => g / sideSum);
  const downSide = side.map((g) => (0.5 * g) / sideSum);
  halfBandCache = { downCentre: 0.5, downSide, upSide };
  return halfBandCache;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Modified Bessel function of the first kind, order 0 (for the Kaiser window). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

export function filterBank(fromRate: number, toRate: number): FilterBank {
  const g = gcd(fromRate, toRate);
  const up = toRate / g;
  const down = fromRate / g;
  // The table depends only on the reduced ratio (24 → 16 and 48 → 32 kHz share one).
  const key = `${up}:${down}`;
  const cached = banks.get(key);
  if (cached) return cached;
  if (up > MAX_PHASES) throw new RangeError(`resampling ${fromRate} → ${toRate} Hz needs ${up} filter phases`);
  // Span the sinc over the same number of zero crossings at the lower rate whichever way we go:
  // downsampling therefore needs proportionally more input taps. The centre is rounded up to a
  // multiple of `down` so the group delay is a whole number of output samples, which lets
  // callers line streams up exactly.
  const halfSpan = up * HALF_ZERO_CROSSINGS * Math.max(1, Math.ceil(down / up));
  const centre = Math.ceil(halfSpan / down) * down;
  // Cutoff in cycles per sample of the virtual upsampled signal (rate up * fromRate).
  const cutoff = (ROLLOFF * 0.5 * Math.min(1, up / down)) / up;
  const bank = kaiserBank(up, down, centre, cutoff, KAISER_BETA);
  banks.set(key, bank);
  return bank;
}

/**
 * A Kaiser-windowed sinc centred on virtual sample `centre` (a multiple of `down`, the window
 * reaching zero `centre` samples either side), `cutoff` in cycles per virtual sample, cut into
 * `up` phases of taps each normalised to unit DC gain.
 */
export function kaiserBank(up: number, down: number, centre: number, cutoff: number, beta: number): FilterBank {
  const taps = Math.ceil((2 * centre) / up);
  const length = up * taps;
  const i0Beta = besselI0(beta);
  const proto = new Float64Array(length);
  for (let m = 0; m < length; m++) {
    const t = m - centre;
    const x = 2 * cutoff * t;
    const sinc = t === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    const r = t / centre;
    const window = Math.abs(r) >= 1 ? 0 : besselI0(beta * Math.sqrt(1 - r * r)) / i0Beta;
    proto[m] = sinc * window;
  }
  // Phase p's taps are proto[p + k*up]. Normalising each phase to unit DC gain avoids a small
  // phase-dependent gain ripple that would otherwise be heard as a faint tone at the ratio rate.
  const phases: Float64Array[] = [];
  for (let p = 0; p < up; p++) {
    let sum = 0;
    for (let k = 0; k < taps; k++) sum += proto[p + k * up]!;
    const phase = new Float64Array(taps);
    for (let k = 0; k < taps; k++) phase[k] = Math.fround(proto[p + k * up]! / sum);
    phases.push(phase);
  }
  return { up, down, taps, phases, delay: centre / down };
}
