/**
 * ITU-T G.722 sub-band ADPCM at 64 kbit/s (mode 1), written from the Recommendation's block
 * descriptions (QMF, QUANTL/QUANTH, INVQAL/INVQBL, LOGSCL/LOGSCH, SCALEL/SCALEH and the shared
 * predictor BLOCK 4). Integer arithmetic mirrors the spec's 16-bit fixed point so that our
 * encoder's local decoder and any conforming remote decoder track the same predictor state.
 *
 * Sample scaling: the spec works on 14-bit PCM. We keep the two extra bits of 16-bit input
 * through the QMF sums and shift once at the end, which is the same scaling with less rounding.
 */

/** QMF coefficients h0..h23 (the filter is symmetric; even and odd halves each sum to 4096). */
const QMF = [3, -11, -11, 53, 12, -156, 32, 362, -210, -805, 951, 3876,
  3876, 951, -805, -210, 362, 32, -156, 12, 53, -11, -11, 3];

/** QUANTL decision levels, in units of DETL/4096 (index 0 unused: magnitudes start at 1). */
const Q6 = [0, 35, 72, 110, 150, 190, 233, 276, 323, 370, 422, 473, 530, 587, 650, 714,
  786, 858, 940, 1023, 1121, 1219, 1339, 1458, 1612, 1765, 1980, 2195, 2557, 2919];
/** 6-bit codes for magnitude index 1..30, negative and positive error. */
const ILN = [0, 63, 62, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15,
  14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4];
const ILP = [0, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
  42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32];
/** 6-bit inverse quantiser (decoder output in mode 1); codes 0..3 are unused and map low. */
const QM6 = [-136, -136, -136, -136, -24808, -21904, -19008, -16704, -14984, -13512, -12280,
  -11192, -10232, -9360, -8576, -7856, -7192, -6576, -6000, -5456, -4944, -4464, -4008, -3576,
  -3168, -2776, -2400, -2032, -1688, -1360, -1040, -728, 24808, 21904, 19008, 16704, 14984,
  13512, 12280, 11192, 10232, 9360, 8576, 7856, 7192, 6576, 6000, 5456, 4944, 4464, 4008, 3576,
  3168, 2776, 2400, 2032, 1688, 1360, 1040, 728, 432, 136, -432, -136];
/**
 * 4-bit inverse quantiser: the predictor always adapts on the code truncated to 4 bits, so the
 * decoder stays in step whatever bit rate (mode) the receiver uses.
 */
const QM4 = [0, -20456, -12896, -8968, -6288, -4240, -2584, -1200,
  20456, 12896, 8968, 6288, 4240, 2584, 1200, 0];
/** Lower band log-scale-factor multipliers, indexed through RL42 (4-bit code → magnitude). */
const WL = [-60, -30, 58, 172, 334, 538, 1198, 3042];
const RL42 = [0, 7, 6, 5, 4, 3, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0];
/** Antilog table for the scale factors (2^(i/32) in Q11). */
const ILB = [2048, 2093, 2139, 2186, 2233, 2282, 2332, 2383, 2435, 2489, 2543, 2599, 2656,
  2714, 2774, 2834, 2896, 2960, 3025, 3091, 3158, 3228, 3298, 3371, 3444, 3520, 3597, 3676,
  3756, 3838, 3922, 4008];
/** Higher band: 2-bit codes, inverse quantiser and log-scale-factor multipliers. */
const IHN = [0, 1, 0];
const IHP = [0, 3, 2];
const QM2 = [-7408, -1616, 7408, 1616];
const WH = [0, -214, 798];
const RH2 = [2, 1, 2, 1];

const sat = (x: number): number => (x > 32767 ? 32767 : x < -32768 ? -32768 : x);
const at = (table: readonly number[], i: number): number => table[i]!;

/** Adaptive predictor and scale factor of one sub-band. */
class Band {
  /** Predicted signal (PREDIC) and its pole and zero parts. */
  s = 0;
  private sz = 0;
  /** Reconstructed signal and partial reconstruction, newest first: [n-1, n-2]. */
  private r1 = 0;
  private r2 = 0;
  private p1 = 0;
  private p2 = 0;
  /** Pole coefficients a1, a2. */
  private a1 = 0;
  private a2 = 0;
  /** Quantised differences d[n-1..n-6] and zero coefficients b1..b6 (index 0 unused). */
  private readonly d = new Int32Array(7);
  private readonly b = new Int32Array(7);
  /** Log scale factor (NBL/NBH) and linear scale factor (DETL/DETH). */
  nb = 0;
  det: number;

