/**
 * Waveform peaks: PCM → per pixel column the lowest and highest sample (-1..1), per channel, so a
 * recording of any length draws in as many steps as the canvas is wide. No DOM: the page decodes
 * the WAV with WebAudio and hands each channel's samples here.
 */

export interface Peaks {
  min: Float32Array;
  max: Float32Array;
}

export interface PeakOptions {
  /** Interleaved channels in `samples` (default 1). */
  channels?: number;
  /** Which of them (default 0). */
  channel?: number;
  /** The value of full scale: 1 for WebAudio floats (default), 32768 for Int16. */
  fullScale?: number;
}

export function peaks(samples: ArrayLike<number>, columns: number, opts: PeakOptions = {}): Peaks {
  const channels = Math.max(1, opts.channels ?? 1);
  const channel = Math.min(channels - 1, Math.max(0, opts.channel ?? 0));
  const scale = opts.fullScale ?? 1;
  const cols = Math.max(0, Math.floor(columns));
  const frames = Math.floor(samples.length / channels);
  const min = new Float32Array(cols);
  const max = new Float32Array(cols);
  if (frames === 0) return { min, max };
  for (let c = 0; c < cols; c++) {
    let from = Math.floor((c * frames) / cols);
    let to = Math.floor(((c + 1) * frames) / cols);
    // More columns than frames: each column shows the frame under it.
    if (to <= from) to = from + 1;
    if (from >= frames) from = frames - 1;
    let lo = Infinity;
    let hi = -Infinity;
    for (let f = from; f < Math.min(to, frames); f++) {
      const v = (samples[f * channels + channel] ?? 0) / scale;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    min[c] = Math.max(-1, lo);
    max[c] = Math.min(1, hi);
  }
  return { min, max };
}

/** Time (s) under pixel `x` of a waveform `width` px wide showing `durationS`. */
export function timeAtX(x: number, width: number, durationS: number): number {
  if (width <= 0 || durationS <= 0) return 0;
  return Math.min(durationS, Math.max(0, (x / width) * durationS));
}

/**
 * The transcript line being spoken at `tMs` (answer time): the latest that started by then and has
 * not ended; -1 if none. A seek to a line's start lands a hair before it (the media element keeps
 * its position in its own steps, and ms → s → ms is not exact), hence the few ms of tolerance.
 */
export function activeLineAt(lines: ReadonlyArray<{ start_ms: number; end_ms: number }>, zeroMs: number, tMs: number, toleranceMs = 5): number {
  let found = -1;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.start_ms + zeroMs - toleranceMs <= tMs && tMs < Math.max(l.end_ms, l.start_ms + 1) + zeroMs) found = i;
  }
  return found;
}
