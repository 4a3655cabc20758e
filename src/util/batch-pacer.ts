/**
 * When a helper thread's next batch starts (the denoiser's in the engine; Silero VAD's on request). Every batch handed to a
 * worker has a fixed cost on both threads (the wake-up, the hand-over, a native run of the model
 * whatever its size), about as much as the work of a dozen calls' frames in it. The media clock
 * runs several passes per frame period (media-clock.ts; every 5 ms when this was measured, every
 * 10 ms now), and each pass's frames used to go as a batch of their own: at 100 calls about 185 batches a second to each worker, most of whose time was that fixed
 * cost. A pacer lets batches start at most once per `intervalMs`: what arrives in between joins
 * the next one, so under load each batch holds several passes' frames. A request made when the
 * interval has already passed since the last start runs at once (on the next turn), so a lone
 * call, or a replay whose batches are far apart in real time, waits for nothing; `intervalMs`
 * 0 never waits (the plain one-batch-per-turn behaviour).
 *
 * The price is latency on the frames that wait: at most `intervalMs` per stage, on the VAD's
 * probabilities and the denoised audio, not on anything the caller hears.
 *
 * Busy pacing (optional): while the owner's items come faster than `busy.enterPerSecond`
 * (smoothed over batches, reported by `took()`), batches start at most every `busy.intervalMs`
 * instead, until the rate falls under `busy.exitPerSecond`. A busy engine trades a little more of
 * that latency for fewer batches, whose fixed cost is most of what a helper thread's batch costs
 * (docs/bench-history.md, 2026-11-27 13:43 and 16:46); a quiet one keeps the short wait.
 */
import { performance } from 'node:perf_hooks';

/** BatchPacer's busy mode: a longer interval while the items come fast. */
export interface BusyPacing {
  /** Least time between two batch starts while busy, ms. */
  intervalMs: number;
  /** Items a second (smoothed) from which the pacer is busy… */
  enterPerSecond: number;
  /** …and under which it is not any more (below enterPerSecond, so it does not flap). */
  exitPerSecond: number;
}

/** Weight of each batch's rate in the smoothed one. */
const RATE_SMOOTHING = 0.25;

export class BatchPacer {
  private lastStart = -Infinity;
  private scheduled = false;
  /** Smoothed items a second, from took(). */
  private rate = 0;
  private lastTook: number | undefined;
  private busyNow = false;
  private readonly fire = (): void => {
    this.scheduled = false;
    this.lastStart = this.now();
    this.start();
  };

  constructor(
    /** Least time between two batch starts, ms. */
    readonly intervalMs: number,
    /** Starts one batch (which requests the next when more work is waiting). */
    private readonly start: () => void,
    private readonly now: () => number = () => performance.now(),
    private readonly busy?: BusyPacing,
  ) {
    if (!(intervalMs >= 0)) throw new RangeError(`batch interval must be at least 0 ms, got ${intervalMs}`);
    if (busy && !(busy.intervalMs >= intervalMs && busy.exitPerSecond >= 0 && busy.exitPerSecond < busy.enterPerSecond)) {
      throw new RangeError('busy pacing needs an interval at least the normal one and exitPerSecond in [0, enterPerSecond)');
    }
  }

  /** True while the busy interval applies. */
  get isBusy(): boolean {
    return this.busyNow;
  }

  /** The owner started a batch of `items`: updates the smoothed rate (busy pacing only). */
  took(items: number): void {
    if (!this.busy) return;
    const t = this.now();
    if (this.lastTook !== undefined) {
      // Items since the last batch, over the time since it (at least 1 ms).
      const perSecond = (items * 1000) / Math.max(1, t - this.lastTook);
      this.rate += RATE_SMOOTHING * (perSecond - this.rate);
      if (this.busyNow ? this.rate < this.busy.exitPerSecond : this.rate >= this.busy.enterPerSecond) this.busyNow = !this.busyNow;
    }
    this.lastTook = t;
  }

  /** There is work: start a batch on the next turn, or once the interval has passed since the last start. */
  request(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const interval = this.busyNow ? this.busy!.intervalMs : this.intervalMs;
    const wait = this.lastStart + interval - this.now();
    if (wait >= 1) setTimeout(this.fire, wait);
    else setImmediate(this.fire);
  }
}
