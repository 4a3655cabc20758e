/**
 * In-band DTMF: the 16 keys heard in the audio itself, for trunks that signal them neither in
 * RFC 4733 nor in SIP INFO. Goertzel filters at the eight DTMF frequencies (and their second
 * harmonics) over a 20 ms window, re-evaluated every 10 ms.
 *
 * A window is a key when (thresholds in the spirit of ITU-T Q.24):
 * - the strongest row and the strongest column tone are each at least MIN_AMPLITUDE (≈ -34 dBm0);
 * - each beats the other tones of its group by 8 dB (a chord, a vowel's formants do not);
 * - twist is within 8 dB (column weaker) / 4 dB (column stronger);
 * - the two tones carry at least 70 % of the window's power (speech and noise spread theirs);
 * - the column tone's second harmonic (2.4–3.3 kHz) stays 15 dB below it (a voice's harmonics do
 *   not); a row's second harmonic falls among the columns, where the group rule already looks.
 * Two windows in a row with the same key (≥ 30 ms of tone) start a key; two windows without it
 * end it, and the key is reported then with its duration. A tone under ~25 ms is never a key.
 *
 * Pure and allocation-free per frame: fixed typed arrays, a ring of the last window's samples.
 * 16 kHz audio is averaged down to 8 kHz first (the highest frequency looked at is 3.3 kHz), and
 * a window without the power of two minimal tones skips the filters: about 20 µs per 20 ms frame
 * of speech on one core, next to nothing for silence.
 */

const ROWS = [697, 770, 852, 941] as const;
const COLS = [1209, 1336, 1477, 1633] as const;
const KEYS = ['123A', '456B', '789C', '*0#D'] as const;

/** Detection runs at 8 kHz whatever the input. */
const RATE = 8000;
const WINDOW_MS = 20;
const HOP_MS = 10;
/** Peak amplitude of one tone (int16 units); 32767 ≈ +3 dBm0, so ~650 ≈ -31 dBm0. Q.24 asks for detection down to about -25 dBm0 per tone. */
const MIN_AMPLITUDE = 400;
const GROUP_RATIO = 10 ** (8 / 10);
const NORMAL_TWIST = 10 ** (8 / 10);
const REVERSE_TWIST = 10 ** (4 / 10);
const TONE_SHARE = 0.7;
const HARMONIC_RATIO = 10 ** (15 / 10);
const HITS_TO_START = 2;
const MISSES_TO_END = 2;

export class InbandDtmfDetector {
  readonly sampleRate: number;
  /** Duration of the key reported by the last push() that returned one. */
  lastDurationMs = 0;
  private readonly windowLen: number;
  private readonly hopLen: number;
  private readonly ring: Float32Array;
  private readonly decimate: boolean;
  /** 16 kHz input: the first sample of a pair, waiting for its partner. */
  private half: number | undefined;
  private ringPos = 0;
  private filled = 0;
  private sinceHop = 0;
  /** Goertzel coefficients: 4 rows, 4 columns, then their second harmonics in the same order (rows' unused). */
  private readonly coef = new Float64Array(16);
  private readonly power = new Float64Array(8);
  private candidate = '';
  private hits = 0;
  private current = '';
  private currentWindows = 0;
  private misses = 0;

  constructor(sampleRate: number) {
    if (sampleRate !== 8000 && sampleRate !== 16000) throw new RangeError(`in-band DTMF runs at 8 or 16 kHz, not ${sampleRate}`);
    this.sampleRate = sampleRate;
    this.decimate = sampleRate === 16000;
    this.windowLen = (RATE * WINDOW_MS) / 1000;
    this.hopLen = (RATE * HOP_MS) / 1000;
    this.ring = new Float32Array(this.windowLen);
    const freqs = [...ROWS, ...COLS];
    freqs.forEach((f, i) => {
      this.coef[i] = 2 * Math.cos((2 * Math.PI * f) / RATE);
      this.coef[i + 8] = 2 * Math.cos((2 * Math.PI * 2 * f) / RATE);
    });
  }

