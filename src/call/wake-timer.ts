/**
 * One clock timer for several pure cores: each reports when it next needs a `tick` (its
 * `wakeAtMs`, or none), and the timer is armed for the earliest. One timer rather than one per
 * core keeps the order of ticks fixed (all cores tick together) and nothing left armed at close.
 */
import { mediaScheduler } from '../media/media-clock.ts';
import type { SlotTicker } from '../media/rtp-session-ticker.ts';
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
 * Calls `onTick` every 20 ms while started, in the passes of the process's media clock
 * (../media/media-clock.ts) rather than on a timer of its own: the audio writers of both engines
 * pace themselves with it, and with a timer each, 100 talking calls woke the event loop for them
 * alone thousands of times a second, each wake-up costing more than the pump it ran. The writers
 * keep a few frames queued ahead on the media, so which phase of the frame they are pumped
 * in does not matter; the media's own send slots set when a frame leaves.
 */
export class FrameGridTicker {
  private readonly slots: SlotTicker;
  private stopped = false;

  constructor(
    clock: Clock,
    private readonly onTick: () => void,
    frameMs = 20,
  ) {
    // One slot after a stall, not a burst: a pump catches up on time by itself.
    this.slots = mediaScheduler(clock, frameMs).ticker(() => this.tick(), 1);
  }

  /** Ticks once now, then every frame until `stop()`. */
  start(): void {
    this.tick();
    if (!this.stopped) this.slots.start();
  }

  stop(): void {
    this.stopped = true;
    this.slots.stop();
  }

  private tick(): void {
    if (!this.stopped) this.onTick();
  }
}