  constructor(
    initialDet: number,
    private readonly maxNb: number,
    private readonly scaleShift: number,
  ) {
    this.det = initialDet;
  }

  /** LOGSCL/LOGSCH + SCALEL/SCALEH: adapt the step size from the code just produced. */
  adaptScale(weight: number): void {
    let nb = ((this.nb * 32512) >> 15) + weight;
    nb = nb < 0 ? 0 : nb > this.maxNb ? this.maxNb : nb;
    this.nb = nb;
    const mantissa = at(ILB, (nb >> 6) & 31);
    const shift = this.scaleShift - (nb >> 11);
    this.det = (shift < 0 ? mantissa << -shift : mantissa >> shift) << 2;
  }

  /** BLOCK 4: reconstruct, adapt the pole-zero predictor with the quantised difference d. */
  adaptPredictor(d: number): void {
    const r0 = sat(this.s + d); // RECONS
    const p0 = sat(this.sz + d); // PARREC
    const sg0 = p0 >> 15;
    const sg1 = this.p1 >> 15;
    const sg2 = this.p2 >> 15;

    // UPPOL2
    const wd1 = sat(this.a1 * 4);
    let wd2 = sg0 === sg1 ? -wd1 : wd1;
    if (wd2 > 32767) wd2 = 32767;
    let a2 = (wd2 >> 7) + (sg0 === sg2 ? 128 : -128) + ((this.a2 * 32512) >> 15);
    a2 = a2 > 12288 ? 12288 : a2 < -12288 ? -12288 : a2;

    // UPPOL1: a1 is kept inside the stability triangle defined by a2.
    let a1 = sat(((this.a1 * 32640) >> 15) + (sg0 === sg1 ? 192 : -192));
    const limit = sat(15360 - a2);
    a1 = a1 > limit ? limit : a1 < -limit ? -limit : a1;

    // UPZERO (sign-sign LMS with leakage) on the previous differences, then DELAYA.
    const dh = this.d;
    const bh = this.b;
    const step = d === 0 ? 0 : 128;
    const sgd = d >> 15;
    for (let i = 1; i <= 6; i++) {
      const agree = dh[i]! >> 15 === sgd;
      bh[i] = sat((agree ? step : -step) + ((bh[i]! * 32640) >> 15));
    }
    for (let i = 6; i > 1; i--) dh[i] = dh[i - 1]!;
    dh[1] = d;
    this.r2 = this.r1;
    this.r1 = r0;
    this.p2 = this.p1;
    this.p1 = p0;
    this.a1 = a1;
    this.a2 = a2;

    // FILTEP + FILTEZ + PREDIC: the prediction for the next sample.
    const sp = sat(((a1 * sat(this.r1 * 2)) >> 15) + ((a2 * sat(this.r2 * 2)) >> 15));
    let sz = 0;
    for (let i = 6; i >= 1; i--) sz += (bh[i]! * sat(dh[i]! * 2)) >> 15;
    this.sz = sat(sz);
    this.s = sat(sp + this.sz);
  }
}

/** Higher-band initial DETH is 8 and lower DETL 32: both are the scale at NB = 0. */
function lowBand(): Band {
  return new Band(32, 18432, 8);
}
function highBand(): Band {
  return new Band(8, 22528, 10);
}

/** Encodes 16 kHz PCM, two samples per output octet (IH in the top 2 bits, IL below). */
export class G722Encoder {
  private readonly low = lowBand();
  private readonly high = highBand();
  /** QMF delay line, newest input at index 23. */
  private readonly x = new Int32Array(24);
  /** An odd trailing sample waits for its partner in the next call. */
  private carry: number | undefined;

  encode(pcm: Int16Array): Buffer {
    // encodeInto writes exactly encodedLength() octets: the Buffer is the payload as it is.
    const out = Buffer.allocUnsafe(this.encodedLength(pcm.length));
    this.encodeInto(pcm, out, 0);
    return out;
  }

  /** Octets the next encode()/encodeInto() of `samples` samples makes (an odd sample carried over counts). */
  encodedLength(samples: number): number {
    return (samples + (this.carry === undefined ? 0 : 1)) >> 1;
  }

