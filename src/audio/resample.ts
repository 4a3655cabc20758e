/**
 * Streaming rational resampler: a polyphase windowed-sinc (Kaiser) FIR. One instance per stream
 * keeps the filter history, so audio cut into 20 ms chunks comes out exactly as if it had been
 * processed in one piece (no clicks at frame boundaries). Filter tables depend only on the rate
 * pair and are built once and shared between calls.
 *
 * Exact 2:1 ratios (8 <-> 16 kHz, the G.711 path of every call; also 16 <-> 32, 24 <-> 48 kHz) take a
 * dedicated half-band path instead: a 35-tap Kaiser (beta 6) half-band FIR, whose every other tap
 * is zero and whose taps are symmetric, so one output costs 9 multiplies (the general path costs
 * 32 per output going up and 64 going down). Measured on the 16 -> 8 kHz direction: -0.4 dB at
 * 3.4 kHz, at least 60 dB of rejection from 5 kHz and 75 dB from 6 kHz (the general path passes
 * up to 3.6 kHz, at the price of 3.5-7× the work). The group delay stays a whole number of output
 * samples (17 going up, 8 going down), so `resample()` still lines streams up exactly.
 *
 * 24 <-> 16 kHz (2:3 and 3:2: OpenAI speech, realtime model audio both ways) runs dedicated loops:
 * the outputs of a whole period (two periods going down) are computed side by side, each with its
 * own accumulator, so the CPU overlaps their multiply-add chains instead of waiting on one; each
 * input sample is loaded once per step for all of them; and the loops read module-level arrays
 * (the two tap tables and one scratch buffer the chunk is copied into), which the JIT compiles as
 * constants, without the per-iteration type checks and reloads a parameter array costs. Other
 * ratios run four outputs side by side. In every loop each output still sums the same float32
 * taps times the same samples in the same order, newest first, in a double: the output is
 * sample-identical to the plain one-output-at-a-time loop (test/unit/audio/resample-poly.test.ts).
 *
 * 24 -> 16 kHz with `{ band: 'telephone' }` (OpenAI speech on a G.711 call) is for audio that then
 * goes to 8 kHz through the half-band decimator, so only what lands in 0-4 kHz there matters. At
 * the 48 kHz virtual rate the filter must keep 0-3.6 kHz flat and reject 12-20 kHz, which
 * decimation to 16 kHz folds onto 0-4 kHz (the input's 11-12 kHz and the images of its 4-12 kHz);
 * what folds onto 4-8 kHz the half-band attenuates as well (at least 60 dB from 5 kHz). With a
 * transition band of 3.6-12 kHz instead of 7.2-8.8 kHz a Kaiser (beta 7.5) sinc cut at 7.3 kHz
 * needs 12 taps per output instead of 66 (centre 12 at 48 kHz: delay 4 output samples), run by
 * its own copy of the 2:3 loop. Measured: -0.06 dB at 3.4 kHz, -0.09 dB at 3.6 kHz, at least
 * 66 dB of rejection over 12-20 kHz; with the half-band, input above 8 kHz and every image land
 * in 0-3.8 kHz at 8 kHz at least 67 dB down (input at 4-8 kHz aliases through the half-band
 * alone, as on the full-band path; test/unit/audio/resample-telephone.test.ts). The 16 kHz output
 * itself is not clean above 4 kHz: 8-11 kHz input folds onto 5-8 kHz only 9-40 dB down.
 *
 * `process()` returns a new array; `processShared()` returns a view of a buffer the resampler
 * reuses (valid until its next call), for callers that copy what they keep: no allocation per
 * frame once the chunk size is steady (the output count may alternate between two values).
 */

import { filterBank, halfBand, HB_CENTRE, HB_SIDE, kaiserBank, TELEPHONE_BETA, TELEPHONE_CENTRE, TELEPHONE_CUTOFF_HZ, type FilterBank, type HalfBand } from './resample-design.ts';
import { zeroSamples } from './frame.ts';

if (HB_SIDE !== 9) throw new Error('the half-band loops below are unrolled for 9 tap pairs');

/**
 * 'down23' and 'up32' are the dedicated 2:3 (24 → 16 kHz) and 3:2 (16 → 24 kHz) general-path
 * loops; 'down23t' is 2:3 with the telephone-band taps.
 */
