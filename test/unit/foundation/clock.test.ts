import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';

describe('ManualClock', () => {
  it('fires timers in due order, then creation order, with now() at their due time', () => {
    const clock = new ManualClock(0);
    const seen: string[] = [];
    clock.setTimeout(() => seen.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => seen.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => seen.push(`c@${clock.now()}`), 20);
    const cancelled = clock.setTimeout(() => seen.push('never'), 15);
    cancelled.cancel();
    expect(clock.pendingCount).toBe(3);
    clock.advance(25);
    expect(seen).toEqual(['a@10', 'b@20', 'c@20']);
    expect(clock.now()).toBe(25);
    expect(clock.pendingCount).toBe(0);
  });

  it('fires timers scheduled by timers within the same advance', () => {
    const clock = new ManualClock(0);
    const ticks: number[] = [];
    const tick = () => {
      ticks.push(clock.now());
      if (ticks.length < 5) clock.setTimeout(tick, 20);
    };
    clock.setTimeout(tick, 20);
    clock.advance(1000);
    expect(ticks).toEqual([20, 40, 60, 80, 100]);
  });

  it('handles a long simulated call in one step quickly', () => {
    const clock = new ManualClock(0);
    let frames = 0;
    const tick = () => {
      frames++;
      clock.setTimeout(tick, 20);
    };
    clock.setTimeout(tick, 20);
    for (let i = 0; i < 1000; i++) clock.setTimeout(() => undefined, 1_000_000_000).cancel();
    clock.advance(20 * 60 * 1000); // a 20-minute call
    expect(frames).toBe(60_000);
  });
});
