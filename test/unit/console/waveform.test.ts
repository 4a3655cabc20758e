import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { activeLineAt, peaks, timeAtX } from '../../../console/src/calls/draw/waveform.ts';
import { readWav } from '../../../src/audio/wav.ts';

/** A real recorded utterance (fixtures/audio/README.md). */
const wav = readWav(readFileSync(new URL('../../../fixtures/audio/utt-opening-hours.wav', import.meta.url)));
const mono = wav.channels === 1 ? wav.samples : Int16Array.from({ length: wav.samples.length / wav.channels }, (_, i) => wav.samples[i * wav.channels]!);

describe('peaks', () => {
  it('gives one min/max pair per column that brackets every sample of the column', () => {
    const cols = 300;
    const p = peaks(mono, cols, { fullScale: 32768 });
    expect(p.min).toHaveLength(cols);
    const per = mono.length / cols;
    for (const c of [0, 17, 150, 299]) {
      const from = Math.floor(c * per);
      const to = Math.floor((c + 1) * per);
      let lo = Infinity;
      let hi = -Infinity;
      for (let i = from; i < to; i++) {
        lo = Math.min(lo, mono[i]! / 32768);
        hi = Math.max(hi, mono[i]! / 32768);
      }
      expect(p.min[c]).toBeCloseTo(lo, 6);
      expect(p.max[c]).toBeCloseTo(hi, 6);
    }
    // The loudest column holds the file's peak; speech is louder than the leading silence.
    const peak = Math.max(...Array.from(mono, (v) => Math.abs(v))) / 32768;
    expect(Math.max(...p.max, ...Array.from(p.min, (v) => -v))).toBeCloseTo(peak, 6);
    const spread = Array.from(p.max, (hi, i) => hi - p.min[i]!);
    expect(Math.max(...spread)).toBeGreaterThan(10 * spread[0]!);
  });

  it('keeps the two channels of a stereo recording apart', () => {
    const stereo = new Int16Array(mono.length * 2);
    for (let i = 0; i < mono.length; i++) stereo[i * 2] = mono[i]!; // caller left, assistant right silent
    const left = peaks(stereo, 100, { channels: 2, channel: 0, fullScale: 32768 });
    const right = peaks(stereo, 100, { channels: 2, channel: 1, fullScale: 32768 });
    expect(Math.max(...left.max)).toBeGreaterThan(0.05);
    expect(Math.max(...right.max)).toBe(0);
    expect(Math.min(...right.min)).toBe(0);
  });

  it('copes with more columns than samples, and with nothing to draw', () => {
    const p = peaks([0.5, -0.5], 4);
    expect(Array.from(p.max)).toEqual([0.5, 0.5, -0.5, -0.5]);
    expect(peaks([], 10).max.every((v) => v === 0)).toBe(true);
    expect(peaks(mono, 0).max).toHaveLength(0);
  });
});

describe('seeking and the current line', () => {
  it('maps a click to a time and a time to the transcript line being spoken', () => {
    expect(timeAtX(250, 1000, 20)).toBe(5);
    expect(timeAtX(-5, 1000, 20)).toBe(0);
    expect(timeAtX(2000, 1000, 20)).toBe(20);
    const lines = [
      { start_ms: 0, end_ms: 1000 },
      { start_ms: 2000, end_ms: 3000 },
      { start_ms: 2500, end_ms: 4000 },
    ];
    expect(activeLineAt(lines, 100, 50)).toBe(-1);
    expect(activeLineAt(lines, 100, 500)).toBe(0);
    expect(activeLineAt(lines, 100, 1500)).toBe(-1);
    expect(activeLineAt(lines, 100, 2700)).toBe(2);
    expect(activeLineAt(lines, 100, 3500)).toBe(2);
    // A seek to a line's start that lands a hair early still shows that line.
    const at = ((2000 + 33.8) / 1000) * 1000 - 0.06;
    expect(activeLineAt(lines, 33.8, at)).toBe(1);
    expect(activeLineAt(lines, 33.8, at, 0)).toBe(-1);
  });
});
