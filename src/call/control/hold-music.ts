/**
 * Hold music for warm transfers, synthesised here rather than shipped as a recording: no licence
 * question, no asset to lose, and it is the same bytes on every machine (provenance = this file).
 *
 * A slow I–vi–IV–V progression in C (C, Am, F, G; 2 s each, 8 s loop), each chord three soft
 * sines with a short attack and release so chord changes do not click, plus a quieter octave-up
 * voice for some shimmer. Narrowband friendly: everything sits between 130 and 1050 Hz.
 *
 * `hold_music_volume` (0–100) maps linearly to peak amplitude, 100 ≈ −12 dBFS peak: loud enough
 * to reassure, quiet enough not to clip through G.711 or annoy.
 */
import { FRAME_SAMPLES, SAMPLE_RATE, type AudioFrame } from '../../audio/frame.ts';

const CHORDS_HZ: readonly (readonly number[])[] = [
  [261.63, 329.63, 392.0], // C
  [220.0, 261.63, 329.63], // Am
  [174.61, 220.0, 261.63], // F
  [196.0, 246.94, 293.66], // G
];
const CHORD_S = 2;
const FADE_S = 0.08;
const PEAK_AT_100 = 0.25; // of full scale

let loop: Float32Array | undefined;

/** The loop at unit amplitude (peak 1), built once. */
function unitLoop(): Float32Array {
  if (loop) return loop;
  const per = CHORD_S * SAMPLE_RATE;
  const out = new Float32Array(per * CHORDS_HZ.length);
  let peak = 0;
  CHORDS_HZ.forEach((chord, ci) => {
    for (let i = 0; i < per; i++) {
      const t = i / SAMPLE_RATE;
      const env = Math.min(1, t / FADE_S, (CHORD_S - t) / FADE_S);
      let v = 0;
      for (const hz of chord) v += Math.sin(2 * Math.PI * hz * t);
      v += 0.3 * Math.sin(2 * Math.PI * chord[0]! * 4 * t);
      const s = v * env;
      out[ci * per + i] = s;
      peak = Math.max(peak, Math.abs(s));
    }
  });
  for (let i = 0; i < out.length; i++) out[i]! /= peak;
  loop = out;
  return out;
}

/** Endless 20 ms frames of hold music at `volume` (0–100); 0 gives silence frames. */
export async function* holdMusicFrames(volume: number): AsyncGenerator<AudioFrame> {
  const src = unitLoop();
  const gain = Math.max(0, Math.min(100, volume)) / 100 * PEAK_AT_100 * 32767;
  let at = 0;
  for (;;) {
    const samples = new Int16Array(FRAME_SAMPLES);
    for (let i = 0; i < FRAME_SAMPLES; i++) {
      samples[i] = Math.round(src[at]! * gain);
      at = (at + 1) % src.length;
    }
    yield { samples, sampleRate: SAMPLE_RATE };
  }
}
