/**
 * One clock timer for several pure cores: each reports when it next needs a `tick` (its
 * `wakeAtMs`, or none), and the timer is armed for the earliest. One timer rather than one per
 * core keeps the order of ticks fixed (all cores tick together) and nothing left armed at close.
 */
import type { Clock, Timer } from '../../util/clock.ts';

export class WakeTimer<K extends string> {
  private readonly wakes = new Map<K, number>();
  private timer: Timer | undefined;
  private armedAtMs: number | undefined;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    /** ms on the same scale as the wake times. */
    private readonly now: () => number,
    private readonly onWake: () => void,
  ) {}

  set(key: K, atMs: number | undefined): void {
    if (atMs === undefined) this.wakes.delete(key);
    else this.wakes.set(key, atMs);
    const next = this.wakes.size > 0 ? Math.min(...this.wakes.values()) : undefined;
    if (next === this.armedAtMs || this.closed) return;
    this.timer?.cancel();
    this.armedAtMs = next;
    if (next === undefined) return;
    this.timer = this.clock.setTimeout(() => {
      this.armedAtMs = undefined;
      this.onWake();
    }, Math.max(0, next - this.now()));
  }

  close(): void {
    this.closed = true;
    this.timer?.cancel();
  }
}