type Mode = 'same' | 'half-up' | 'half-down' | 'poly' | 'down23' | 'down23t' | 'up32';

export interface ResamplerOptions {
  /**
   * 'telephone': only 0-4 kHz of the output matters, because it goes on to 8 kHz through the
   * half-band decimator (`new Resampler(16000, 8000)`, as a G.711 call's RTP encoder does), so a
   * far shorter filter will do (see the header). 24000 → 16000 Hz only; any other pair throws a
   * RangeError. Default 'full'.
   */
  band?: 'full' | 'telephone';
}

/*
 * The general-path loops below keep one output's arithmetic exactly that of a plain dot product:
 * acc starts at 0 and adds sample × tap for k = 0, 1, ..., taps-1 (newest sample first), in a
 * double. Samples are 16-bit integers and taps float32 values, so every product is exact and only
 * the order of the additions could round differently; it is kept, so the outputs match the plain
 * loop bit for bit. The speed comes from running several such chains side by side (a lone chain
 * waits on the adder's latency at every step) and from unrolling the tap loop.
 *
 * Every loop (half-band ones too) stores acc >= 32767 ? 32767 : acc <= -32768 ? -32768 :
 * Math.round(acc), i.e. rounds, and clips instead of wrapping on overshoot. It is written out at
 * each store rather than kept in a helper function: a helper call the JIT happens not to inline
 * (its inlining budget can run out in the bigger callers, depending on compile timing) takes
 * `acc` boxed, which allocates a heap number per output.
 */

/**
 * One output, out[o]: taps `c` against the samples ending at work[newest], newest first. It
 * stores rather than returns the sum, which a call the JIT did not inline would box.
 */
function dot(work: Float64Array, newest: number, c: Float64Array, taps: number, out: Int16Array, o: number): void {
  let acc = 0;
  for (let k = 0; k < taps; k++) acc += work[newest - k]! * c[k]!;
  out[o] = acc >= 32767 ? 32767 : acc <= -32768 ? -32768 : Math.round(acc);
}

/** Four outputs of any ratio at once: output q has newest sample nq and phase taps cq. */
function dot4(
  work: Float64Array,
  n0: number,
  n1: number,
  n2: number,
  n3: number,
  c0: Float64Array,
  c1: Float64Array,
  c2: Float64Array,
  c3: Float64Array,
  taps: number,
  out: Int16Array,
  o: number,
): void {
  let a0 = 0;
  let a1 = 0;
  let a2 = 0;
  let a3 = 0;
  let k = 0;
  for (; k + 1 < taps; k += 2) {
    a0 += work[n0 - k]! * c0[k]!;
    a1 += work[n1 - k]! * c1[k]!;
    a2 += work[n2 - k]! * c2[k]!;
    a3 += work[n3 - k]! * c3[k]!;
    a0 += work[n0 - k - 1]! * c0[k + 1]!;
    a1 += work[n1 - k - 1]! * c1[k + 1]!;
    a2 += work[n2 - k - 1]! * c2[k + 1]!;
    a3 += work[n3 - k - 1]! * c3[k + 1]!;
  }
  if (k < taps) {
    a0 += work[n0 - k]! * c0[k]!;
    a1 += work[n1 - k]! * c1[k]!;
    a2 += work[n2 - k]! * c2[k]!;
    a3 += work[n3 - k]! * c3[k]!;
  }
  out[o] = a0 >= 32767 ? 32767 : a0 <= -32768 ? -32768 : Math.round(a0);
  out[o + 1] = a1 >= 32767 ? 32767 : a1 <= -32768 ? -32768 : Math.round(a1);
  out[o + 2] = a2 >= 32767 ? 32767 : a2 <= -32768 ? -32768 : Math.round(a2);
  out[o + 3] = a3 >= 32767 ? 32767 : a3 <= -32768 ? -32768 : Math.round(a3);
}


/*
 * 2:3 and 3:2 (24 <-> 16 kHz). Their tap tables and the work buffer are module constants: the
 * JIT then knows each array's type, length and address, so the loops run without re-checking
 * them at every step (with parameter arrays the check and reload of three arrays per iteration
 * cost about as much as the arithmetic). A chunk is copied into SCRATCH behind the stream's
 * history, in blocks of up to SCRATCH_BLOCK samples, and the history is copied back out: the
 * code is synchronous, so one buffer serves every stream (a worker thread has its own module).
 */
