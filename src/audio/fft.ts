/**
 * A small real-input FFT for the spectral denoiser (src/audio/denoise-spectral.ts).
 *
 * Why our own: the denoiser runs one forward and one inverse transform per 10 ms hop on every
 * call with noise cancellation, so what matters is no allocation and no per-call setup, not
 * generality. A real N-point transform is computed as one complex N/2-point radix-2 transform of
 * the even/odd samples packed as re/im, plus a split step (the classic "two-for-one" trick),
 * which halves the work against a complex N-point FFT. Twiddles, the split-step rotations and
 * the bit-reversal permutation are precomputed once per size; the instance owns its scratch
 * buffers, so it is single-threaded by design: one instance per stream, or shared between
 * streams only because JS runs each `process()` to completion.
 *
 * Besides `forward`/`inverse`, two entry points for an STFT's two ends save it a pass over the
 * spectrum each: `forwardPower` (the power spectrum computed in the split step) and
 * `inverseWindowed` (a per-bin gain applied in the inverse split, the synthesis window in the
 * output). Every path does the very same floating-point operations as the plain transforms (bins
 * k and N/2 − k share their sums up to exact negations, packing reads straight into the first
 * butterfly pass, ∓i twiddles are tabulated rather than applied as a sign), so the results are
 * bit for bit those of `forward`/`inverse` followed by the separate loops.
 */

