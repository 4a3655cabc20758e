/**
 * One clock timer for several pure cores: each reports when it next needs a `tick` (its
 * `wakeAtMs`, or none), and the timer is armed for the earliest. One timer rather than one per
 * core keeps the order of ticks fixed (all cores tick together) and nothing left armed at close.
 */
import type { Clock, Timer } from '../util/clock.ts';

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

/**
 * Calls `onTick` on every 20 ms boundary of the call clock. The next boundary is computed from
 * the clock each time, never by adding 20 ms to the last one, so lateness never accumulates.
 * The audio writers of both engines pace themselves with it.
 */
export class FrameGridTicker {
  private timer: Timer | undefined;
  private stopped = false;
  /** Made once: armed every frame. */
  private readonly next = (): void => this.tick();

  constructor(
    private readonly clock: Clock,
    private readonly now: () => number,
    private readonly onTick: () => void,
    private readonly frameMs = 20,
  ) {}

  /** Ticks once now, then on each boundary until `stop()`. */
  start(): void {
    this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private tick(): void {
    if (this.stopped) return;
    this.onTick();
    if (this.stopped) return;
    const now = this.now();
    const boundary = (Math.floor(now / this.frameMs) + 1) * this.frameMs;
    this.timer = this.clock.setTimeout(this.next, boundary - now);
  }
}
