/**
 * Voicemail beep detection: a sustained, pure single tone between 400 and 2200 Hz.
 *
 * Why this shape:
 * - Analysis runs on a sliding 60 ms Hann window (three 20 ms frames, hop one frame). 60 ms
 *   resolves tones 40 Hz apart, so North American ringback (440+480 Hz), UK ringback (400+450),
 *   dial tone (350+440) and every DTMF pair (≥ 73 Hz apart) show up as two peaks and fail the
 *   purity test, where a 20 ms window would merge 440+480 into one beating "tone".
 * - Purity is the share of the window's energy explained by the single strongest sinusoid
 *   (Goertzel on a 20 Hz grid, refined to 2 Hz). A beep is ~0.95+; two equal tones ~0.5; voiced
 *   speech, whose pitch and harmonics move, stays well below 0.7.
 * - A tone counts once it has lasted ≥ 150 ms and is reported when it ENDS (`beepAtMs` = end),
 *   because the message must start after the beep, not on top of it.
 * - Single-tone call-progress signals are rejected by shape, not only by purity: European (425 Hz,
 *   1 s on) and French (440 Hz, 1.5 s on) ringback are long tones below 460 Hz; any tone longer
 *   than `maxToneMs` (dial tone, a stuck carrier) is not a beep either.
 *
 * Pure and streaming: push 20 ms 16 kHz frames in order; time comes from the frame count.
 */
import { FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, type AudioFrame } from '../../audio/frame.ts';

export interface BeepEvent {
  /** End of the tone (erring late by up to 20 ms), ms from the first frame: a message may start here. */
  beepAtMs: number;
  startMs: number;
  durationMs: number;
  freqHz: number;
  /** Mean purity over the tone (0..1). */
  purity: number;
}

export interface BeepDetectorOptions {
  minFreqHz?: number;
  maxFreqHz?: number;
  minToneMs?: number;
  maxToneMs?: number;
  /** Share of energy in the strongest sinusoid for a window to count as tonal. */
  minPurity?: number;
  /** Windows quieter than this (dBFS RMS) are never tonal: line hiss has no beep. */
  minLevelDbfs?: number;
  /** Frequency may wander this much between windows of one tone (cheap beeps drift a little). */
  maxDriftHz?: number;
  /** Long tones below this frequency are call-progress tones (ringback), not beeps. */
  callProgressBelowHz?: number;
  callProgressMinMs?: number;
}

export const DEFAULT_BEEP_OPTIONS: Readonly<Required<BeepDetectorOptions>> = Object.freeze({
  minFreqHz: 400,
  maxFreqHz: 2200,
  minToneMs: 150,
  maxToneMs: 2000,
  minPurity: 0.8,
  minLevelDbfs: -40,
  maxDriftHz: 15,
  callProgressBelowHz: 460,
  callProgressMinMs: 700,
});

const WINDOW_FRAMES = 3;
const WINDOW = FRAME_SAMPLES * WINDOW_FRAMES; // 960 samples = 60 ms
const WINDOW_MS = FRAME_MS * WINDOW_FRAMES;
const COARSE_STEP_HZ = 20;
const FINE_STEP_HZ = 2;

const HANN = (() => {
  const w = new Float64Array(WINDOW);
  for (let i = 0; i < WINDOW; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (WINDOW - 1));
  return w;
})();
const S1 = HANN.reduce((a, b) => a + b, 0);
const S2 = HANN.reduce((a, b) => a + b * b, 0);