const BANK_23 = filterBank(3, 2);
const BANK_32 = filterBank(2, 3);
/** 24 → 16 kHz, telephone band (see the header): centre 12 at 48 kHz, 12 taps a phase, delay 4. */
const BANK_23T = kaiserBank(2, 3, TELEPHONE_CENTRE, TELEPHONE_CUTOFF_HZ / 48_000, TELEPHONE_BETA);
const TAPS_23 = BANK_23.taps;
const TAPS_32 = BANK_32.taps;
const TAPS_23T = BANK_23T.taps;
const K23_0 = BANK_23.phases[0]!;
const K23_1 = BANK_23.phases[1]!;
const K32_0 = BANK_32.phases[0]!;
const K32_1 = BANK_32.phases[1]!;
const K32_2 = BANK_32.phases[2]!;
const K23T_0 = BANK_23T.phases[0]!;
const K23T_1 = BANK_23T.phases[1]!;
if (TAPS_23 % 3 !== 0 || TAPS_32 % 4 !== 0 || TAPS_23T % 3 !== 0) throw new Error('the 2:3 and 3:2 loops below step 3 and 4 taps at a time');
/** Input samples per pass through SCRATCH (a 20 ms frame is 480 at 24 kHz). */
const SCRATCH_BLOCK = 2048;
const SCRATCH = new Float64Array(Math.max(TAPS_23, TAPS_32, TAPS_23T) - 1 + SCRATCH_BLOCK);

/**
 * 2:3 (24 -> 16 kHz), `groups` × 4 outputs from out[o]; the first has phase 0 and its newest
 * sample at SCRATCH[newest]. A period is 2 outputs per 3 inputs (phase 0 ending at j, phase 1
 * ending at j + 1); two periods run side by side (j and j + 3), 3 taps per step, each sample
 * loaded once per step for all four.
 */
function groups23(newest: number, out: Int16Array, o: number, groups: number): void {
  const w = SCRATCH;
  const c0 = K23_0;
  const c1 = K23_1;
  for (let g = 0; g < groups; g++, o += 4, newest += 6) {
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    for (let k = 0, j = newest; k < TAPS_23; k += 3, j -= 3) {
      const p4 = w[j + 4]!;
      const p3 = w[j + 3]!;
      const p2 = w[j + 2]!;
      const p1 = w[j + 1]!;
      const s0 = w[j]!;
      const m1 = w[j - 1]!;
      const m2 = w[j - 2]!;
      let t0 = c0[k]!;
      let t1 = c1[k]!;
      a0 += s0 * t0;
      a1 += p1 * t1;
      a2 += p3 * t0;
      a3 += p4 * t1;
      t0 = c0[k + 1]!;
      t1 = c1[k + 1]!;
      a0 += m1 * t0;
      a1 += s0 * t1;
      a2 += p2 * t0;
      a3 += p3 * t1;
      t0 = c0[k + 2]!;
      t1 = c1[k + 2]!;
      a0 += m2 * t0;
      a1 += m1 * t1;
      a2 += p1 * t0;
      a3 += p2 * t1;
    }
    out[o] = a0 >= 32767 ? 32767 : a0 <= -32768 ? -32768 : Math.round(a0);
    out[o + 1] = a1 >= 32767 ? 32767 : a1 <= -32768 ? -32768 : Math.round(a1);
    out[o + 2] = a2 >= 32767 ? 32767 : a2 <= -32768 ? -32768 : Math.round(a2);
    out[o + 3] = a3 >= 32767 ? 32767 : a3 <= -32768 ? -32768 : Math.round(a3);
  }
}

/**
 * groups23 over the telephone-band taps (K23T_*, TAPS_23T): a copy rather than a shared loop
 * with table parameters, so both keep their tables as module constants.
 */
