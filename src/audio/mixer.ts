/**
 * Ambient bed mixing: a looping background under everything the assistant sends, silence
 * frames included, so the line never falls to digital silence between replies.
 *
 * The heavy work happens once per (bed, volume), shared by every call: the loop point is
 * crossfaded and the gain baked in (`prepareAmbientLoop`). Per call there is only a read
 * position, and `AmbientMixer.mix` is a saturating add into a buffer the caller provides:
 * no allocation on the 20 ms hot path.
 *
 * Volume mapping (ambient_sound_volume, 0–1, perceptual = linear in dB): the bed is measured
 * and scaled so its RMS lands at
 *     level_dBFS = -48 + 28 × volume      (0.01 → -47.7, 0.25 → -41, 0.5 → -34, 0.75 → -27, 1 → -20)
 * and volume 0 mutes it. TTS speech sits around -20 dBFS RMS, so the default 0.5 keeps the bed
 * 14 dB under the voice — present, never competing; 1 makes it as loud as the voice.
 */
import { SAMPLE_RATE } from './frame.ts';

export const AMBIENT_MIN_DBFS = -48;
export const AMBIENT_MAX_DBFS = -20;

/** Target RMS of the bed in dBFS for a volume, or undefined when muted (0 or not finite). */
export function ambientLevelDbfs(volume: number): number | undefined {
  if (!Number.isFinite(volume) || volume <= 0) return undefined;
  const v = Math.min(1, volume);
  return AMBIENT_MIN_DBFS + (AMBIENT_MAX_DBFS - AMBIENT_MIN_DBFS) * v;
}

/** A prepared, gain-applied, seamlessly looping bed; immutable and shared between calls. */
export interface AmbientLoop {
  readonly samples: Int16Array;
  readonly sampleRate: number;
  /** RMS of `samples` in dBFS (the level the caller hears under silence). */
  readonly levelDbfs: number;
}

export interface PrepareLoopOptions {
  /** Overlap mixed at the loop point; 500 ms hides the seam in any noise-like bed. */
  crossfadeMs?: number;
  sampleRate?: number;
}

/**
 * Crossfade the bed's tail into its head, so playing `samples` in a loop is continuous: the loop
 * is the bed minus its last C samples, and its first C samples blend the original head (fading
 * in) with the removed tail (fading out). Sample L-1 is followed in the loop by what followed it
 * in the original, to within the fade's first step. Equal-power fades, because bed head and tail
 * are uncorrelated noise: linear fades would dip the level by 3 dB mid-fade.
 */
export function prepareAmbientLoop(raw: Int16Array, volume: number, options: PrepareLoopOptions = {}): AmbientLoop | undefined {
  const target = ambientLevelDbfs(volume);
  if (target === undefined || raw.length === 0) return undefined;
  const sampleRate = options.sampleRate ?? SAMPLE_RATE;
  const c = Math.min(Math.floor(raw.length / 2), Math.round(((options.crossfadeMs ?? 500) * sampleRate) / 1000));
  const loopLength = raw.length - c;
  const loop = new Float64Array(loopLength);
  for (let i = 0; i < loopLength; i++) loop[i] = raw[i]!;
  for (let i = 0; i < c; i++) {
    const t = (i + 0.5) / c;
    const fadeIn = Math.sin((t * Math.PI) / 2);
    const fadeOut = Math.cos((t * Math.PI) / 2);
    loop[i] = raw[i]! * fadeIn + raw[loopLength + i]! * fadeOut;
  }
  let sum = 0;
  for (let i = 0; i < loopLength; i++) sum += loop[i]! * loop[i]!;
  const rmsNow = Math.sqrt(sum / Math.max(1, loopLength)) / 32768;
  const samples = new Int16Array(loopLength);
  if (rmsNow === 0) return { samples, sampleRate, levelDbfs: -Infinity };
  const gain = 10 ** (target / 20) / rmsNow;
  let outSum = 0;
  for (let i = 0; i < loopLength; i++) {
    const s = clamp16(Math.round(loop[i]! * gain));
    samples[i] = s;
    outSum += s * s;
  }
  return { samples, sampleRate, levelDbfs: 20 * Math.log10(Math.sqrt(outSum / loopLength) / 32768) };
}

function clamp16(x: number): number {
  return x > 32767 ? 32767 : x < -32768 ? -32768 : x;
}

/** Per-call playback of a shared loop. */
export class AmbientMixer {
  private pos: number;

  /** `startOffset` lets concurrent calls start at different points of the same bed. */
  constructor(
    readonly loop: AmbientLoop,
    startOffset = 0,
  ) {
    const n = loop.samples.length;
    this.pos = n === 0 ? 0 : ((Math.floor(startOffset) % n) + n) % n;
  }

  /** Read position in the loop (samples), for tests and diagnostics. */
  get position(): number {
    return this.pos;
  }

  /**
   * out[i] = saturate(input[i] + bed[pos + i]). `input` undefined means a silence frame (the bed
   * alone). `out` may be `input` itself for in-place mixing. Returns `out`.
   */
  mix(input: Int16Array | undefined, out: Int16Array): Int16Array {
    const bed = this.loop.samples;
    const n = bed.length;
    if (n === 0) {
      if (input && input !== out) out.set(input);
      else if (!input) out.fill(0);
      return out;
    }
    let pos = this.pos;
    const len = out.length;
    for (let i = 0; i < len; i++) {
      const v = (input ? input[i]! : 0) + bed[pos]!;
      out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      if (++pos === n) pos = 0;
    }
    this.pos = pos;
    return out;
  }
}