/** |X(f)|² of a windowed block by the Goertzel recurrence (any f, not only bin centres). */
function goertzelPower(x: Float64Array, freqHz: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * freqHz) / SAMPLE_RATE);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < x.length; i++) {
    const s0 = x[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

export interface ToneAnalysis {
  freqHz: number;
  /** Energy share of the strongest sinusoid, 0..1. */
  purity: number;
  levelDbfs: number;
}

/**
 * The strongest sinusoid of a 960-sample block and how much of the block it explains. For a
 * sinusoid of amplitude A, |X(f)| = A·S1/2 and the windowed energy is A²·S2/2, hence
 * purity = 2·|X|²·S2 / (S1²·E).
 */
export function analyzeTone(block: Int16Array, minFreqHz = 400, maxFreqHz = 2200, minLevelDbfs = -Infinity): ToneAnalysis {
  const x = new Float64Array(WINDOW);
  let mean = 0;
  for (let i = 0; i < WINDOW; i++) mean += block[i] ?? 0;
  mean /= WINDOW;
  let raw = 0;
  let energy = 0;
  for (let i = 0; i < WINDOW; i++) {
    const v = ((block[i] ?? 0) - mean) / 32768;
    raw += v * v;
    x[i] = v * HANN[i]!;
    energy += x[i]! * x[i]!;
  }
  const levelDbfs = raw === 0 ? -Infinity : 10 * Math.log10(raw / WINDOW);
  // Quiet windows skip the frequency search: it is most of the cost and silence is most of a call.
  if (energy === 0 || levelDbfs < minLevelDbfs) return { freqHz: 0, purity: 0, levelDbfs };
  let best = minFreqHz;
  let bestP = -1;
  for (let f = minFreqHz; f <= maxFreqHz; f += COARSE_STEP_HZ) {
    const p = goertzelPower(x, f);
    if (p > bestP) [best, bestP] = [f, p];
  }
  const coarse = best;
  for (let f = coarse - COARSE_STEP_HZ / 2; f <= coarse + COARSE_STEP_HZ / 2; f += FINE_STEP_HZ) {
    const p = goertzelPower(x, f);
    if (p > bestP) [best, bestP] = [f, p];
  }
  const purity = Math.min(1, (2 * bestP * S2) / (S1 * S1 * energy));
  return { freqHz: best, purity, levelDbfs };
}

interface Run {
  startMs: number;
  lastEndMs: number;
  freqs: number[];
  puritySum: number;
}

export class BeepDetector {
  readonly options: Readonly<Required<BeepDetectorOptions>>;
  private readonly ring = new Int16Array(WINDOW);
  private frames = 0;
  private run: Run | undefined;

  constructor(options: BeepDetectorOptions = {}) {
    this.options = Object.freeze({ ...DEFAULT_BEEP_OPTIONS, ...options });
  }

  /** Milliseconds of audio pushed so far. */
  get elapsedMs(): number {
    return this.frames * FRAME_MS;
  }

  /** One 20 ms 16 kHz frame; returns a beep when one just ended. */
  push(frame: AudioFrame | Int16Array): BeepEvent | undefined {
    const samples = frame instanceof Int16Array ? frame : frame.samples;
    if (samples.length !== FRAME_SAMPLES) throw new RangeError(`beep detection needs ${FRAME_SAMPLES}-sample frames`);
    this.ring.copyWithin(0, FRAME_SAMPLES);
    this.ring.set(samples, WINDOW - FRAME_SAMPLES);
    this.frames++;
    const endMs = this.frames * FRAME_MS;
    if (this.frames < WINDOW_FRAMES) return undefined;
    const o = this.options;
    const a = analyzeTone(this.ring, o.minFreqHz, o.maxFreqHz, o.minLevelDbfs);
    const tonal = a.levelDbfs >= o.minLevelDbfs && a.purity >= o.minPurity;
    const run = this.run;
    if (tonal && run && Math.abs(a.freqHz - run.freqs[run.freqs.length - 1]!) <= o.maxDriftHz) {
      run.lastEndMs = endMs;
      run.freqs.push(a.freqHz);
      run.puritySum += a.purity;
      return undefined;
    }
    // The current run (if any) ended: report it before maybe starting a new one.
    const ended = run ? this.judge(run) : undefined;
    // Hann weights the window's edges down, so a window turns tonal once the tone fills about
    // two thirds of it: the tone started about one window before this window's end.
    this.run = tonal ? { startMs: endMs - WINDOW_MS, lastEndMs: endMs, freqs: [a.freqHz], puritySum: a.purity } : undefined;
    return ended;
  }

  /** End of stream: a tone still sounding is judged as if it stopped here. */
  flush(): BeepEvent | undefined {
    const run = this.run;
    this.run = undefined;
    return run ? this.judge(run) : undefined;
  }

  private judge(run: Run): BeepEvent | undefined {
    const o = this.options;
    // Likewise a window stays tonal until the tone fills less than about two thirds of it: the
    // last tonal window ends 0–20 ms after the tone, so the duration errs long by at most 20 ms.
    const durationMs = run.lastEndMs - run.startMs;
    if (durationMs < o.minToneMs || durationMs > o.maxToneMs) return undefined;
    const sorted = [...run.freqs].sort((x, y) => x - y);
    const freqHz = sorted[sorted.length >> 1]!;
    if (freqHz < o.callProgressBelowHz && durationMs >= o.callProgressMinMs) return undefined;
    return { beepAtMs: run.lastEndMs, startMs: run.startMs, durationMs, freqHz, purity: run.puritySum / run.freqs.length };
  }
}
