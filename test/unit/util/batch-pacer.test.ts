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

  describe('busy pacing', () => {
    const BUSY = { intervalMs: 40, enterPerSecond: 1000, exitPerSecond: 700 };
    /** A pacer whose owner takes `items()` items at each batch and asks for the next at once. */
    const paced = (items: () => number) => {
      const starts: number[] = [];
      const p: BatchPacer = new BatchPacer(
        20,
        () => {
          starts.push(Date.now());
          p.took(items());
          p.request();
        },
        () => Date.now(),
        BUSY,
      );
      return { p, starts };
    };
    const gaps = (starts: number[]): number[] => starts.slice(1).map((t, i) => t - starts[i]!);

    it('starts batches every busy interval once the items come faster than enterPerSecond, and back under exitPerSecond', async () => {
      let perBatch = 10; // per 20 ms: 500 a second
      const { p, starts } = paced(() => perBatch);
      p.request();
      await vi.advanceTimersByTimeAsync(200);
      expect(p.isBusy).toBe(false);
      expect(new Set(gaps(starts))).toEqual(new Set([20]));
      perBatch = 30; // 1,500 a second: busy once the smoothed rate passes 1,000
      await vi.advanceTimersByTimeAsync(200);
      expect(p.isBusy).toBe(true);
      starts.length = 0;
      await vi.advanceTimersByTimeAsync(400);
      expect(new Set(gaps(starts))).toEqual(new Set([40]));
      // 30 items per 40 ms is 750 a second: above exitPerSecond, it stays busy (no flapping).
      await vi.advanceTimersByTimeAsync(400);
      expect(p.isBusy).toBe(true);
      perBatch = 20; // 500 a second at 40 ms
      await vi.advanceTimersByTimeAsync(400);
      expect(p.isBusy).toBe(false);
      starts.length = 0;
      await vi.advanceTimersByTimeAsync(200);
      expect(new Set(gaps(starts))).toEqual(new Set([20]));
    });

    it('without busy pacing took() changes nothing; a busy interval shorter than the normal one is refused', async () => {
      const starts: number[] = [];
      const p: BatchPacer = new BatchPacer(20, () => {
        starts.push(Date.now());
        p.took(1000);
        p.request();
      }, () => Date.now());
      p.request();
      await vi.advanceTimersByTimeAsync(200);
      expect(p.isBusy).toBe(false);
      expect(new Set(gaps(starts))).toEqual(new Set([20]));
      expect(() => new BatchPacer(20, () => {}, undefined, { intervalMs: 10, enterPerSecond: 10, exitPerSecond: 5 })).toThrow(RangeError);
      expect(() => new BatchPacer(20, () => {}, undefined, { intervalMs: 40, enterPerSecond: 10, exitPerSecond: 10 })).toThrow(RangeError);
    });
  });
});