  /** As encode(), written into `out` at `offset`; returns the octets written (encodedLength(pcm.length)). */
  encodeInto(pcm: Int16Array, out: Uint8Array, offset: number): number {
    let i = 0;
    let o = offset;
    if (this.carry !== undefined && pcm.length > 0) {
      out[o++] = this.encodePair(this.carry, pcm[0]!);
      this.carry = undefined;
      i = 1;
    }
    for (; i + 1 < pcm.length; i += 2) out[o++] = this.encodePair(pcm[i]!, pcm[i + 1]!);
    if (i < pcm.length) this.carry = pcm[i]!;
    return o - offset;
  }

  private encodePair(first: number, second: number): number {
    // Transmit QMF: split into 0-4 kHz and 4-8 kHz bands decimated to 8 kHz.
    const x = this.x;
    x.copyWithin(0, 2);
    x[22] = first;
    x[23] = second;
    let even = 0;
    let odd = 0;
    for (let i = 0; i < 12; i++) {
      even += at(QMF, 2 * i) * x[23 - 2 * i]!;
      odd += at(QMF, 2 * i + 1) * x[22 - 2 * i]!;
    }
    const xl = sat((even + odd) >> 15);
    const xh = sat((even - odd) >> 15);

    // Lower band: QUANTL (6 bits), INVQAL on the 4-bit truncation, adapt.
    const low = this.low;
    const el = sat(xl - low.s);
    const wl = el >= 0 ? el : -(el + 1);
    let mil = 1;
    while (mil < 30 && wl >= (at(Q6, mil) * low.det) >> 12) mil++;
    const il = el < 0 ? at(ILN, mil) : at(ILP, mil);
    const ril = il >> 2;
    const dlt = (low.det * at(QM4, ril)) >> 15;
    low.adaptScale(at(WL, at(RL42, ril)));
    low.adaptPredictor(dlt);

    // Higher band: QUANTH (2 bits), INVQAH, adapt.
    const high = this.high;
    const eh = sat(xh - high.s);
    const wh = eh >= 0 ? eh : -(eh + 1);
    const mih = wh >= (564 * high.det) >> 12 ? 2 : 1;
    const ih = eh < 0 ? at(IHN, mih) : at(IHP, mih);
    const dh = (high.det * at(QM2, ih)) >> 15;
    high.adaptScale(at(WH, at(RH2, ih)));
    high.adaptPredictor(dh);

    return (ih << 6) | il;
  }
}

/** Decodes 64 kbit/s G.722 octets into 16 kHz PCM (two samples per octet). */
export class G722Decoder {
  private readonly low = lowBand();
  private readonly high = highBand();
  /** Receive QMF delay line: pairs of (rl + rh, rl - rh), newest pair at 22/23. */
  private readonly y = new Int32Array(24);

  decode(payload: Uint8Array): Int16Array {
    const out = new Int16Array(payload.length * 2);
    for (let n = 0; n < payload.length; n++) {
      const code = payload[n]!;
      const il = code & 0x3f;
      const ih = code >> 6;

      const low = this.low;
      const dl = (low.det * at(QM6, il)) >> 15;
      const rl = clamp15(low.s + dl);
      const ril = il >> 2;
      const dlt = (low.det * at(QM4, ril)) >> 15;
      low.adaptScale(at(WL, at(RL42, ril)));
      low.adaptPredictor(dlt);

      const high = this.high;
      const dh = (high.det * at(QM2, ih)) >> 15;
      const rh = clamp15(high.s + dh);
      high.adaptScale(at(WH, at(RH2, ih)));
      high.adaptPredictor(dh);

      // Receive QMF: interpolate both bands back to 16 kHz and recombine.
      const y = this.y;
      y.copyWithin(0, 2);
      y[22] = rl + rh;
      y[23] = rl - rh;
      let first = 0;
      let second = 0;
      for (let i = 0; i < 12; i++) {
        first += at(QMF, 2 * i) * y[23 - 2 * i]!;
        second += at(QMF, 2 * i + 1) * y[22 - 2 * i]!;
      }
      out[2 * n] = sat(first >> 10);
      out[2 * n + 1] = sat(second >> 10);
    }
    return out;
  }
}

/** The spec's LIMIT block: reconstructed band signals are 15-bit. */
function clamp15(x: number): number {
  return x > 16383 ? 16383 : x < -16384 ? -16384 : x;
}
