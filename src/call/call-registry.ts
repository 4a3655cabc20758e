/**
 * Live calls in this process: the counts the concurrency caps read, the list a drain walks on
 * SIGTERM, and `uuid → session` for anything that must reach a running call. A call is counted
 * from admission (still ringing) so two simultaneous INVITEs cannot both squeeze under a cap.
 */
import type { CallSession, EndCause } from './call-session.ts';
import type { CallMetrics } from '../telemetry/call-metrics.ts';
import type { LiveFeed } from './live/live-feed.ts';

/** Retry-After (seconds) on a draining node's 503s (INVITE, OPTIONS): about when another node has taken its place. */
export const DRAIN_RETRY_AFTER_S = 30;

export class CallRegistry {
  private readonly calls = new Map<string, CallSession>();
  private readonly byAccount = new Map<number, number>();
  private readonly byTrunk = new Map<string, number>();
  private draining = false;
  /** RTP datagrams the media lock dropped on calls no longer here. */
  private endedFiltered = 0;

  /**
   * `metrics`: live and ended calls on /metrics (src/telemetry/call-metrics.ts); `live`: watchers
   * are told when a call starts, is answered and ends (GET /user/calls/events).
   */
  constructor(
    private readonly metrics?: CallMetrics,
    private readonly live?: LiveFeed,
  ) {}

  get size(): number {
    return this.calls.size;
  }

  /** New calls are refused from now on; live ones go on (drain() then ends them). */
  startDraining(): void {
    this.draining = true;
  }

  /** True once startDraining() or drain() was called: new calls are refused. */
  get isDraining(): boolean {
    return this.draining;
  }

  activeForAccount(accountId: number): number {
    return this.byAccount.get(accountId) ?? 0;
  }

  activeForTrunk(trunkKey: string): number {
    return this.byTrunk.get(trunkKey) ?? 0;
  }

  get(uuid: string): CallSession | undefined {
    return this.calls.get(uuid);
  }

  list(): CallSession[] {
    return [...this.calls.values()];
  }

  /** RTP datagrams the media lock dropped (source-filter.ts), on live and ended calls: for /metrics. */
  get rtpPacketsFiltered(): number {
    let n = this.endedFiltered;
    for (const session of this.calls.values()) n += session.media.stats().droppedByFilter;
    return n;
  }

  /** Tracks a session until its `ended` event. */
  add(session: CallSession): void {
    if (this.calls.has(session.uuid)) return;
    this.calls.set(session.uuid, session);
    bump(this.byAccount, session.accountId, 1);
    bump(this.byTrunk, session.trunkKey, 1);
    this.metrics?.track(session);
    if (this.live) {
      const live = this.live;
      const changed = () => live.publish({ kind: 'call', accountId: session.accountId, callId: session.recordId, uuid: session.uuid });
      changed();
      session.once('answered', changed);
      session.once('ended', changed);
    }
    session.once('ended', () => this.remove(session));
    // `ended` is emitted after the record is written; if it never listens (closed before add),
    // the done promise still frees the slot.
    void session.done.then(() => this.remove(session));
  }

  private remove(session: CallSession): void {
    if (this.calls.get(session.uuid) !== session) return;
    this.calls.delete(session.uuid);
    this.endedFiltered += session.media.stats().droppedByFilter;
    bump(this.byAccount, session.accountId, -1);
    bump(this.byTrunk, session.trunkKey, -1);
  }

  /**
   * Refuses new calls, then ends the live ones: calls get `graceMs` to finish on their own
   * (rolling deploys), after which they are hung up with `cause`. Resolves once their records
   * are written; returns the hung-up calls' BYE transactions (see CallSession.byeSettled), which
   * the caller may wait for, bounded.
   */
  async drain(graceMs = 0, cause: EndCause = 'shutdown', wait: (ms: number) => Promise<void> = sleep): Promise<{ byes: Promise<void> }> {
    this.draining = true;
    if (graceMs > 0 && this.calls.size > 0) {
      await Promise.race([Promise.all(this.list().map((c) => c.done)), wait(graceMs)]);
    }
    const hungUp = this.list();
    await Promise.all(hungUp.map((c) => c.close(cause)));
    return { byes: Promise.all(hungUp.map((c) => c.byeSettled)).then(() => undefined) };
  }
}

function bump<K>(map: Map<K, number>, key: K, by: number): void {
  const next = (map.get(key) ?? 0) + by;
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref();
  });
}