function groups23t(newest: number, out: Int16Array, o: number, groups: number): void {
  const w = SCRATCH;
  const c0 = K23T_0;
  const c1 = K23T_1;
  for (let g = 0; g < groups; g++, o += 4, newest += 6) {
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    for (let k = 0, j = newest; k < TAPS_23T; k += 3, j -= 3) {
      const p4 = w[j + 4]!;
      const p3 = w[j + 3]!;
      const p2 = w[j + 2]!;
      const p1 = w[j + 1]!;
      const s0 = w[j]!;
      const m1 = w[j - 1]!;
      const m2 = w[j - 2]!;
      let t0 = c0[k]!;
      let t1 = c1[k]!;
      a0 += s0 * t0;
      a1 += p1 * t1;
      a2 += p3 * t0;
      a3 += p4 * t1;
      t0 = c0[k + 1]!;
      t1 = c1[k + 1]!;
      a0 += m1 * t0;
      a1 += s0 * t1;
      a2 += p2 * t0;
      a3 += p3 * t1;
      t0 = c0[k + 2]!;
      t1 = c1[k + 2]!;
      a0 += m2 * t0;
      a1 += m1 * t1;
      a2 += p1 * t0;
      a3 += p2 * t1;
    }
    out[o] = a0 >= 32767 ? 32767 : a0 <= -32768 ? -32768 : Math.round(a0);
    out[o + 1] = a1 >= 32767 ? 32767 : a1 <= -32768 ? -32768 : Math.round(a1);
    out[o + 2] = a2 >= 32767 ? 32767 : a2 <= -32768 ? -32768 : Math.round(a2);
    out[o + 3] = a3 >= 32767 ? 32767 : a3 <= -32768 ? -32768 : Math.round(a3);
  }
}

/**
 * 3:2 (16 -> 24 kHz), `groups` × 3 outputs from out[o]; the first has phase 0 and its newest
 * sample at SCRATCH[newest]. A period is 3 outputs per 2 inputs: phases 0 and 2 ending at j,
 * phase 1 ending at j + 1; 4 taps per step, each sample loaded once per step for all three.
 */
function groups32(newest: number, out: Int16Array, o: number, groups: number): void {
  const w = SCRATCH;
  const c0 = K32_0;
  const c1 = K32_1;
  const c2 = K32_2;
  for (let g = 0; g < groups; g++, o += 3, newest += 2) {
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    for (let k = 0, j = newest; k < TAPS_32; k += 4, j -= 4) {
      const p1 = w[j + 1]!;
      const s0 = w[j]!;
      const m1 = w[j - 1]!;
      const m2 = w[j - 2]!;
      const m3 = w[j - 3]!;
      a0 += s0 * c0[k]!;
      a1 += s0 * c2[k]!;
      a2 += p1 * c1[k]!;
      a0 += m1 * c0[k + 1]!;
      a1 += m1 * c2[k + 1]!;
      a2 += s0 * c1[k + 1]!;
      a0 += m2 * c0[k + 2]!;
      a1 += m2 * c2[k + 2]!;
      a2 += m1 * c1[k + 2]!;
      a0 += m3 * c0[k + 3]!;
      a1 += m3 * c2[k + 3]!;
      a2 += m2 * c1[k + 3]!;
    }
    out[o] = a0 >= 32767 ? 32767 : a0 <= -32768 ? -32768 : Math.round(a0);
    out[o + 1] = a1 >= 32767 ? 32767 : a1 <= -32768 ? -32768 : Math.round(a1);
    out[o + 2] = a2 >= 32767 ? 32767 : a2 <= -32768 ? -32768 : Math.round(a2);
  }
}

/**
 * 2× up: each input sample gives a copy (centre phase) and one interpolated sample before it.
 * `work` holds HB_CENTRE samples of history, then the `n` new ones; `out` gets 2n.
 */
function halfUp(g: Float64Array, work: Float64Array, n: number, out: Int16Array): void {
  // The 9 symmetric pairs unrolled (HB_SIDE = 9): this loop is most of the G.711 receive path.
  const g0 = g[0]!, g1 = g[1]!, g2 = g[2]!, g3 = g[3]!, g4 = g[4]!, g5 = g[5]!, g6 = g[6]!, g7 = g[7]!, g8 = g[8]!;
  for (let i = 0, o = 0; i < n; i++, o += 2) {
    // Newest input at work[i + 17]; the interpolated sample sits half-way between a = i + 8 and a + 1.
    const a = i + 8;
    const acc =
      g0 * (work[a + 1]! + work[a]!) +
      g1 * (work[a + 2]! + work[a - 1]!) +
      g2 * (work[a + 3]! + work[a - 2]!) +
      g3 * (work[a + 4]! + work[a - 3]!) +
      g4 * (work[a + 5]! + work[a - 4]!) +
      g5 * (work[a + 6]! + work[a - 5]!) +
      g6 * (work[a + 7]! + work[a - 6]!) +
      g7 * (work[a + 8]! + work[a - 7]!) +
      g8 * (work[a + 9]! + work[a - 8]!);
    out[o] = acc >= 32767 ? 32767 : acc <= -32768 ? -32768 : Math.round(acc);
    out[o + 1] = work[a + 1]!;
  }
}

