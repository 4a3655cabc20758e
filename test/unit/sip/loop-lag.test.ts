import { describe, expect, it } from 'vitest';
import { LOOP_RESOLUTION_MS, LoopLag, LoopLagWindow, type DelayHistogram } from '../../../src/sip/loop-lag.ts';

/** A histogram whose p99 and sample count the test sets, per second. */
class FakeHistogram implements DelayHistogram {
  count = 0;
  p99Ns = 0;
  resets = 0;
  percentile(p: number): number {
    if (p !== 99) throw new Error(`unexpected percentile ${p}`);
    return this.p99Ns;
  }
  reset(): void {
    this.resets++;
    this.count = 0;
    this.p99Ns = 0;
  }
  second(p99Ms: number, count = 100): void {
    this.count = count;
    // Node's histogram counts the whole timer interval: the resolution is in every reading.
    this.p99Ns = (p99Ms + LOOP_RESOLUTION_MS) * 1e6;
  }
}

describe('LoopLagWindow: event-loop delay as an overload signal', () => {
  it('reports the lower p99 of the last two whole seconds, so one bad second is not overload', () => {
    const h = new FakeHistogram();
    const w = new LoopLagWindow(h, 0);
    expect(w.p99Ms).toBe(0);
    h.second(80);
    w.rotate(1000);
    expect(w.p99Ms).toBe(0);
    h.second(2);
    w.rotate(2000);
    expect(w.p99Ms).toBe(2);
    h.second(70);
    w.rotate(3000);
    expect(w.p99Ms).toBe(2);
    h.second(60);
    w.rotate(4000);
    expect(w.p99Ms).toBe(60);
    expect(h.resets).toBe(4);
  });

  it('counts a second without samples (a loop blocked all of it) as a stall as long as the rotation was late', () => {
    const h = new FakeHistogram();
    const w = new LoopLagWindow(h, 0);
    // The rotation timer itself ran 900 ms, then 600 ms late; no delay sample was taken.
    w.rotate(1900);
    w.rotate(3500);
    expect(w.p99Ms).toBe(600);
    // Whichever is larger: the samples' p99 or the lateness.
    h.second(700, 3);
    w.rotate(4600);
    expect(w.p99Ms).toBe(600);
  });

  it('never reads below zero (the resolution is subtracted)', () => {
    const h = new FakeHistogram();
    const w = new LoopLagWindow(h, 0);
    for (let s = 1; s <= 2; s++) {
      h.count = 100;
      h.p99Ns = 1e6;
      w.rotate(s * 1000);
    }
    expect(w.p99Ms).toBe(0);
  });
});

describe('LoopLag on the real event loop', () => {
  it('sees a loop blocked for two seconds in a row', async () => {
    const lag = new LoopLag();
    try {
      const block = (ms: number) => {
        const end = performance.now() + ms;
        while (performance.now() < end) {
          /* busy: the loop cannot run the monitor's timer */
        }
      };
      // Blocks of 150 ms with short breaks until two whole seconds were measured (about 2 s).
      const start = performance.now();
      while (lag.p99Ms <= 50 && performance.now() - start < 5000) {
        block(150);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(lag.p99Ms).toBeGreaterThan(50);
      expect(performance.now() - start).toBeGreaterThan(1000);
    } finally {
      lag.close();
    }
  });
});
