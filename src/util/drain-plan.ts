/**
 * The shutdown drain's timeline as deadlines on one clock, so the whole drain has a bound:
 *
 * 1. grace: live calls may end on their own until `graceEndsAtMs` (SWITCHBOARD_DRAIN_SECONDS);
 * 2. hang-up: the calls still up are hung up; their BYEs and the work the calls leave behind
 *    (post-call finishing) get `hangupMs` more, counted from the hang-up or the end of the grace,
 *    whichever came first, so a peer that never answers its BYE (a 32 s transaction) or a
 *    provider that never answers the evaluation cannot hold the process;
 * 3. close: SIP, HTTP, workers and models get `closeMs` to stop; the store closes after that
 *    regardless, and whatever was cut is finished from the store on the next start.
 *
 * A phase that ends early moves the next deadline up, never back, so the drain always ends by
 * `latestEndMs` = start + grace + hangupMs + closeMs. Pure arithmetic; `settleBy` is the timer.
 */
import type { Clock, Timer } from './clock.ts';

/** After the hang-up: how long BYEs and the calls' finishing work may take. */
export const DRAIN_HANGUP_MS = 2_000;
/** After that: how long SIP, HTTP and the workers may take to stop before the store closes. */
export const DRAIN_CLOSE_MS = 1_000;

export interface DrainBudget {
  graceMs: number;
  hangupMs: number;
  closeMs: number;
}

export class DrainPlan {
  readonly budget: DrainBudget;

  constructor(
    readonly startMs: number,
    budget: Partial<DrainBudget> & Pick<DrainBudget, 'graceMs'>,
  ) {
    this.budget = { hangupMs: DRAIN_HANGUP_MS, closeMs: DRAIN_CLOSE_MS, ...budget };
    for (const [k, v] of Object.entries(this.budget)) {
      if (!Number.isFinite(v) || v < 0) throw new RangeError(`drain ${k} must be a finite number ≥ 0, got ${v}`);
    }
  }

  /** Until then live calls may end on their own. */
  get graceEndsAtMs(): number {
    return this.startMs + this.budget.graceMs;
  }

  /** When the wait for BYE answers and the calls' finishing work ends, given when the calls were hung up. */
  hangupEndsAtMs(hungUpAtMs: number): number {
    return Math.min(hungUpAtMs, this.graceEndsAtMs) + this.budget.hangupMs;
  }

  /** When SIP, HTTP and workers must have stopped, given when the hang-up phase ended. */
  closeEndsAtMs(hangupEndedAtMs: number): number {
    return Math.min(hangupEndedAtMs, this.graceEndsAtMs + this.budget.hangupMs) + this.budget.closeMs;
  }

  /** The bound of the whole drain. */
  get latestEndMs(): number {
    return this.graceEndsAtMs + this.budget.hangupMs + this.budget.closeMs;
  }
}

/**
 * Waits for `work` until `deadlineMs` on `clock`: true if it settled (resolved or rejected) in
 * time, false if the deadline came first. The work is not cancelled, only no longer waited for.
 */
export function settleBy(clock: Pick<Clock, 'now' | 'setTimeout'>, deadlineMs: number, work: Promise<unknown>): Promise<boolean> {
  const settled = work.then(
    () => true,
    () => true,
  );
  // Past the deadline, work that settles at once (a close with nothing left to do) still counts.
  const leftMs = Math.max(0, deadlineMs - clock.now());
  let timer: Timer | undefined;
  const late = new Promise<boolean>((resolve) => (timer = clock.setTimeout(() => resolve(false), leftMs)));
  return Promise.race([settled, late]).finally(() => timer?.cancel());
}