/** Input samples before a chunk that `upsample2` reads: the half-band's reach into the past. */
export const UPSAMPLE2_HISTORY = HB_CENTRE;
const UP2_WORK = new Float64Array(HB_CENTRE + 4096);
let up2Taps: Float64Array | undefined;

/**
 * 2× up of `chunk`, stateless: `previous` ends with (at least UPSAMPLE2_HISTORY) input samples that
 * came just before it (zeros at the start of a stream). The result is exactly what a streaming
 * `Resampler(r, 2r)` fed the same samples returns for `chunk`, in a new array the caller owns
 * (from the frame slabs, see copySamples): what lets a telephone-band frame upsample only
 * when something reads it (src/audio/narrowband-frame.ts).
 */
export function upsample2(previous: Int16Array, chunk: Int16Array): Int16Array {
  const n = chunk.length;
  if (previous.length < HB_CENTRE) throw new RangeError(`upsample2 needs ${HB_CENTRE} samples of history, got ${previous.length}`);
  const work = n + HB_CENTRE <= UP2_WORK.length ? UP2_WORK : new Float64Array(HB_CENTRE + n);
  const from = previous.length - HB_CENTRE;
  work.set(previous.subarray(from), 0);
  work.set(chunk, HB_CENTRE);
  const out = zeroSamples(2 * n);
  halfUp((up2Taps ??= halfBand().upSide), work, n, out);
  return out;
}

