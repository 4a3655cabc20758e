/**
 * A repeating slot timer on absolute deadlines (start + n × intervalMs), for the session's two
 * media loops. One clock timer at a time, re-armed per slot, so a drifting setInterval never
 * creeps into the audio, and stop() leaves nothing behind.
 */
import type { Clock, Timer } from '../util/clock.ts';
import { PacingSchedule } from './pacer.ts';

export interface TickerStats {
  /** Slots given up after an event-loop stall longer than `maxCatchUp` slots. */
  skippedSlots: number;
  maxLateMs: number;
}

export class DeadlineTicker {
  private schedule: PacingSchedule;
  private nextIndex = 0;
  private timer: Timer | undefined;
  private running = false;
  readonly stats: TickerStats = { skippedSlots: 0, maxLateMs: 0 };

  /**
   * @param onSlot called once per slot with the slot's lateness; several times in one turn when
   *   the loop catches up after a short stall.
   * @param maxCatchUp slots served in one burst after a stall; older ones are skipped.
   */
  constructor(
    private readonly clock: Clock,
    readonly intervalMs: number,
    private readonly onSlot: (lateMs: number) => void,
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
    if (due > this.maxCatchUp) {
      const skip = due - this.maxCatchUp;
      this.nextIndex += skip;
      this.stats.skippedSlots += skip;
      due = this.maxCatchUp;
    }
    for (let i = 0; i < due; i++) {
      const lateMs = now - this.schedule.dueAt(this.nextIndex);
      if (lateMs > this.stats.maxLateMs) this.stats.maxLateMs = lateMs;
      this.nextIndex++;
      this.onSlot(lateMs);
      // The slot handler may have stopped us (e.g. a send error closed the session).
      if (!this.running) return;
    }
    this.arm();
  }
}
