/**
 * Event-loop delay as an overload signal (src/sip/server.ts sheds new INVITEs on it). The p99 is
 * read per whole second of real time, and the signal is the lower of the last two seconds, so a
 * single stall (a GC, one slow query) never counts as overload; only sustained lag does.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** What the server reads. Injectable so tests can drive shedding without loading a CPU. */
export interface LoopDelayMonitor {
  /** Sustained event-loop delay p99 in ms (0 until two seconds were seen). */
  readonly p99Ms: number;
  close(): void;
}

/** The part of Node's IntervalHistogram that LoopLag reads (nanoseconds). */
export interface DelayHistogram {
  readonly count: number;
  percentile(p: number): number;
  reset(): void;
}

/** Histogram resolution, subtracted from readings (Node counts the whole interval). */
export const LOOP_RESOLUTION_MS = 10;

/** The per-second bookkeeping, pure: `rotate(nowMs)` once a second with the histogram of that second. */
export class LoopLagWindow {
  private last = 0;
  private previous = 0;

  constructor(
    private readonly histogram: DelayHistogram,
    private lastRotationMs: number,
  ) {}

  get p99Ms(): number {
    return Math.min(this.last, this.previous);
  }

  rotate(nowMs: number): void {
    const h = this.histogram;
    // A loop blocked for the whole second leaves no sample at all: then the delay is how late
    // this rotation itself runs.
    const sampled = h.count > 0 ? h.percentile(99) / 1e6 - LOOP_RESOLUTION_MS : 0;
    const p99 = Math.max(sampled, nowMs - this.lastRotationMs - 1000);
    this.previous = this.last;
    this.last = Math.max(0, p99);
    this.lastRotationMs = nowMs;
    h.reset();
  }
}

/** The real monitor: Node's event-loop delay histogram, rotated by a one-second timer. */
export class LoopLag implements LoopDelayMonitor {
  private readonly histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  private readonly window = new LoopLagWindow(this.histogram, performance.now());
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.histogram.enable();
    this.timer = setInterval(() => this.window.rotate(performance.now()), 1000);
    this.timer.unref();
  }

  get p99Ms(): number {
    return this.window.p99Ms;
  }

  close(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