export class Resampler {
  private readonly mode: Mode;
  private readonly bank: FilterBank | undefined;
  private readonly hb: HalfBand | undefined;
  /** Output buffer reused by processShared(); grown only when a bigger chunk arrives. */
  private outBuf = new Int16Array(0);
  /** The last two views of outBuf handed out (chunk sizes that do not divide evenly alternate). */
  private outView = new Int16Array(0);
  private altView = new Int16Array(0);
  /**
   * Last `history` input samples followed by the current chunk; grown only when a bigger chunk
   * arrives. Doubles (exact for 16-bit samples) so the filter loops load without converting.
   * For 'down23', 'down23t' and 'up32' only the history (the chunk goes through SCRATCH).
   */
  private work: Float64Array;
  /** Index of the next output's newest input sample, relative to the start of the next chunk. */
  private nextIndex = 0;
  /** Filter phase (0..up-1) of the next output. */
  private phase = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
    options: ResamplerOptions = {},
  ) {
    if (!Number.isInteger(fromRate) || !Number.isInteger(toRate) || fromRate <= 0 || toRate <= 0) {
      throw new RangeError(`invalid sample rates ${fromRate} → ${toRate}`);
    }
    const telephone = options.band === 'telephone';
    if (telephone && (fromRate !== 24_000 || toRate !== 16_000)) {
      throw new RangeError(`the telephone band is for 24000 → 16000 Hz only, not ${fromRate} → ${toRate}`);
    }
    const mode: Mode =
      fromRate === toRate ? 'same' : toRate === 2 * fromRate ? 'half-up' : fromRate === 2 * toRate ? 'half-down' : 'poly';
    this.bank = telephone ? BANK_23T : mode === 'poly' ? filterBank(fromRate, toRate) : undefined;
    this.mode = this.bank === BANK_23 ? 'down23' : this.bank === BANK_23T ? 'down23t' : this.bank === BANK_32 ? 'up32' : mode;
    this.hb = this.mode === 'half-up' || this.mode === 'half-down' ? halfBand() : undefined;
    const hist = this.history;
    this.work = new Float64Array(this.thirdsMode ? hist : hist + 1024);
    // Half-band down: output k is centred on input 2k - HB_CENTRE + 1, so its newest input is 2k + 1.
    if (this.mode === 'half-down') this.nextIndex = 1;
  }

  /** 'down23', 'down23t' and 'up32' run through SCRATCH (thirds()). */
  private get thirdsMode(): boolean {
    return this.mode === 'down23' || this.mode === 'down23t' || this.mode === 'up32';
  }

  /** Latency added by the filter, in output samples (0 when the rates match). */
  get delay(): number {
    if (this.mode === 'half-up') return HB_CENTRE;
    if (this.mode === 'half-down') return (HB_CENTRE - 1) / 2;
    return this.bank?.delay ?? 0;
  }

  /**
   * Input samples kept between chunks. Half-band: the taps span HB_CENTRE input samples going
   * up, 2 × HB_CENTRE + 1 going down.
   */
  private get history(): number {
    if (this.bank) return this.bank.taps - 1;
    return this.mode === 'half-up' ? HB_CENTRE : this.mode === 'half-down' ? 2 * HB_CENTRE + 1 : 0;
  }

  /** Resample one chunk; the output length varies by at most one sample around n*to/from. */
  process(input: Int16Array): Int16Array {
    return this.mode === 'same' ? input.slice() : this.processShared(input).slice();
  }

  /**
   * As process(), but the result is a view of a buffer this resampler reuses: valid only until
   * the next call (copy what you keep). With the rates equal, the input itself is returned.
   */
  processShared(input: Int16Array): Int16Array {
    if (this.mode === 'same') return input;
    if (this.thirdsMode) return this.thirds(input);
    const hist = this.history;
    const n = input.length;
    if (this.work.length < hist + n) {
      const grown = new Float64Array(Math.max(hist + n, 2 * this.work.length));
      grown.set(this.work.subarray(0, hist));
      this.work = grown;
    }
    const work = this.work;
    // set() converts the 16-bit samples to doubles natively, several times faster than a JS loop.
    work.set(input, hist);
    const count = this.mode === 'half-up' ? 2 * n : this.mode === 'half-down' ? Math.max(0, Math.ceil((n - this.nextIndex) / 2)) : this.polyCount(n);
    const out = this.output(count);
    if (this.mode === 'half-up') halfUp(this.hb!.upSide, work, n, out);
    else if (this.mode === 'half-down') this.halfDown(work, n, out);
    else this.poly(work, n, out);
    // Keep the newest `hist` samples as history for the next chunk.
    work.copyWithin(0, n, n + hist);
    return out;
  }

  private output(count: number): Int16Array {
    if (this.outView.length === count) return this.outView;
    const alt = this.altView;
    this.altView = this.outView;
    if (alt.length === count && alt.buffer === this.outBuf.buffer) {
      this.outView = alt;
      return alt;
    }
    if (this.outBuf.length < count) this.outBuf = new Int16Array(Math.max(count, 2 * this.outBuf.length));
    this.outView = this.outBuf.subarray(0, count);
    return this.outView;
  }

  /** 2× down: every other output of the half-band filter; the centre tap and 9 symmetric pairs. */
  private halfDown(work: Float64Array, n: number, out: Int16Array): void {
    const { downCentre, downSide: g } = this.hb!;
    const g0 = g[0]!, g1 = g[1]!, g2 = g[2]!, g3 = g[3]!, g4 = g[4]!, g5 = g[5]!, g6 = g[6]!, g7 = g[7]!, g8 = g[8]!;
    // Newest input of output k at work[hist + i] (hist = 35); its centre HB_CENTRE (17) before that.
    let i = this.nextIndex;
    let o = 0;
    for (; i < n; i += 2) {
      const c = i + 18;
      const acc =
        downCentre * work[c]! +
        g0 * (work[c - 1]! + work[c + 1]!) +
        g1 * (work[c - 3]! + work[c + 3]!) +
        g2 * (work[c - 5]! + work[c + 5]!) +
        g3 * (work[c - 7]! + work[c + 7]!) +
        g4 * (work[c - 9]! + work[c + 9]!) +
        g5 * (work[c - 11]! + work[c + 11]!) +
        g6 * (work[c - 13]! + work[c + 13]!) +
        g7 * (work[c - 15]! + work[c + 15]!) +
        g8 * (work[c - 17]! + work[c + 17]!);
      out[o++] = acc >= 32767 ? 32767 : acc <= -32768 ? -32768 : Math.round(acc);
    }
    this.nextIndex = i - n;
  }

  private polyCount(n: number): number {
    const { up, down } = this.bank!;
    return Math.max(0, Math.ceil(((n - this.nextIndex) * up - this.phase) / down));
  }

  private poly(work: Float64Array, n: number, out: Int16Array): void {
    const { up, down, taps, phases } = this.bank!;
    const hist = taps - 1;
    // Outputs whose newest input sample falls inside this chunk: i0 + floor((p0 + k*down)/up) < n.
    // Output o has phase p and newest sample work[hist + i]; each output moves p on by `down`,
    // and i on by one each time p wraps past `up`.
    let i = this.nextIndex;
    let p = this.phase;
    let o = 0;
    const count = out.length;
    for (; o + 4 <= count; o += 4) {
      const n0 = hist + i;
      const c0 = phases[p]!;
      for (p += down; p >= up; p -= up) i++;
      const n1 = hist + i;
      const c1 = phases[p]!;
      for (p += down; p >= up; p -= up) i++;
      const n2 = hist + i;
      const c2 = phases[p]!;
      for (p += down; p >= up; p -= up) i++;
      const n3 = hist + i;
      const c3 = phases[p]!;
      for (p += down; p >= up; p -= up) i++;
      dot4(work, n0, n1, n2, n3, c0, c1, c2, c3, taps, out, o);
    }
    for (; o < count; o++) {
      dot(work, hist + i, phases[p]!, taps, out, o);
      for (p += down; p >= up; p -= up) i++;
    }
    this.nextIndex = i - n;
    this.phase = p;
  }

  /** 2:3 and 3:2: the chunk goes through SCRATCH in blocks, behind the history kept in `work`. */
  private thirds(input: Int16Array): Int16Array {
    const { up, down, taps, phases } = this.bank!;
    const hist = taps - 1;
    const history = this.work;
    const n = input.length;
    const out = this.output(this.polyCount(n));
    const w = SCRATCH;
    // Outputs per group of the dedicated loop, and input samples it moves on by.
    const mode = this.mode;
    const perGroup = mode === 'up32' ? 3 : 4;
    const stride = mode === 'up32' ? 2 : 6;
    let o = 0;
    for (let start = 0; start < n; start += SCRATCH_BLOCK) {
      const b = Math.min(SCRATCH_BLOCK, n - start);
      w.set(history);
      w.set(b === n ? input : input.subarray(start, start + b), hist);
      // This block's outputs, as poly() would count them: whole groups from phase 0 go to the
      // dedicated loop, the rest (a period cut by a block boundary) one at a time.
      const end = o + this.polyCount(b);
      let i = this.nextIndex;
      let p = this.phase;
      while (o < end) {
        if (p === 0 && end - o >= perGroup) {
          const groups = Math.floor((end - o) / perGroup);
          if (mode === 'down23') groups23(hist + i, out, o, groups);
          else if (mode === 'down23t') groups23t(hist + i, out, o, groups);
          else groups32(hist + i, out, o, groups);
          o += perGroup * groups;
          i += stride * groups;
        } else {
          const newest = hist + i;
          const c = phases[p]!;
          let acc = 0;
          for (let k = 0; k < taps; k++) acc += w[newest - k]! * c[k]!;
          out[o++] = acc >= 32767 ? 32767 : acc <= -32768 ? -32768 : Math.round(acc);
          for (p += down; p >= up; p -= up) i++;
        }
      }
      this.nextIndex = i - b;
      this.phase = p;
      // The newest `hist` samples are the next block's history.
      for (let k = 0; k < hist; k++) history[k] = w[b + k]!;
    }
    return out;
  }

  /** Push zeros through to release the samples still inside the filter (end of stream). */
  flush(): Int16Array {
    if (this.mode === 'same') return new Int16Array(0);
    // Enough input zeros to move the whole delay (plus one sample) out: delay × from / to.
    const zeros = new Int16Array(Math.ceil((this.delay * this.fromRate) / this.toRate) + 1);
    return this.process(zeros);
  }

  reset(): void {
    this.work.fill(0);
    this.nextIndex = this.mode === 'half-down' ? 1 : 0;
    this.phase = 0;
  }
}

/**
 * Resample a whole buffer at once, compensating the filter delay so the output lines up with
 * the input sample for sample (for files and tests; streams should keep a Resampler).
 */
export function resample(pcm: Int16Array, fromRate: number, toRate: number, options?: ResamplerOptions): Int16Array {
  if (fromRate === toRate) return pcm.slice();
  const r = new Resampler(fromRate, toRate, options);
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
