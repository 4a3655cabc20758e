/**
 * Lease decisions, pure: no store, no timer of its own (the adapter sleeps until `wakeAtMs`).
 *
 * A lease is a row naming a holder and an expiry (epoch ms). A node may take it when nobody holds
 * it, when it holds it already (a renewal), or when the holder's expiry has passed (the holder
 * died or lost the store). The holder renews every `renewEveryMs` (a third of the time to live by
 * default), so two renewals may fail before the lease can lapse.
 *
 * A holder counts itself as holding only until `guardMs` before the expiry it wrote, measured
 * from when it sent the request that wrote it: if its renewals stop getting through, it stops the
 * work before another node can take the lease over. Node clocks are compared (the expiry is
 * written by one node's clock and read by another's), so they must agree to well within `guardMs`
 * (NTP does).
 */

export interface LeaseTiming {
  ttlMs: number;
  /** How often a holder renews; default ttlMs / 3. */
  renewEveryMs?: number;
  /** How often a node not holding tries to take it; default renewEveryMs. */
  retryEveryMs?: number;
  /** Stop the work this long before the written expiry; default ttlMs / 10. */
  guardMs?: number;
}

export interface LeaseRecord {
  holder: string;
  expiresAtMs: number;
}

/** Whether `holder` may take (or renew) a lease found as `current` at `nowMs`. */
export function mayTake(current: LeaseRecord | undefined, holder: string, nowMs: number): boolean {
  return current === undefined || current.holder === holder || current.expiresAtMs <= nowMs;
}

/** Whether a row lease (a lead's, an outbox row's) is free to be claimed at `nowMs`. */
export function lapsed(expiresAtMs: number | null | undefined, nowMs: number): boolean {
  return expiresAtMs == null || expiresAtMs <= nowMs;
}

export function renewEveryMs(t: LeaseTiming): number {
  return Math.max(1, t.renewEveryMs ?? Math.floor(t.ttlMs / 3));
}

export type LeaseStep = 'acquire' | 'renew';
export type LeaseChange = 'gained' | 'lost' | null;

/** One named lease as one node sees it. */
export class LeaseCore {
  private heldUntilMs = 0;
  private nextAtMs: number;
  private inFlightSince: number | undefined;
  private readonly renewMs: number;
  private readonly retryMs: number;
  private readonly guardMs: number;

  constructor(private readonly timing: LeaseTiming, nowMs: number) {
    this.renewMs = renewEveryMs(timing);
    this.retryMs = Math.max(1, timing.retryEveryMs ?? this.renewMs);
    this.guardMs = Math.max(0, timing.guardMs ?? Math.floor(timing.ttlMs / 10));
    this.nextAtMs = nowMs;
  }

  /** True while this node may do the lease's work at `nowMs`. */
  holds(nowMs: number): boolean {
    return this.heldUntilMs > nowMs;
  }

  /** When the adapter should call `due` (or `tick`) next. */
  get wakeAtMs(): number {
    return this.heldUntilMs > 0 ? Math.min(this.nextAtMs, this.heldUntilMs) : this.nextAtMs;
  }

  /** The request to send now, if any; the answer goes to granted / refused / failed. */
  due(nowMs: number): LeaseStep | null {
    if (this.inFlightSince !== undefined || nowMs < this.nextAtMs) return null;
    this.inFlightSince = nowMs;
    return this.heldUntilMs > 0 ? 'renew' : 'acquire';
  }

  /** The store wrote us as the holder (the request left at the time `due` was called). */
  granted(nowMs: number): LeaseChange {
    const sentAt = this.inFlightSince ?? nowMs;
    this.inFlightSince = undefined;
    const wasHeld = this.heldUntilMs > 0;
    this.heldUntilMs = sentAt + this.timing.ttlMs - this.guardMs;
    this.nextAtMs = sentAt + this.renewMs;
    if (this.heldUntilMs <= nowMs) return this.drop(nowMs, wasHeld);
    return wasHeld ? null : 'gained';
  }

  /** Someone else holds it. */
  refused(nowMs: number): LeaseChange {
    this.inFlightSince = undefined;
    return this.drop(nowMs, this.heldUntilMs > 0);
  }

  /** The store could not be asked: keep what we had while it lasts, ask again soon. */
  failed(nowMs: number): LeaseChange {
    this.inFlightSince = undefined;
    this.nextAtMs = nowMs + Math.min(this.retryMs, this.renewMs);
    return this.tick(nowMs);
  }

  /** Time passing: a holding that ran out without renewal is lost. */
  tick(nowMs: number): LeaseChange {
    if (this.heldUntilMs > 0 && this.heldUntilMs <= nowMs) return this.drop(nowMs, true);
    return null;
  }

  /** We gave it up (release): not held, and not taken again before `retryEveryMs`. */
  released(nowMs: number): LeaseChange {
    return this.drop(nowMs, this.heldUntilMs > 0);
  }

  private drop(nowMs: number, wasHeld: boolean): LeaseChange {
    this.heldUntilMs = 0;
    this.nextAtMs = nowMs + this.retryMs;
    return wasHeld ? 'lost' : null;
  }
}
