/**
 * When the RTP I/O thread keeps dying (a native module that faults, a worker that cannot start),
 * starting thread after thread would cost every new call its media, and a thread start each. So
 * after LOSSES_BEFORE_FALLBACK losses within LOSS_WINDOW_MS, new sockets are opened on the
 * event-loop thread (dgram, as with SWITCHBOARD_RTP_THREAD=0) for a while: 10 s the first time,
 * twice as long each time a thread is lost again soon after (up to 5 minutes). Once a fallback is
 * RESET_AFTER_MS in the past, the next trouble starts from the beginning again. Calls already on
 * a thread that dies lose their media whatever this says; the policy only decides where the next
 * sockets go.
 *
 * A pure core: times are whatever clock the owner reads (ms).
 */
export const LOSSES_BEFORE_FALLBACK = 3;
export const LOSS_WINDOW_MS = 60_000;
export const FIRST_FALLBACK_MS = 10_000;
export const MAX_FALLBACK_MS = 300_000;
export const RESET_AFTER_MS = 600_000;

export class ThreadLossPolicy {
  private losses: number[] = [];
  private until = -Infinity;
  private lastFallbackAt = -Infinity;
  private nextFallbackMs = FIRST_FALLBACK_MS;

  /** A thread was lost at `now` (crashed, or never started). Returns how long new sockets now stay in-thread (0: they do not). */
  lost(now: number): number {
    // Soon after a fallback, one loss is enough for the next (twice as long); long after, start over.
    const again = now - this.lastFallbackAt < RESET_AFTER_MS;
    if (!again) this.nextFallbackMs = FIRST_FALLBACK_MS;
    this.losses = this.losses.filter((t) => now - t < LOSS_WINDOW_MS);
    this.losses.push(now);
    if (!again && this.losses.length < LOSSES_BEFORE_FALLBACK) return 0;
    const ms = this.nextFallbackMs;
    this.until = now + ms;
    this.lastFallbackAt = now;
    this.nextFallbackMs = Math.min(ms * 2, MAX_FALLBACK_MS);
    this.losses = [];
    return ms;
  }

  /** New sockets go on the event-loop thread at `now`. */
  fallingBack(now: number): boolean {
    return now < this.until;
  }
}
