/**
 * Live calls in this process: the counts the concurrency caps read, the list a drain walks on
 * SIGTERM, and `uuid → session` for anything that must reach a running call. A call is counted
 * from admission (still ringing) so two simultaneous INVITEs cannot both squeeze under a cap.
 *
 * Through the cluster (src/cluster) the caps count every node's calls: a slot is reserved
 * atomically before the call is created (reserve), and `hangup(uuid)` reaches a call whichever
 * node holds it. Alone (no shared cluster) all of it stays in this process.
 */
import { randomUUID } from 'node:crypto';
import { MemoryCluster } from '../cluster/memory.ts';
import type { CallCaps, CapRefusal, Cluster, Envelope } from '../cluster/types.ts';
import { systemClock } from '../util/clock.ts';
import { AppError } from '../util/errors.ts';
import type { CallSession, EndCause } from './call-session.ts';
import type { CallMetrics } from '../telemetry/call-metrics.ts';
import type { LiveFeed } from './live/live-feed.ts';

/** Retry-After (seconds) on a draining node's 503s (INVITE, OPTIONS): about when another node has taken its place. */
export const DRAIN_RETRY_AFTER_S = 30;

/** A live-call slot held for a call being set up; add() hands it to the call, which frees it on its end. */
export interface CallSlot {
  readonly leaseId: string;
  release(): Promise<void>;
}

/** Where a hang-up went: the call was here, was sent to the node holding it, or is not live anywhere. */
export type HangupResult = 'here' | 'sent' | 'not-found';

/** Causes a node may be asked to end a call with (anything else reads as a local hang-up). */
const REMOTE_CAUSES = new Set<string>(['local-hangup', 'shutdown', 'max-duration']);

export class CallRegistry {
  private readonly calls = new Map<string, CallSession>();
  private readonly byAccount = new Map<number, number>();
  private readonly byTrunk = new Map<string, number>();
  private draining = false;
  /** RTP datagrams the media lock dropped on calls no longer here. */
  private endedFiltered = 0;

  private readonly slots = new Map<string, CallSlot>();
  /** Writes to the cluster's directory still on their way (awaited by drain). */
  private readonly writes = new Set<Promise<void>>();
  private readonly unsubscribe: () => void;
  readonly cluster: Cluster;

  /**
   * `metrics`: live and ended calls on /metrics (src/telemetry/call-metrics.ts). `cluster`: the
   * service this node is part of (default: this process alone). `live`: watchers are told when a
   * call starts, is answered and ends (GET /user/calls/events).
   */
  constructor(
    private readonly metrics?: CallMetrics,
    cluster?: Cluster,
    private readonly live?: LiveFeed,
  ) {
    this.cluster = cluster ?? MemoryCluster.alone('local', systemClock);
    this.unsubscribe = this.cluster.bus.subscribe((m) => this.onMessage(m));
  }

  /**
   * Takes a live-call slot for a call of `accountId` on `trunkKey` when the caps allow it, counted
   * over every node of the service: atomic, so two INVITEs on two nodes cannot both take the last
   * slot. Returns which cap refused otherwise. The slot is the call's once add() has it; release
   * it yourself if the call is never added.
   */
  async reserve(accountId: number, trunkKey: string, caps: CallCaps): Promise<CallSlot | CapRefusal> {
    const leaseId = randomUUID();
    const verdict = await this.cluster.leases.acquire(leaseId, accountId, trunkKey, caps);
    if (verdict !== 'ok') return verdict;
    let released: Promise<void> | undefined;
    return { leaseId, release: () => (released ??= this.cluster.leases.release(leaseId)) };
  }

  /**
   * Ends a live call wherever it runs: here, or on the node holding it (over the cluster's bus).
   * `here` resolves once the call has ended; `sent` once the holder was told. Rejects with a
   * retryable 503 AppError when the cluster cannot be asked (Redis away) and the call is not here.
   */
  async hangup(uuid: string, cause: EndCause = 'local-hangup'): Promise<HangupResult> {
    const local = this.calls.get(uuid);
    if (local) {
      await local.close(cause);
      return 'here';
    }
    try {
      const node = await this.cluster.directory.locate(uuid);
      if (node === undefined || node === this.cluster.nodeId) return 'not-found';
      const heard = await this.cluster.bus.publish(node, { type: 'hangup', uuid, cause });
      return heard > 0 ? 'sent' : 'not-found';
    } catch {
      // Redis away: whether another node holds the call cannot be known; worth a retry.
      throw new AppError('The service cannot reach the node holding this call right now.', 503, 'CLUSTER_UNAVAILABLE', true);
    }
  }

  /** Stops listening to the cluster (the engine is closing). */
  close(): void {
    this.unsubscribe();
  }

  private onMessage(m: Envelope): void {
    if (m.type !== 'hangup' || typeof m.uuid !== 'string') return;
    const session = this.calls.get(m.uuid);
    if (!session) return;
    void session.close(REMOTE_CAUSES.has(m.cause) ? (m.cause as EndCause) : 'local-hangup');
  }

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

  /** Tracks a session until its `ended` event; `slot` (from reserve) is freed when it ends. */
  add(session: CallSession, slot?: CallSlot): void {
    if (this.calls.has(session.uuid)) {
      if (slot) this.track(slot.release());
      return;
    }
    this.calls.set(session.uuid, session);
    if (slot) this.slots.set(session.uuid, slot);
    if (this.cluster.shared) this.track(this.cluster.directory.place(session.uuid));
    bump(this.byAccount, session.accountId, 1);
    bump(this.byTrunk, session.trunkKey, 1);
    this.metrics?.track(session);
    if (this.live) {
      const live = this.live;
      const changed = () => live.publish({ kind: 'call', accountId: session.accountId, callId: session.recordId, uuid: session.uuid });
      changed();
      // After the answer is in the record: a watcher on another node reads it from the store.
      session.once('answered', () => void session.recordWritten.then(changed));
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
    const slot = this.slots.get(session.uuid);
    this.slots.delete(session.uuid);
    if (slot) this.track(slot.release());
    if (this.cluster.shared) this.track(this.cluster.directory.forget(session.uuid));
  }

  /** Keeps a handle on a cluster write so drain() can wait for it; its failure is the cluster's to log. */
  private track(work: Promise<void>): void {
    const w = work.catch(() => undefined);
    this.writes.add(w);
    void w.finally(() => this.writes.delete(w));
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
    await Promise.all([...this.writes]);
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
