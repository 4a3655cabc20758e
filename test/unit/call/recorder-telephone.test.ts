import { describe, expect, it } from 'vitest';
import { StereoRecorder, telephoneBandSink } from '../../../src/call/recorder.ts';
import { sine, toneLevel } from '../../unit/audio/signal.ts';

/** Writes `pcm` in 20 ms frames from `startMs`, as a player does, through the telephone-band view. */
function record(pcm: Int16Array, startMs: number): Int16Array {
  const rec = new StereoRecorder();
  const sink = telephoneBandSink(rec);
  for (let at = 0; at < pcm.length; at += 320) sink.assistant(startMs + at / 16, pcm.subarray(at, at + 320));
  return rec.channels().right;
}

describe('telephoneBandSink (the assistant side of a G.711 call recording)', () => {
  it('keeps speech-band tones at their level and removes what lies above 4 kHz', () => {
    const n = 16_000;
    for (const hz of [300, 1000, 3000]) {
      const out = record(sine(hz, 16_000, n), 100);
      expect(20 * Math.log10(toneLevel(out, hz, 16_000, 3200) / toneLevel(sine(hz, 16_000, n), hz, 16_000))).toBeGreaterThan(-0.5);
    }
    for (const hz of [5000, 6000, 7000]) {
      const out = record(sine(hz, 16_000, n), 100);
      expect(20 * Math.log10(toneLevel(out, hz, 16_000, 3200) / (10_000 / 32768))).toBeLessThan(-55);
    }
  });

  it('places the audio on the call clock: the filters’ delay is taken back', () => {
    // A click at 500 ms after answer must land at sample 8000, within a sample.
    const pcm = new Int16Array(16_000);
    pcm[8000 - 1600] = 20_000;
    const out = record(pcm, 100);
    let peak = 0;
    for (let i = 1; i < out.length; i++) if (Math.abs(out[i]!) > Math.abs(out[peak]!)) peak = i;
    expect(Math.abs(peak - 8000)).toBeLessThanOrEqual(1);
  });

  it('passes the caller side through untouched', () => {
    const rec = new StereoRecorder();
    const frame = sine(6000, 16_000, 320);
    telephoneBandSink(rec).caller(40, frame);
    expect(Array.from(rec.channels().left.subarray(640, 960))).toEqual(Array.from(frame));
  });
});
