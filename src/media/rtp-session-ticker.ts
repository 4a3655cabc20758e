/**
 * A repeating slot timer on absolute deadlines (start + n × intervalMs), for the session's two
 * media loops. One clock timer at a time, re-armed per slot, so a drifting setInterval never
 * creeps into the audio, and stop() leaves nothing behind.
 *
 * `SlotTicker` is the shape the session's loops depend on; `DeadlineTicker` runs one timer of its
 * own, `SharedTicker` (media-clock.ts) rides one process-wide timer per interval.
 */
import type { Clock, Timer } from '../util/clock.ts';
import { PacingSchedule } from './pacer.ts';

export interface TickerStats {
  /** Slots given up after an event-loop stall longer than `maxCatchUp` slots. */
  skippedSlots: number;
  /** Worst lateness seen, measured against the oldest slot due (before any skip), so a stall shows at its full length. */
  maxLateMs: number;
}

/**
 * Called once per served slot. `lateMs` is how late this slot is against its deadline;
 * `skipped` is how many slots were given up just before this one (non-zero only for the first
 * slot served after a stall), so a consumer that derives time from slot counts (RTP timestamps)
 * can keep following real time. `dueMs` is the deadline itself (clock.monotonic() time), so a
 * consumer can hand work on with a time that does not depend on how late the slot ran.
 */
export type SlotHandler = (lateMs: number, skipped: number, dueMs: number) => void;

export interface SlotTicker {
  readonly intervalMs: number;
  readonly isRunning: boolean;
  readonly stats: TickerStats;
  start(): void;
  stop(): void;
}

/**
 * The pure catch-up rule shared by both tickers: given `due` slots (oldest first) and the
 * oldest one's lateness, how many to serve and how many to skip. Records the stats.
 */
export function planCatchUp(stats: TickerStats, due: number, oldestLateMs: number, maxCatchUp: number): number {
  if (oldestLateMs > stats.maxLateMs) stats.maxLateMs = oldestLateMs;
  if (due <= maxCatchUp) return 0;
  const skip = due - maxCatchUp;
  stats.skippedSlots += skip;
  return skip;
}

export class DeadlineTicker implements SlotTicker {
  private schedule: PacingSchedule;
  private nextIndex = 0;
  private timer: Timer | undefined;
  private running = false;
  readonly stats: TickerStats = { skippedSlots: 0, maxLateMs: 0 };

  /**
   * @param onSlot called once per slot with the slot's lateness and the slots skipped before
   *   it; several times in one turn when the loop catches up after a short stall.
   * @param maxCatchUp slots served in one burst after a stall; older ones are skipped.
   */
  constructor(
    private readonly clock: Clock,
    readonly intervalMs: number,
    private readonly onSlot: SlotHandler,
    private readonly maxCatchUp = 3,
  ) {
    this.schedule = new PacingSchedule(clock.monotonic(), intervalMs);
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Starts a fresh grid now; the first slot is due at once. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule = new PacingSchedule(this.clock.monotonic(), this.intervalMs);
    this.nextIndex = 0;
    this.arm();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private arm(): void {
    const now = this.clock.monotonic();
    this.timer = this.clock.setTimeout(() => this.tick(), this.schedule.delayUntil(this.nextIndex, now));
  }

  private tick(): void {
    this.timer = undefined;
    if (!this.running) return;
    const now = this.clock.monotonic();
    let due = this.schedule.dueCount(this.nextIndex, now);
    let skipped = 0;
    if (due > 0) {
      skipped = planCatchUp(this.stats, due, now - this.schedule.dueAt(this.nextIndex), this.maxCatchUp);
      this.nextIndex += skipped;
      due -= skipped;
    }
    for (let i = 0; i < due; i++) {
      const dueMs = this.schedule.dueAt(this.nextIndex);
      this.nextIndex++;
      this.onSlot(now - dueMs, i === 0 ? skipped : 0, dueMs);
      // The slot handler may have stopped us (e.g. a send error closed the session).
      if (!this.running) return;
    }
    this.arm();
  }
}
