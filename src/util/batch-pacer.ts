/**
 * When a helper thread's next batch starts (the denoiser's in the engine; Silero VAD's on request). Every batch handed to a
 * worker has a fixed cost on both threads (the wake-up, the hand-over, a native run of the model
 * whatever its size), about as much as the work of a dozen calls' frames in it. The media clock
 * runs a pass every 5 ms (media-clock.ts), and each pass's frames used to go as a batch of their
 * own: at 100 calls about 185 batches a second to each worker, most of whose time was that fixed
 * cost. A pacer lets batches start at most once per `intervalMs`: what arrives in between joins
 * the next one, so under load each batch holds several passes' frames. A request made when the
 * interval has already passed since the last start runs at once (on the next turn), so a lone
 * call, or a replay whose batches are far apart in real time, waits for nothing; `intervalMs`
 * 0 never waits (the plain one-batch-per-turn behaviour).
 *
 * The price is latency on the frames that wait: at most `intervalMs` per stage, on the VAD's
 * probabilities and the denoised audio, not on anything the caller hears.
 */
import { performance } from 'node:perf_hooks';

export class BatchPacer {
  private lastStart = -Infinity;
  private scheduled = false;
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
  ) {
    if (!(intervalMs >= 0)) throw new RangeError(`batch interval must be at least 0 ms, got ${intervalMs}`);
  }

  /** There is work: start a batch on the next turn, or once `intervalMs` has passed since the last start. */
  request(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = this.lastStart + this.intervalMs - this.now();
    if (wait >= 1) setTimeout(this.fire, wait);
    else setImmediate(this.fire);
  }
}
