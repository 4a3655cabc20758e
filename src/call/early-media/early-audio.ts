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
/**
 * 200 ms on the same one or two frequencies is a call-progress tone, not a voiced sound: pitch
 * moves more than that within a syllable (every ringback cadence and SIT segment is longer).
 */
export const TONE_RUN_FRAMES = 10;
/** Frames without the tone (but not silent) a run may bridge: a lost packet's concealment. */
const BRIDGE_FRAMES = 2;
/** How far (FFT bins, 31.25 Hz each) a tone's peaks may sit from where its run began. */
const TONE_DRIFT_BINS = 1;
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
  /** Per kept frame: the id of the steady tone run it belongs to, or -1. */
  private readonly runOf: number[] = [];
  /** Frames per run id (of the runs still in `frames`). */
  private readonly runLength = new Map<number, number>();
  /** The tone run under way: its peaks, and the frames since its last tonal one (a possible gap in it). */
  private run: { id: number; peaks: [number, number]; gap: number[] } | undefined;
  private nextRunId = 0;
  private readonly sit = new SitDetector();
  private sitEvent: SitEvent | undefined;
  private readonly count = { frames: 0, audibleFrames: 0, toneFrames: 0 };
  private taken = false;

  /** One frame of early media; returns a SIT event once, on the frame that completes it. */
  push(frame: AudioFrame): SitEvent | undefined {
    if (this.taken) return undefined;
    const samples = frame.samples;
    this.count.frames++;
    const audible = rms(samples) >= MIN_TONE_RMS;
    if (audible) this.count.audibleFrames++;
    const peak = audible ? tonalPeaks(samples) : undefined;
    this.frames.push(frame);
    this.runOf.push(-1);
    /** Absolute number of frames[0]. */
    const base = this.count.frames - this.frames.length;
    const n = this.count.frames - 1;
    const run = this.run;
    if (peak && peak.share >= TONAL_SHARE) {
      let bridged = 0;
      if (!run || !near(peak.bins, run.peaks)) {
        this.run = { id: this.nextRunId++, peaks: peak.bins, gap: [] };
      } else {
        // The tone went on past a frame or two that lost it (packet loss, concealment): they are part of it.
        for (const g of run.gap) if (g >= base) this.runOf[g - base] = run.id;
        bridged = run.gap.length;
        run.gap = [];
      }
      const id = this.run!.id;
      this.runOf[n - base] = id;
      const before = this.runLength.get(id) ?? 0;
      const length = before + bridged + 1;
      this.runLength.set(id, length);
      // A run long enough to be a tone: the frames it holds so far count as tone too.
      if (length >= TONE_RUN_FRAMES) this.count.toneFrames += before >= TONE_RUN_FRAMES ? length - before : length;
    } else if (run && audible && run.gap.length < BRIDGE_FRAMES) {
      run.gap.push(n);
    } else {
      this.run = undefined;
    }
    if (this.frames.length > this.capacity) {
      this.frames.shift();
      const gone = this.runOf.shift()!;
      if (gone >= 0 && gone !== this.run?.id && this.runOf[0] !== gone) this.runLength.delete(gone);
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
    const out = this.frames.map((frame, i) => {
      const run = this.runOf[i]!;
      return run >= 0 && (this.runLength.get(run) ?? 0) >= TONE_RUN_FRAMES ? silenceFrame() : frame;
    });
    this.frames.length = 0;
    this.runOf.length = 0;
    this.runLength.clear();
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

/** Whether two frames' peak pairs are the same tone(s): each peak near one of the other's. */
function near(a: readonly [number, number], b: readonly [number, number]): boolean {
  const close = (x: number) => Math.abs(x - b[0]) <= TONE_DRIFT_BINS || Math.abs(x - b[1]) <= TONE_DRIFT_BINS;
  return close(a[0]) && close(a[1]);
}

/** Share of a frame's energy in its two strongest spectral peaks (see tonalPeaks). */
export function tonalShare(samples: Int16Array): number {
  return tonalPeaks(samples)?.share ?? 0;
}

/**
 * The two strongest spectral peaks of a frame (each ±2 bins of a Hann-windowed 512-point FFT,
 * ±62 Hz at 16 kHz) and their share of its energy: ~1 for one or two steady tones (a dual-tone
 * ringback's two tones fall in one or two peaks), lower for speech and noise.
 */
export function tonalPeaks(samples: Int16Array): { share: number; bins: [number, number] } | undefined {
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
  if (total <= 0) return undefined;
  let peaks = 0;
  const bins: [number, number] = [0, 0];
  for (let p = 0; p < 2; p++) {
    let best = 1;
    for (let k = 2; k < power.length; k++) if (power[k]! > power[best]!) best = k;
    bins[p] = best;
    for (let k = Math.max(1, best - 2); k <= Math.min(power.length - 1, best + 2); k++) {
      peaks += power[k]!;
      power[k] = 0;
    }
  }
  return { share: peaks / total, bins };
}
