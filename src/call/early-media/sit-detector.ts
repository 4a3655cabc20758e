/**
 * Special Information Tones (Telcordia GR-1162, ITU-T E.180 §7): the three rising tones a
 * network plays before an intercept announcement ("the number you have dialled is not in
 * service", "all circuits are busy"). Heard in the early media of an outbound call, they say the
 * call cannot succeed, whatever the carrier's final response will be, and however long it takes
 * to come (some carriers loop the announcement until our ringing timeout).
 *
 * The tones: segment 1 at 913.8 or 985.2 Hz, segment 2 at 1370.6 or 1428.5 Hz, segment 3 at
 * 1776.7 Hz, each 274 ms ("short") or 380 ms ("long"). The second segment's frequency splits the
 * classes in two: 1370.6 Hz for intercept, vacant code and ineffective other (something is wrong
 * with the number), 1428.5 Hz for no circuit and reorder (the network cannot carry the call now).
 *
 * Pure and streaming: one 20 ms 16 kHz frame at a time, time from the frame count. Each frame is
 * measured at the five frequencies (Goertzel); a frame belongs to a segment when one of them
 * holds most of its energy. The sequence 1 → 2 → 3 is reported on the third segment's
 * `MIN_SEGMENT_FRAMES`th frame, so the call can end without waiting for the announcement.
 */
import { FRAME_MS, SAMPLE_RATE } from '../../audio/frame.ts';

export type SitClass = 'intercept' | 'reorder';

export interface SitEvent {
  class: SitClass;
  /** ms from the first frame pushed to the start of the first tone. */
  startMs: number;
  /** ms from the first frame pushed to the detection. */
  atMs: number;
  /** The measured segment frequencies, Hz. */
  tonesHz: [number, number, number];
}

const SEGMENT_FREQS: readonly (readonly number[])[] = [[913.8, 985.2], [1370.6, 1428.5], [1776.7]];
/** 274 ms segments (±10%), on 20 ms frames: at least 10 frames of each, at most 25 (500 ms). */
const MIN_SEGMENT_FRAMES = 10;
const MAX_SEGMENT_FRAMES = 25;
/** Frames of anything else allowed between two segments (a codec's smearing at the edge). */
const MAX_GAP_FRAMES = 2;
/** Share of a frame's energy one SIT frequency must hold. */
const MIN_SHARE = 0.5;
/** Quieter frames are never tones (-40 dBFS RMS). */
const MIN_RMS = 32768 * 10 ** (-40 / 20);

interface Run {
  segment: number;
  freqHz: number;
  frames: number;
  startFrame: number;
  lastFrame: number;
}

export class SitDetector {
  private frame = 0;
  /** Completed segments of the sequence under way, in order. */
  private seq: Run[] = [];
  private run: Run | undefined;
  private gap = 0;
  /** Frame after the last segment of `seq` ended. */
  private lastEnd = 0;
  private reported = false;

  /** One 20 ms 16 kHz frame; returns the event once, on the frame that completes the sequence. */
  push(samples: Int16Array): SitEvent | undefined {
    const at = this.frame++;
    if (this.reported) return undefined;
    const hit = classify(samples);
    const run = this.run;
    if (hit && run && hit.segment === run.segment) {
      run.frames++;
      run.lastFrame = at;
      this.gap = 0;
    } else if (hit) {
      if (run) this.close(run);
      // The segments of one SIT follow each other at once.
      if (this.seq.length > 0 && at - this.lastEnd > MAX_GAP_FRAMES) this.seq = [];
      this.run = { segment: hit.segment, freqHz: hit.freqHz, frames: 1, startFrame: at, lastFrame: at };
      this.gap = 0;
    } else if (run && ++this.gap > MAX_GAP_FRAMES) {
      this.close(run);
      this.run = undefined;
    }
    const cur = this.run;
    if (cur && cur.segment === 2 && cur.frames === MIN_SEGMENT_FRAMES && this.seq.length === 2) {
      const [s1, s2] = this.seq as [Run, Run];
      this.reported = true;
      return {
        class: s2.freqHz < 1400 ? 'intercept' : 'reorder',
        startMs: s1.startFrame * FRAME_MS,
        atMs: (at + 1) * FRAME_MS,
        tonesHz: [s1.freqHz, s2.freqHz, cur.freqHz],
      };
    }
    return undefined;
  }

  /** A segment ended: it extends the sequence when it is the next one in order, else restarts it. */
  private close(run: Run): void {
    this.gap = 0;
    // Too short is a click, too long a steady tone (dial tone, ringback): neither is a SIT segment.
    if (run.frames < MIN_SEGMENT_FRAMES || run.frames > MAX_SEGMENT_FRAMES) {
      this.seq = [];
      return;
    }
    if (run.segment === this.seq.length) this.seq.push(run);
    else this.seq = run.segment === 0 ? [run] : [];
    this.lastEnd = run.lastFrame + 1;
  }

  private reset(): void {
    this.seq = [];
    this.run = undefined;
    this.gap = 0;
  }
}

/** The SIT frequency holding most of this frame's energy, if any. */
function classify(samples: Int16Array): { segment: number; freqHz: number } | undefined {
  let energy = 0;
  for (let i = 0; i < samples.length; i++) energy += samples[i]! * samples[i]!;
  const n = samples.length;
  if (n === 0 || Math.sqrt(energy / n) < MIN_RMS) return undefined;
  let best: { segment: number; freqHz: number; share: number } | undefined;
  for (let segment = 0; segment < SEGMENT_FREQS.length; segment++) {
    for (const freqHz of SEGMENT_FREQS[segment]!) {
      const share = (2 * goertzelPower(samples, freqHz)) / (n * energy);
      if (share >= MIN_SHARE && (!best || share > best.share)) best = { segment, freqHz, share };
    }
  }
  return best;
}

/** |X(f)|² over the frame (rectangular window): a pure tone at f gives (A·n/2)². */
export function goertzelPower(samples: Int16Array, freqHz: number, rate = SAMPLE_RATE): number {
  const coeff = 2 * Math.cos((2 * Math.PI * freqHz) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < samples.length; i++) {
    const s0 = samples[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}