export class RealFft {
  /** Transform size N (a power of two, ≥ 8). Spectra have N/2 + 1 bins. */
  readonly size: number;
  readonly bins: number;
  private readonly half: number;
  private readonly rev: Uint32Array;
  /**
   * Per-stage twiddles, stage with half-length h at [h, 2h): e^{-2πij/(2h)} (and the conjugate
   * for the inverse), so each stage reads one contiguous run.
   */
  private readonly stRe: Float64Array;
  private readonly stIm: Float64Array;
  private readonly stImInv: Float64Array;
  /**
   * The same twiddles times ∓i (forward −i, inverse +i: exact, a swap and a sign), for the odd
   * pair of the second stage of each two-stage pass.
   */
  private readonly st3Re: Float64Array;
  private readonly st3Im: Float64Array;
  private readonly st3ReInv: Float64Array;
  private readonly st3ImInv: Float64Array;
  /** Split-step rotations e^{-2πik/N}, k ≤ N/2. */
  private readonly spRe: Float64Array;
  private readonly spIm: Float64Array;
  /** Scratch: the packed N/2-point complex signal. */
  private readonly zRe: Float64Array;
  private readonly zIm: Float64Array;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 8 || (size & (size - 1)) !== 0) {
      throw new RangeError(`FFT size must be a power of two ≥ 8, got ${size}`);
    }
    this.size = size;
    this.half = size >> 1;
    this.bins = this.half + 1;
    const m = this.half;
    const bits = Math.log2(m);
    this.rev = new Uint32Array(m);
    for (let i = 0; i < m; i++) {
      let r = 0;
      for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
      this.rev[i] = r;
    }
    this.stRe = new Float64Array(m);
    this.stIm = new Float64Array(m);
    this.stImInv = new Float64Array(m);
    for (let h = 1; h < m; h <<= 1) {
      for (let j = 0; j < h; j++) {
        const a = (Math.PI * j) / h;
        this.stRe[h + j] = Math.cos(a);
        this.stIm[h + j] = -Math.sin(a);
        this.stImInv[h + j] = Math.sin(a);
      }
    }
    this.st3Re = this.stIm.map((x) => x);
    this.st3Im = this.stRe.map((x) => -x);
    this.st3ReInv = this.stImInv.map((x) => -x);
    this.st3ImInv = this.stRe.slice();
    this.spRe = new Float64Array(m + 1);
    this.spIm = new Float64Array(m + 1);
    for (let k = 0; k <= m; k++) {
      this.spRe[k] = Math.cos((2 * Math.PI * k) / size);
      this.spIm[k] = -Math.sin((2 * Math.PI * k) / size);
    }
    this.zRe = new Float64Array(m);
    this.zIm = new Float64Array(m);
  }

  /**
   * The tables, for the spectral denoiser's native core (native/dsp/spectral.c), which must
   * compute with exactly these values: the bit-reversal permutation, the seven per-stage twiddle
   * tables end to end (stRe, stIm, stImInv, st3Re, st3Im, st3ReInv, st3ImInv: N/2 each), and the
   * split rotations (spRe then spIm: N/2 + 1 each). Copies.
   */
  tables(): { rev: Uint32Array; stages: Float64Array; split: Float64Array } {
    const m = this.half;
    const stages = new Float64Array(7 * m);
    [this.stRe, this.stIm, this.stImInv, this.st3Re, this.st3Im, this.st3ReInv, this.st3ImInv].forEach((t, i) => stages.set(t, i * m));
    const split = new Float64Array(2 * (m + 1));
    split.set(this.spRe, 0);
    split.set(this.spIm, m + 1);
    return { rev: this.rev.slice(), stages, split };
  }

  /**
   * Forward transform of `input` (N real samples; shorter input is zero-padded) into
   * `outRe`/`outIm` (N/2 + 1 bins each). Unnormalised: X[k] = Σ x[n] e^{-2πikn/N}.
   */
  forward(input: Float64Array, outRe: Float64Array, outIm: Float64Array): void {
    if (input.length >= this.size) {
      this.packFirstStages(input);
    } else {
      const m = this.half;
      const zRe = this.zRe;
      const zIm = this.zIm;
      const rev = this.rev;
      // Pack x[2n] + i·x[2n+1], already in bit-reversed order for the in-place butterflies; the
      // zero padding gets its own loop so the hot one has no per-sample bounds test.
      const len = input.length;
      const pairs = Math.min(m, len >> 1);
      for (let n = 0; n < pairs; n++) {
        const r = rev[n]!;
        zRe[r] = input[2 * n]!;
        zIm[r] = input[2 * n + 1]!;
      }
      for (let n = pairs; n < m; n++) {
        zRe[rev[n]!] = 2 * n < len ? input[2 * n]! : 0;
        zIm[rev[n]!] = 0;
      }
      this.firstStages(false);
    }
    this.laterStages(false);
    this.split(outRe, outIm, undefined);
  }

  /**
   * As `forward` (bit for bit), for a caller that wants the power spectrum too: `input` must hold
   * all N samples (zero-pad it yourself), and `outPower[k]` gets re² + im² of each bin.
   */
  forwardPower(input: Float64Array, outRe: Float64Array, outIm: Float64Array, outPower: Float64Array): void {
    if (input.length < this.size) throw new RangeError(`forwardPower needs ${this.size} samples, got ${input.length}`);
    this.packFirstStages(input);
    this.laterStages(false);
    this.split(outRe, outIm, outPower);
  }

  /**
   * Packing and the first two stages in one pass, for input of at least N samples. Butterfly
   * group p..p+3 of the first radix-4 pass holds the packed pairs at bit-reversed positions
   * rev(p) + {0, m/2, m/4, 3m/4}: read them straight from the input instead of storing them
   * permuted and loading them back. Same arithmetic as packing then `firstStages(false)`.
   */
  private packFirstStages(input: Float64Array): void {
    const m = this.half;
    const zRe = this.zRe;
    const zIm = this.zIm;
    const rev = this.rev;
    // Sample offsets of the four pairs: 2·(m/2), 2·(m/4), 2·(3m/4).
    const o1 = m;
    const o2 = m >> 1;
    const o3 = o1 + o2;
    for (let p = 0; p < m; p += 4) {
      const i0 = 2 * rev[p]!;
      const x0Re = input[i0]!, x0Im = input[i0 + 1]!;
      const x1Re = input[i0 + o1]!, x1Im = input[i0 + o1 + 1]!;
      const x2Re = input[i0 + o2]!, x2Im = input[i0 + o2 + 1]!;
      const x3Re = input[i0 + o3]!, x3Im = input[i0 + o3 + 1]!;
      const aRe = x0Re + x1Re;
      const aIm = x0Im + x1Im;
      const bRe = x0Re - x1Re;
      const bIm = x0Im - x1Im;
      const cRe = x2Re + x3Re;
      const cIm = x2Im + x3Im;
      // (x2 - x3)·(-i)
      const dRe = x2Im - x3Im;
      const dIm = -(x2Re - x3Re);
      zRe[p] = aRe + cRe;
      zIm[p] = aIm + cIm;
      zRe[p + 2] = aRe - cRe;
      zIm[p + 2] = aIm - cIm;
      zRe[p + 1] = bRe + dRe;
      zIm[p + 1] = bIm + dIm;
      zRe[p + 3] = bRe - dRe;
      zIm[p + 3] = bIm - dIm;
    }
  }

  /**
   * Split: X[k] = E[k] + W^k·O[k], with E, O recovered from Z[k] and conj(Z[m-k]). Bins k and
   * m - k share their E and O up to signs (exact negations), so they are done together.
   */
  private split(outRe: Float64Array, outIm: Float64Array, outPower: Float64Array | undefined): void {
    const m = this.half;
    const zRe = this.zRe;
    const zIm = this.zIm;
    const spRe = this.spRe;
    const spIm = this.spIm;
    {
      // k = 0 and k = m both read Z[0] twice.
      const aRe = zRe[0]!;
      const aIm = zIm[0]!;
      const eRe = 0.5 * (aRe + aRe);
      const eIm = 0.5 * (aIm - aIm);
      const oRe = 0.5 * (aIm + aIm);
      const oIm = -0.5 * (aRe - aRe);
      let wRe = spRe[0]!;
      let wIm = spIm[0]!;
      let r = eRe + wRe * oRe - wIm * oIm;
      let i = eIm + wRe * oIm + wIm * oRe;
      outRe[0] = r;
      outIm[0] = i;
      if (outPower) outPower[0] = r * r + i * i;
      wRe = spRe[m]!;
      wIm = spIm[m]!;
      r = eRe + wRe * oRe - wIm * oIm;
      i = eIm + wRe * oIm + wIm * oRe;
      outRe[m] = r;
      outIm[m] = i;
      if (outPower) outPower[m] = r * r + i * i;
    }
    const mid = m >> 1;
    for (let k = 1; k <= mid; k++) {
      const j = m - k;
      const aRe = zRe[k]!;
      const aIm = zIm[k]!;
      const bRe = zRe[j]!;
      const bIm = zIm[j]!;
      // Bin k: a = Z[k], b = conj Z[m-k].
      const eRe = 0.5 * (aRe + bRe);
      const eIm = 0.5 * (aIm - bIm);
      // (a - b) / (2i) = (aIm - bIm)/2 - i·(aRe - bRe)/2
      const oRe = 0.5 * (aIm + bIm);
      const oIm = -0.5 * (aRe - bRe);
      let wRe = spRe[k]!;
      let wIm = spIm[k]!;
      let r = eRe + wRe * oRe - wIm * oIm;
      let i = eIm + wRe * oIm + wIm * oRe;
      outRe[k] = r;
      outIm[k] = i;
      if (outPower) outPower[k] = r * r + i * i;
      if (j === k) break;
      // Bin m - k: E → conj E, O → conj O.
      wRe = spRe[j]!;
      wIm = spIm[j]!;
      r = eRe + wRe * oRe + wIm * oIm;
      i = -eIm - wRe * oIm + wIm * oRe;
      outRe[j] = r;
      outIm[j] = i;
      if (outPower) outPower[j] = r * r + i * i;
    }
  }

  /**
   * Inverse of `forward`: N/2 + 1 bins (Hermitian symmetry assumed) into N real samples in
   * `out`, scaled by 1/N so that inverse(forward(x)) = x.
   */
  inverse(re: Float64Array, im: Float64Array, out: Float64Array): void {
    this.unsplit(re, im, undefined);
    this.firstStages(true);
    this.laterStages(true);
    const m = this.half;
    const zRe = this.zRe;
    const zIm = this.zIm;
    const scale = 1 / m;
    for (let n = 0; n < m; n++) {
      out[2 * n] = zRe[n]! * scale;
      out[2 * n + 1] = zIm[n]! * scale;
    }
  }

  /**
   * The synthesis step of an STFT in one go: the inverse of the spectrum `re`/`im` weighted by
   * `gain` (per bin), then multiplied by a window. `out[n]` gets, for n < window.length (even),
   * exactly what `inverse(re·gain, im·gain)[n] · window[n]` gives, bit for bit.
   */
  inverseWindowed(re: Float64Array, im: Float64Array, gain: Float64Array, window: Float64Array, out: Float64Array): void {
    this.unsplit(re, im, gain);
    this.firstStages(true);
    this.laterStages(true);
    const zRe = this.zRe;
    const zIm = this.zIm;
    const scale = 1 / this.half;
    const pairs = window.length >> 1;
    for (let n = 0; n < pairs; n++) {
      out[2 * n] = zRe[n]! * scale * window[2 * n]!;
      out[2 * n + 1] = zIm[n]! * scale * window[2 * n + 1]!;
    }
  }

  /**
   * Undo the split, into Z in bit-reversed order: E = (X[k] + conj X[m-k])/2,
   * O = (X[k] - conj X[m-k])·W^{-k}/2, Z = E + iO. With `gain`, X[k] is re[k]·gain[k] (computed as
   * such: the same bits as scaling the spectrum first). Bins k and m - k are done together.
   */
  private unsplit(re: Float64Array, im: Float64Array, gain: Float64Array | undefined): void {
    const m = this.half;
    const zRe = this.zRe;
    const zIm = this.zIm;
    const rev = this.rev;
    const spRe = this.spRe;
    const spIm = this.spIm;
    {
      // k = 0 pairs with bin m.
      let aRe = re[0]!;
      let aIm = im[0]!;
      let bRe = re[m]!;
      let bIm = im[m]!;
      if (gain) {
        const g0 = gain[0]!;
        const gm = gain[m]!;
        aRe = aRe * g0;
        aIm = aIm * g0;
        bRe = bRe * gm;
        bIm = bIm * gm;
      }
      const eRe = 0.5 * (aRe + bRe);
      const eIm = 0.5 * (aIm - bIm);
      const dRe = 0.5 * (aRe - bRe);
      const dIm = 0.5 * (aIm + bIm);
      const wRe = spRe[0]!;
      const wIm = -spIm[0]!;
      const oRe = dRe * wRe - dIm * wIm;
      const oIm = dRe * wIm + dIm * wRe;
      zRe[0] = eRe - oIm;
      zIm[0] = eIm + oRe;
    }
    const mid = m >> 1;
    for (let k = 1; k <= mid; k++) {
      const j = m - k;
      let aRe = re[k]!;
      let aIm = im[k]!;
      let bRe = re[j]!;
      let bIm = im[j]!;
      if (gain) {
        const gk = gain[k]!;
        const gj = gain[j]!;
        aRe = aRe * gk;
        aIm = aIm * gk;
        bRe = bRe * gj;
        bIm = bIm * gj;
      }
      // Bin k: a = X[k], b = conj X[m-k] (its imaginary part negated: bIm below is X[m-k]'s).
      const eRe = 0.5 * (aRe + bRe);
      const eIm = 0.5 * (aIm - bIm);
      const dRe = 0.5 * (aRe - bRe);
      const dIm = 0.5 * (aIm + bIm);
      let wRe = spRe[k]!;
      let wIm = -spIm[k]!;
      let oRe = dRe * wRe - dIm * wIm;
      let oIm = dRe * wIm + dIm * wRe;
      let r = rev[k]!;
      zRe[r] = eRe - oIm;
      zIm[r] = eIm + oRe;
      if (j === k) break;
      // Bin m - k: E → conj E, and the difference D → -conj D.
      wRe = spRe[j]!;
      wIm = -spIm[j]!;
      oRe = -dRe * wRe - dIm * wIm;
      oIm = -dRe * wIm + dIm * wRe;
      r = rev[j]!;
      zRe[r] = eRe - oIm;
      zIm[r] = -eIm + oRe;
    }
  }

  /**
   * In-place iterative radix-2 DIT on zRe/zIm (input already bit-reversed), in two parts:
   * `firstStages` then `laterStages`. The first two stages have trivial twiddles (1, ∓i) and are
   * done together without multiplies; later stages go two at a time, read their twiddles from one
   * contiguous run per stage and reuse each across all groups. Together about 3× faster than the
   * textbook loop in V8.
   */
  private firstStages(inverse: boolean): void {
    const m = this.half;
    const zRe = this.zRe;
    const zIm = this.zIm;
    // Stages 1 and 2 as one radix-4 pass: x0..x3 → butterflies with twiddles 1 and ∓i.
    const s = inverse ? -1 : 1;
    for (let p = 0; p < m; p += 4) {
      const aRe = zRe[p]! + zRe[p + 1]!;
      const aIm = zIm[p]! + zIm[p + 1]!;
      const bRe = zRe[p]! - zRe[p + 1]!;
      const bIm = zIm[p]! - zIm[p + 1]!;
      const cRe = zRe[p + 2]! + zRe[p + 3]!;
      const cIm = zIm[p + 2]! + zIm[p + 3]!;
      // (x2 - x3)·(∓i): forward multiplies by -i, inverse by +i.
      const dRe = s * (zIm[p + 2]! - zIm[p + 3]!);
      const dIm = -s * (zRe[p + 2]! - zRe[p + 3]!);
      zRe[p] = aRe + cRe;
      zIm[p] = aIm + cIm;
      zRe[p + 2] = aRe - cRe;
      zIm[p + 2] = aIm - cIm;
      zRe[p + 1] = bRe + dRe;
      zIm[p + 1] = bIm + dIm;
      zRe[p + 3] = bRe - dRe;
      zIm[p + 3] = bIm - dIm;
    }
  }

  private laterStages(inverse: boolean): void {
    const m = this.half;
    const zRe = this.zRe;
    const zIm = this.zIm;
    const twRe = this.stRe;
    const twIm = inverse ? this.stImInv : this.stIm;
    const tw3Re = inverse ? this.st3ReInv : this.st3Re;
    const tw3Im = inverse ? this.st3ImInv : this.st3Im;
    let half = 4;
    // Two radix-2 stages per pass (half h, then 2h): the same multiplies as two passes, half the
    // loads and stores. Stage 2h's twiddle for the odd pair is the even one times ∓i, which is
    // tabulated (st3*) rather than applied as a swap and a sign per butterfly.
    for (; half * 4 <= m; half <<= 2) {
      const len = half << 2;
      for (let j = 0; j < half; j++) {
        const w1Re = twRe[half + j]!;
        const w1Im = twIm[half + j]!;
        const w2Re = twRe[2 * half + j]!;
        const w2Im = twIm[2 * half + j]!;
        const w3Re = tw3Re[2 * half + j]!;
        const w3Im = tw3Im[2 * half + j]!;
        for (let a = j; a < m; a += len) {
          const b = a + half;
          const c = b + half;
          const d = c + half;
          // Stage h: (a, b) and (c, d) with w1.
          let xRe = zRe[b]!, xIm = zIm[b]!;
          let tRe = xRe * w1Re - xIm * w1Im;
          let tIm = xRe * w1Im + xIm * w1Re;
          const aRe = zRe[a]! + tRe, aIm = zIm[a]! + tIm;
          const bRe = zRe[a]! - tRe, bIm = zIm[a]! - tIm;
          xRe = zRe[d]!;
          xIm = zIm[d]!;
          tRe = xRe * w1Re - xIm * w1Im;
          tIm = xRe * w1Im + xIm * w1Re;
          const cRe = zRe[c]! + tRe, cIm = zIm[c]! + tIm;
          const dRe = zRe[c]! - tRe, dIm = zIm[c]! - tIm;
          // Stage 2h: (a, c) with w2, (b, d) with w3 = w2·(∓i).
          tRe = cRe * w2Re - cIm * w2Im;
          tIm = cRe * w2Im + cIm * w2Re;
          zRe[a] = aRe + tRe;
          zIm[a] = aIm + tIm;
          zRe[c] = aRe - tRe;
          zIm[c] = aIm - tIm;
          tRe = dRe * w3Re - dIm * w3Im;
          tIm = dRe * w3Im + dIm * w3Re;
          zRe[b] = bRe + tRe;
          zIm[b] = bIm + tIm;
          zRe[d] = bRe - tRe;
          zIm[d] = bIm - tIm;
        }
      }
    }
    // An odd number of stages left one radix-2 stage over.
    if (half < m) {
      const len = half << 1;
      for (let j = 0; j < half; j++) {
        const wRe = twRe[half + j]!;
        const wIm = twIm[half + j]!;
        for (let p = j; p < m; p += len) {
          const q = p + half;
          const xRe = zRe[q]!;
          const xIm = zIm[q]!;
          const tRe = xRe * wRe - xIm * wIm;
          const tIm = xRe * wIm + xIm * wRe;
          const uRe = zRe[p]!;
          const uIm = zIm[p]!;
          zRe[p] = uRe + tRe;
          zIm[p] = uIm + tIm;
          zRe[q] = uRe - tRe;
          zIm[q] = uIm - tIm;
        }
      }
    }
  }
}
