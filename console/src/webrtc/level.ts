/**
 * The remote level meter's arithmetic, apart from WebAudio so it can be tested without a DOM:
 * RMS of one analyser window of float samples, as dBFS and as the meter's 0..1 position.
 */

/** Floor of the meter: quieter than this shows as empty. */
export const METER_FLOOR_DBFS = -60;

/** RMS of samples in [-1, 1]; 0 for an empty window. */
export function rmsOf(samples: ArrayLike<number>): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) {
    const v = samples[i] ?? 0;
    sum += v * v;
  }
  return Math.sqrt(sum / samples.length);
}

/** RMS as dBFS (full-scale sine ≈ -3 dBFS), clamped at the meter's floor. */
export function dbfsOf(rms: number): number {
  if (rms <= 0) return METER_FLOOR_DBFS;
  return Math.max(METER_FLOOR_DBFS, 20 * Math.log10(rms));
}

/** Where the meter stands (0 empty .. 1 full scale) for a level in dBFS. */
export function meterPosition(dbfs: number): number {
  const p = (dbfs - METER_FLOOR_DBFS) / -METER_FLOOR_DBFS;
  return Math.min(1, Math.max(0, p));
}
