import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BatchPacer } from '../../../src/util/batch-pacer.ts';

describe('BatchPacer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const pacer = (intervalMs: number) => {
    const starts: number[] = [];
    const p = new BatchPacer(intervalMs, () => starts.push(Date.now()), () => Date.now());
    return { p, starts, t0: Date.now() };
  };

  it('starts the first batch on the next turn, however many requests came', async () => {
    const { p, starts, t0 } = pacer(20);
    p.request();
    p.request();
    p.request();
    expect(starts).toEqual([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toEqual([t0]);
  });

  it('starts the next batch no sooner than the interval after the last start', async () => {
    const { p, starts, t0 } = pacer(20);
    p.request();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(5);
    p.request();
    await vi.advanceTimersByTimeAsync(10);
    p.request(); // joins the one already waiting
    expect(starts).toEqual([t0]);
    await vi.advanceTimersByTimeAsync(5);
    expect(starts).toEqual([t0, t0 + 20]);
  });

  it('waits for nothing when the interval has already passed (a lone call, a replay)', async () => {
    const { p, starts, t0 } = pacer(20);
    p.request();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(35);
    p.request();
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toEqual([t0, t0 + 35]);
  });

  it('with interval 0 starts every requested batch on the next turn', async () => {
    const { p, starts, t0 } = pacer(0);
    for (let i = 0; i < 3; i++) {
      p.request();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(starts).toEqual([t0, t0, t0]);
  });

  it('refuses a negative or missing interval', () => {
    expect(() => new BatchPacer(-1, () => {})).toThrow(RangeError);
    expect(() => new BatchPacer(Number.NaN, () => {})).toThrow(RangeError);
  });
});
