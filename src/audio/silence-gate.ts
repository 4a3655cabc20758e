/**
 * A silence gate for the caller-side models: audio far below any speech level does not need a
 * neural network to be called silence. On a phone call the caller is quiet most of the time
 * (listening to the assistant, thinking), and a quiet line sits at −65 to −80 dBFS, while even
 * soft speech on a telephone is −40 dBFS or louder. So once a stream has been below
 * `SILENCE_GATE_DBFS` for a hangover's worth of blocks, the Silero VAD stops running windows
 * (their probability is 0, what the model says of such audio anyway) and the denoiser stops
 * running frames (it would suppress them to nothing), until the level rises again. The first
 * loud block opens the gate at once: there is no attack delay, so speech onsets are never cut.
 *
 * The hangover keeps the models running through the quiet gaps inside speech (stops, pauses
 * between words) and past the end of an utterance, so every decision the VAD takes while the
 * caller talks, and the endpointing silence that follows, comes from the model itself.
 *
 * Levels here are RMS relative to full scale with a full-scale square wave at 0 dBFS (`rms()` in
 * frame.ts): −60 dBFS is an RMS of about 33 in 16-bit samples.
 */

/** Blocks quieter than this (RMS, dBFS) count as silence. */
export const SILENCE_GATE_DBFS = -60;

/** Mean square of full-scale-normalised samples for a level in dBFS (RMS², square wave = 0 dBFS). */
export function meanSquareForDbfs(dbfs: number): number {
  return dbfs === -Infinity ? 0 : 10 ** (dbfs / 10);
}

/** Mean square of 16-bit samples, normalised to full scale (1 = a full-scale square wave). */
export function meanSquareInt16(samples: Int16Array): number {
  const n = samples.length;
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const s = samples[i]!;
    sum += s * s;
  }
  return sum / (n * 32768 * 32768);
}

/** Mean square of `samples[from .. to)`, already normalised to full scale (−1..1). */
export function meanSquareFloat(samples: Float32Array, from: number, to: number): number {
  if (to <= from) return 0;
  let sum = 0;
  for (let i = from; i < to; i++) {
    const s = samples[i]!;
    sum += s * s;
  }
  return sum / (to - from);
}

/**
 * The gate's state for one stream: feed each block's mean square in order; `push` says whether
 * the block may be skipped. Pure: no clock, no audio kept.
 */
export class SilenceGate {
  private readonly limit: number;
  private quietRun = 0;

  /**
   * @param hangover quiet blocks that still run after the last loud one (the gate closes on the
   *   block after them)
   * @param dbfs the level below which a block is quiet; `-Infinity` never closes the gate
   */
  constructor(
    readonly hangover: number,
    readonly dbfs = SILENCE_GATE_DBFS,
  ) {
    if (!Number.isInteger(hangover) || hangover < 0) throw new RangeError(`hangover must be a whole number of blocks ≥ 0, got ${hangover}`);
    this.limit = meanSquareForDbfs(dbfs);
  }

  /** True while the last block pushed was skipped. */
  get closed(): boolean {
    return this.quietRun > this.hangover;
  }

  /** One block's mean square (full scale = 1): true when the block may be skipped. */
  push(meanSquare: number): boolean {
    if (!(meanSquare < this.limit)) {
      this.quietRun = 0;
      return false;
    }
    this.quietRun++;
    return this.quietRun > this.hangover;
  }

  /** Whether a block of this mean square pushed now would be skipped, without pushing it. */
  wouldSkip(meanSquare: number): boolean {
    return this.closed && meanSquare < this.limit;
  }

  /** Forget the quiet run (the next block starts with the gate open). */
  reset(): void {
    this.quietRun = 0;
  }
}