  /**
   * Feeds audio (any length; 20 ms frames in practice). Returns the key that ended within it,
   * if one did (its length in `lastDurationMs`).
   */
  push(samples: Int16Array): string | undefined {
    let ended: string | undefined;
    const ring = this.ring;
    for (let i = 0; i < samples.length; i++) {
      let x = samples[i]!;
      if (this.decimate) {
        if (this.half === undefined) {
          this.half = x;
          continue;
        }
        x = (x + this.half) / 2;
        this.half = undefined;
      }
      ring[this.ringPos] = x;
      this.ringPos = this.ringPos + 1 === this.windowLen ? 0 : this.ringPos + 1;
      if (this.filled < this.windowLen) this.filled++;
      if (++this.sinceHop < this.hopLen || this.filled < this.windowLen) continue;
      this.sinceHop = 0;
      const key = this.evaluate();
      const done = this.step(key);
      if (done !== undefined) ended = done;
    }
    return ended;
  }

  /** Forgets any tone in progress (e.g. after a gap in the audio). */
  reset(): void {
    this.half = undefined;
    this.filled = 0;
    this.sinceHop = 0;
    this.candidate = '';
    this.hits = 0;
    this.current = '';
    this.currentWindows = 0;
    this.misses = 0;
  }

  private step(key: string): string | undefined {
    if (this.current !== '') {
      if (key === this.current) {
        this.misses = 0;
        this.currentWindows++;
        return undefined;
      }
      if (++this.misses < MISSES_TO_END && key === '') return undefined;
      const done = this.current;
      // Windows overlap by half: n windows in a row span (n + 1) hops.
      this.lastDurationMs = (this.currentWindows + 1) * HOP_MS;
      this.current = '';
      this.misses = 0;
      this.candidate = key;
      this.hits = key === '' ? 0 : 1;
      return done;
    }
    if (key === '') {
      this.candidate = '';
      this.hits = 0;
      return undefined;
    }
    if (key === this.candidate) this.hits++;
    else {
      this.candidate = key;
      this.hits = 1;
    }
    if (this.hits >= HITS_TO_START) {
      this.current = key;
      this.currentWindows = this.hits;
      this.misses = 0;
      this.candidate = '';
      this.hits = 0;
    }
    return undefined;
  }

  /** The key the current window holds, or ''. */
  private evaluate(): string {
    const n = this.windowLen;
    const ring = this.ring;
    let energy = 0;
    for (let i = 0; i < n; i++) energy += ring[i]! * ring[i]!;
    // Two tones at the minimal amplitude have a mean power of MIN²; less than that is no key.
    if (energy / n < MIN_AMPLITUDE * MIN_AMPLITUDE) return '';
    const power = this.power;
    for (let f = 0; f < 8; f++) power[f] = this.goertzel(this.coef[f]!);
    const row = strongest(power, 0);
    const col = strongest(power, 4);
    const rowP = power[row]!;
    const colP = power[col]!;
    // A sine of amplitude A gives Goertzel power (A·n/2)².
    const minP = (MIN_AMPLITUDE * n) / 2;
    if (rowP < minP * minP || colP < minP * minP) return '';
    for (let i = 0; i < 4; i++) {
      if (i !== row && power[i]! * GROUP_RATIO > rowP) return '';
      if (i + 4 !== col && power[i + 4]! * GROUP_RATIO > colP) return '';
    }
    if (colP > rowP * REVERSE_TWIST || rowP > colP * NORMAL_TWIST) return '';
    // Mean power of the two tones, (A² + B²)/2, against the window's mean power.
    const tonePower = (2 * (rowP + colP)) / (n * n);
    if (tonePower < TONE_SHARE * (energy / n)) return '';
    if (this.goertzel(this.coef[col + 8]!) * HARMONIC_RATIO > colP) return '';
    return KEYS[row]![col - 4]!;
  }

  /** Goertzel power at one coefficient over the window, oldest sample first. */
  private goertzel(c: number): number {
    const ring = this.ring;
    const n = this.windowLen;
    const start = this.ringPos;
    let s1 = 0;
    let s2 = 0;
    for (let i = start; i < n; i++) {
      const s0 = ring[i]! + c * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    for (let i = 0; i < start; i++) {
      const s0 = ring[i]! + c * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    return s1 * s1 + s2 * s2 - c * s1 * s2;
  }
}

function strongest(power: Float64Array, from: number): number {
  let best = from;
  for (let i = from + 1; i < from + 4; i++) if (power[i]! > power[best]!) best = i;
  return best;
}

/** The two frequencies of a key (for tests and in-band sending). */
export function dtmfFrequencies(key: string): [number, number] | undefined {
  const k = key.toUpperCase();
  for (let r = 0; r < 4; r++) {
    const c = KEYS[r]!.indexOf(k);
    if (c >= 0 && k.length === 1) return [ROWS[r]!, COLS[c]!];
  }
  return undefined;
}
