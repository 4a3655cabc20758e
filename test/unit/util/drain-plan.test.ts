/**
 * The drain's deadlines: the whole drain ends by grace + hang-up + close budgets whatever its
 * steps do, a phase that ends early moves the next deadline up, and a step that never settles
 * is let go at its deadline on the clock.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';
import { DRAIN_CLOSE_MS, DRAIN_HANGUP_MS, DrainPlan, settleBy } from '../../../src/util/drain-plan.ts';

describe('DrainPlan', () => {
  it('bounds the whole drain by grace + hang-up + close', () => {
    const plan = new DrainPlan(1_000, { graceMs: 20_000 });
    expect(plan.graceEndsAtMs).toBe(21_000);
    expect(plan.latestEndMs).toBe(21_000 + DRAIN_HANGUP_MS + DRAIN_CLOSE_MS);
    // Steps that overran their own phase still end by the bound.
    const hangupEnd = plan.hangupEndsAtMs(60_000);
    expect(hangupEnd).toBe(21_000 + DRAIN_HANGUP_MS);
    expect(plan.closeEndsAtMs(90_000)).toBe(plan.latestEndMs);
  });

  it('moves later deadlines up when a phase ends early', () => {
    const plan = new DrainPlan(0, { graceMs: 20_000, hangupMs: 2_000, closeMs: 1_000 });
    // Every call ended on its own 3 s into the grace: hung up (none) at 3 s.
    expect(plan.hangupEndsAtMs(3_000)).toBe(5_000);
    // BYEs answered at 3.1 s: the close phase runs from there.
    expect(plan.closeEndsAtMs(3_100)).toBe(4_100);
  });

  it('with no grace, hangs up at once and ends within the hang-up and close budgets', () => {
    const plan = new DrainPlan(500, { graceMs: 0 });
    expect(plan.graceEndsAtMs).toBe(500);
    expect(plan.hangupEndsAtMs(520)).toBe(500 + DRAIN_HANGUP_MS);
  });

  it('refuses a negative or non-finite budget', () => {
    expect(() => new DrainPlan(0, { graceMs: -1 })).toThrow(RangeError);
    expect(() => new DrainPlan(0, { graceMs: 1, hangupMs: Number.NaN })).toThrow(RangeError);
  });
});

describe('settleBy', () => {
  it('lets go of work that never settles at the deadline, and no earlier', async () => {
    const clock = new ManualClock(0);
    let result: boolean | undefined;
    void settleBy(clock, 2_000, new Promise(() => undefined)).then((r) => (result = r));
    clock.advance(1_999);
    await Promise.resolve();
    expect(result).toBeUndefined();
    clock.advance(1);
    await new Promise((r) => setImmediate(r));
    expect(result).toBe(false);
  });

  it('returns as soon as the work settles, rejected or not, leaving no timer armed', async () => {
    const clock = new ManualClock(0);
    expect(await settleBy(clock, 2_000, Promise.resolve('ok'))).toBe(true);
    expect(await settleBy(clock, 2_000, Promise.reject(new Error('failed')))).toBe(true);
    expect(clock.pendingCount).toBe(0);
  });

  it('past its deadline, waits no time, yet counts work that settles at once', async () => {
    const clock = new ManualClock(5_000);
    const late = settleBy(clock, 4_000, new Promise(() => undefined));
    clock.advance(0);
    expect(await late).toBe(false);
    expect(await settleBy(clock, 4_000, Promise.resolve())).toBe(true);
  });
});
