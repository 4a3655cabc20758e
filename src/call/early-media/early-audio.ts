/**
 * What an outbound call heard before the answer (early media, RFC 3960): the last
 * `EARLY_PREROLL_MS` of it, for answering-machine detection to hear at the answer, and a watch
 * for Special Information Tones (sit-detector.ts), which end the call before the answer.
 *
 * Why a pre-roll: some carriers' voicemail plays its greeting as early media and answers only
 * when it starts recording; detection that starts at the 200 OK then hears silence, decides
 * `unknown` at its deadline, and the assistant talks to a mailbox. With the pre-roll the
 * classifier hears the greeting as it was.
 *
 * Why call-progress tones are taken out of it: most early media is ringback (440+480 Hz, 400+450,
 * 425…), and a person answers right after it. Ringback must not become "speech that started
 * before the answer", which could join the person's "hello?" into a long greeting. So frames in a
 * run of at least `TONE_RUN_FRAMES` tonal frames (energy in at most two narrow spectral peaks)
 * are replaced by silence in the pre-roll. Speech, whose energy spreads over many harmonics and
 * moves, is not tonal for that long.
 *
 * Pure apart from the frames it holds: push one 20 ms frame at a time, read `preroll()` once.
 */
import { FRAME_MS, rms, silenceFrame, type AudioFrame } from '../../audio/frame.ts';
import { RealFft } from '../../audio/fft.ts';
import { SitDetector, type SitEvent } from './sit-detector.ts';

/** Early audio kept for detection at the answer: long enough for a whole mailbox greeting. */
export const EARLY_PREROLL_MS = 8000;
/** 100 ms of steady tone is a call-progress tone, not a voiced sound. */
export const TONE_RUN_FRAMES = 5;
/** Share of a frame's energy in its two strongest narrow peaks for it to count as tonal. */
const TONAL_SHARE = 0.75;
/** Quieter frames are silence here, not tones (about -45 dBFS RMS). */
const MIN_TONE_RMS = 10 ** (-45 / 20);

export interface EarlyAudioStats {
  /** Frames heard before the answer. */
  frames: number;
  /** Of those, frames above -45 dBFS. */
  audibleFrames: number;
  /** Of those, frames in a call-progress tone (ringback, SIT…). */
  toneFrames: number;
}

export class EarlyAudio {
  private readonly capacity = EARLY_PREROLL_MS / FRAME_MS;
  private readonly frames: AudioFrame[] = [];
  private readonly tonal: boolean[] = [];
  private readonly sit = new SitDetector();
  private sitEvent: SitEvent | undefined;
  private readonly count = { frames: 0, audibleFrames: 0, toneFrames: 0 };
  /** Length of the run of tonal frames ending at the newest frame. */
  private toneRun = 0;
  private taken = false;

  /** One frame of early media; returns a SIT event once, on the frame that completes it. */
  push(frame: AudioFrame): SitEvent | undefined {
    if (this.taken) return undefined;
    const samples = frame.samples;
    this.count.frames++;
    const audible = rms(samples) >= MIN_TONE_RMS;
    if (audible) this.count.audibleFrames++;
    const tonal = audible && tonalShare(samples) >= TONAL_SHARE;
    this.frames.push(frame);
    this.tonal.push(tonal);
    if (this.frames.length > this.capacity) {
      this.frames.shift();
      this.tonal.shift();
    }
    if (tonal) {
      this.toneRun++;
      // A run long enough to be a tone: the frames it holds so far count as tone too.
      if (this.toneRun === TONE_RUN_FRAMES) this.count.toneFrames += TONE_RUN_FRAMES;
      else if (this.toneRun > TONE_RUN_FRAMES) this.count.toneFrames++;
    } else {
      this.toneRun = 0;
    }
    const sit = this.sit.push(samples);
    if (sit) this.sitEvent = sit;
    return sit;
  }

  get stats(): EarlyAudioStats {
    return { ...this.count };
  }

  /** The SIT heard, if any. */
  get sitHeard(): SitEvent | undefined {
    return this.sitEvent;
  }

  /**
   * The last EARLY_PREROLL_MS of early audio, oldest first, call-progress tones silenced. Once:
   * the frames are handed over and nothing more is kept.
   */
  preroll(): AudioFrame[] {
    if (this.taken) return [];
    this.taken = true;
    const out = this.frames.slice();
    const tonal = this.tonal;
    let i = 0;
    while (i < out.length) {
      if (!tonal[i]) {
        i++;
        continue;
      }
      let j = i;
      while (j < out.length && tonal[j]) j++;
      if (j - i >= TONE_RUN_FRAMES) for (let k = i; k < j; k++) out[k] = silenceFrame();
      i = j;
    }
    this.frames.length = 0;
    this.tonal.length = 0;
    return out;
  }
}

const FFT_SIZE = 512;
const fft = new RealFft(FFT_SIZE);
const input = new Float64Array(FFT_SIZE);
const re = new Float64Array(FFT_SIZE / 2 + 1);
const im = new Float64Array(FFT_SIZE / 2 + 1);
const power = new Float64Array(FFT_SIZE / 2 + 1);
const hann = new Map<number, Float64Array>();

/**
 * Share of a frame's energy in its two strongest spectral peaks (each ±2 bins of a Hann-windowed
 * 512-point FFT, ±62 Hz at 16 kHz): ~1 for one or two steady tones (a dual-tone ringback's two
 * tones fall in one or two peaks), well below for speech and noise.
 */
export function tonalShare(samples: Int16Array): number {
  const n = Math.min(samples.length, FFT_SIZE);
  let w = hann.get(n);
  if (!w) {
    w = new Float64Array(n);
    for (let i = 0; i < n; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1));
    hann.set(n, w);
  }
  input.fill(0);
  for (let i = 0; i < n; i++) input[i] = samples[i]! * w[i]!;
  fft.forwardPower(input, re, im, power);
  let total = 0;
  for (let k = 1; k < power.length; k++) total += power[k]!;
  if (total <= 0) return 0;
  let peaks = 0;
  for (let p = 0; p < 2; p++) {
    let best = 1;
    for (let k = 2; k < power.length; k++) if (power[k]! > power[best]!) best = k;
    for (let k = Math.max(1, best - 2); k <= Math.min(power.length - 1, best + 2); k++) {
      peaks += power[k]!;
      power[k] = 0;
    }
  }
  return peaks / total;
}
