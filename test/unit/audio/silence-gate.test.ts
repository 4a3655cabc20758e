// The silence gate's core: levels, the hangover, opening at once on a loud block.
import { describe, expect, it } from 'vitest';
import { meanSquareFloat, meanSquareForDbfs, meanSquareInt16, SilenceGate } from '../../../src/audio/silence-gate.ts';
import { rmsDbfs } from '../../../src/audio/frame.ts';

const tone = (dbfs: number, n = 320): Int16Array => {
  // A square wave: its RMS is its amplitude, so the level is exact.
  const a = Math.round(32768 * 10 ** (dbfs / 20));
  return Int16Array.from({ length: n }, (_, i) => (i % 16 < 8 ? a : -a));
};

describe('levels', () => {
  it('measures a block the way rmsDbfs does (square wave = 0 dBFS)', () => {
    for (const dbfs of [-20, -45, -60, -70]) {
      const block = tone(dbfs);
      expect(10 * Math.log10(meanSquareInt16(block))).toBeCloseTo(rmsDbfs(block), 6);
      const floats = Float32Array.from(block, (s) => s / 32768);
      expect(meanSquareFloat(floats, 0, floats.length)).toBeCloseTo(meanSquareInt16(block), 9);
    }
    expect(meanSquareInt16(new Int16Array(0))).toBe(0);
    expect(meanSquareFloat(new Float32Array(4), 2, 2)).toBe(0);
    expect(meanSquareForDbfs(-60)).toBeCloseTo(1e-6, 12);
    expect(meanSquareForDbfs(-Infinity)).toBe(0);
  });
});

describe('SilenceGate', () => {
  it('skips quiet blocks only after the hangover, and reopens on the first loud block', () => {
    const gate = new SilenceGate(3, -60);
    const quiet = meanSquareInt16(tone(-66));
    const loud = meanSquareInt16(tone(-54));
    expect([quiet, quiet, quiet].map((m) => gate.push(m))).toEqual([false, false, false]);
    expect(gate.closed).toBe(false);
    expect(gate.push(quiet)).toBe(true);
    expect(gate.closed).toBe(true);
    expect(gate.push(quiet)).toBe(true);
    expect(gate.push(loud)).toBe(false);
    expect(gate.closed).toBe(false);
    // A loud block restarts the hangover.
    expect([quiet, quiet, quiet, quiet].map((m) => gate.push(m))).toEqual([false, false, false, true]);
  });

  it('treats a block exactly at the level as loud, and digital silence as quiet', () => {
    const gate = new SilenceGate(0, -60);
    expect(gate.push(meanSquareForDbfs(-60))).toBe(false);
    expect(gate.push(0)).toBe(true);
    expect(gate.push(Number.NaN)).toBe(false);
  });

  it('never closes at -Infinity, and starts over after reset', () => {
    const never = new SilenceGate(0, -Infinity);
    for (let i = 0; i < 10; i++) expect(never.push(0)).toBe(false);
    const gate = new SilenceGate(1);
    gate.push(0);
    expect(gate.push(0)).toBe(true);
    gate.reset();
    expect(gate.closed).toBe(false);
    expect(gate.push(0)).toBe(false);
    expect(gate.push(0)).toBe(true);
  });

  it('refuses a hangover that is not a whole number of blocks', () => {
    expect(() => new SilenceGate(-1)).toThrow(RangeError);
    expect(() => new SilenceGate(1.5)).toThrow(RangeError);
  });
});
