/**
 * Streaming rational resampler: a polyphase windowed-sinc (Kaiser) FIR. One instance per stream
 * keeps the filter history, so audio cut into 20 ms chunks comes out exactly as if it had been
 * processed in one piece (no clicks at frame boundaries). Filter tables depend only on the rate
 * pair and are built once and shared between calls.
 */

/** Zero crossings of the sinc on each side, counted at the lower of the two rates. */
const HALF_ZERO_CROSSINGS = 16;
/** Passband edge as a fraction of the lower Nyquist: leaves room for the transition band. */
const ROLLOFF = 0.9;
/** Kaiser beta: about 80 dB stopband, well below 16-bit telephony noise. */
const KAISER_BETA = 8;
/** Guards against absurd rate pairs (e.g. 44101 → 16000) that would need a huge table. */
const MAX_PHASES = 2048;

interface FilterBank {
  /** Upsampling factor L: number of phases. */
  readonly up: number;
  /** Downsampling factor M. */
  readonly down: number;
  /** Taps per phase. */
  readonly taps: number;
  /** Phase-major coefficients: phase p's taps are coeffs[p*taps .. p*taps+taps). */
  readonly coeffs: Float32Array;
  /** Group delay of the filter, in output samples. */
  readonly delay: number;
}

const banks = new Map<string, FilterBank>();

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

function filterBank(fromRate: number, toRate: number): FilterBank {
  const key = `${fromRate}:${toRate}`;
  const cached = banks.get(key);
  if (cached) return cached;
  const g = gcd(fromRate, toRate);
  const up = toRate / g;
  const down = fromRate / g;
  if (up > MAX_PHASES) throw new RangeError(`resampling ${fromRate} → ${toRate} Hz needs ${up} filter phases`);
  // Span the sinc over the same number of zero crossings at the lower rate whichever way we go:
  // downsampling therefore needs proportionally more input taps. The centre is rounded up to a
  // multiple of `down` so the group delay is a whole number of output samples, which lets
  // callers line streams up exactly.
  const halfSpan = up * HALF_ZERO_CROSSINGS * Math.max(1, Math.ceil(down / up));
  const centre = Math.ceil(halfSpan / down) * down;
  const taps = Math.ceil((2 * centre) / up);
  const length = up * taps;
  // Cutoff in cycles per sample of the virtual upsampled signal (rate up * fromRate).
  const cutoff = (ROLLOFF * 0.5 * Math.min(1, up / down)) / up;
  const i0Beta = besselI0(KAISER_BETA);
  const proto = new Float64Array(length);
  for (let m = 0; m < length; m++) {
    const t = m - centre;
    const x = 2 * cutoff * t;
    const sinc = t === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    const r = t / centre;
    const window = Math.abs(r) >= 1 ? 0 : besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / i0Beta;
    proto[m] = sinc * window;
  }
  // Phase p's taps are proto[p + k*up]. Normalising each phase to unit DC gain avoids a small
  // phase-dependent gain ripple that would otherwise be heard as a faint tone at the ratio rate.
  const coeffs = new Float32Array(length);
  for (let p = 0; p < up; p++) {
    let sum = 0;
    for (let k = 0; k < taps; k++) sum += proto[p + k * up]!;
    for (let k = 0; k < taps; k++) coeffs[p * taps + k] = proto[p + k * up]! / sum;
  }
  const bank: FilterBank = { up, down, taps, coeffs, delay: centre / down };
  banks.set(key, bank);
  return bank;
}

export class Resampler {
  private readonly bank: FilterBank | undefined;
  /** Last taps-1 input samples followed by the current chunk; grown only when a bigger chunk arrives. */
  private work: Float32Array;
  /** Index of the next output's newest input sample, relative to the start of the next chunk. */
  private nextIndex = 0;
  /** Filter phase (0..up-1) of the next output. */
  private phase = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    if (!Number.isInteger(fromRate) || !Number.isInteger(toRate) || fromRate <= 0 || toRate <= 0) {
      throw new RangeError(`invalid sample rates ${fromRate} → ${toRate}`);
    }
    this.bank = fromRate === toRate ? undefined : filterBank(fromRate, toRate);
    this.work = new Float32Array((this.bank?.taps ?? 1) - 1 + 1024);
  }

  /** Latency added by the filter, in output samples (0 when the rates match). */
  get delay(): number {
    return this.bank?.delay ?? 0;
  }

  /** Resample one chunk; the output length varies by at most one sample around n*to/from. */
  process(input: Int16Array): Int16Array {
    const bank = this.bank;
    if (!bank) return input.slice();
    const { up, down, taps, coeffs } = bank;
    const hist = taps - 1;
    const n = input.length;
    if (this.work.length < hist + n) {
      const grown = new Float32Array(hist + n);
      grown.set(this.work.subarray(0, hist));
      this.work = grown;
    }
    const work = this.work;
    for (let i = 0; i < n; i++) work[hist + i] = input[i]!;

    // Outputs whose newest input sample falls inside this chunk: i0 + floor((p0 + k*down)/up) < n.
    let i = this.nextIndex;
    let p = this.phase;
    const count = Math.max(0, Math.ceil(((n - i) * up - p) / down));
    const out = new Int16Array(count);
    for (let o = 0; o < count; o++) {
      const newest = hist + i;
      const base = p * taps;
      let acc = 0;
      for (let k = 0; k < taps; k++) acc += work[newest - k]! * coeffs[base + k]!;
      out[o] = acc >= 32767 ? 32767 : acc <= -32768 ? -32768 : Math.round(acc);
      p += down;
      while (p >= up) {
        p -= up;
        i++;
      }
    }
    this.nextIndex = i - n;
    this.phase = p;
    // Keep the newest taps-1 samples as history for the next chunk.
    work.copyWithin(0, n, n + hist);
    return out;
  }

  /** Push zeros through to release the samples still inside the filter (end of stream). */
  flush(): Int16Array {
    if (!this.bank) return new Int16Array(0);
    const zeros = new Int16Array(Math.ceil((this.bank.delay * this.bank.down) / this.bank.up) + 1);
    return this.process(zeros);
  }

  reset(): void {
    this.work.fill(0);
    this.nextIndex = 0;
    this.phase = 0;
  }
}

/**
 * Resample a whole buffer at once, compensating the filter delay so the output lines up with
 * the input sample for sample (for files and tests; streams should keep a Resampler).
 */
export function resample(pcm: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate) return pcm.slice();
  const r = new Resampler(fromRate, toRate);
  const body = r.process(pcm);
  const tail = r.flush();
  const all = new Int16Array(body.length + tail.length);
  all.set(body);
  all.set(tail, body.length);
  const skip = Math.round(r.delay);
  const want = Math.round((pcm.length * toRate) / fromRate);
  const out = new Int16Array(want);
  out.set(all.subarray(skip, skip + want));
  return out;
}
