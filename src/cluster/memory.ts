/**
 * The cluster in this process's memory. Alone (the default, no SWITCHBOARD_REDIS_URL) it is one
 * node and behaves as the engine always did. Several MemoryClusters on one MemoryHub are several
 * nodes in one process on one clock: the tests of the shared rules (leases lapsing, bans
 * spreading, commands reaching the node that holds a call) run on it with a manual clock.
 */
import { MemoryRateLimiter, type RateLimiter, type RateWindow } from '../api/rate-limit.ts';
import type { Clock } from '../util/clock.ts';
import { LeaseBook } from './lease-book.ts';
import type { BanStore, CallDirectory, CallLeases, Cluster, ClusterBus, ClusterMessage, Envelope } from './types.ts';

export class MemoryHub {
  readonly book: LeaseBook;
  readonly limiters = new Map<string, MemoryRateLimiter>();
  readonly calls = new Map<string, string>();
  readonly subscribers = new Map<string, Set<(m: Envelope) => void>>();
  readonly bans = new Map<string, number>();
  readonly claims = new Map<string, number>();

  constructor(
    readonly clock: Clock,
    readonly leaseMs = 10_000,
  ) {
    this.book = new LeaseBook(leaseMs);
  }
}

export class MemoryCluster implements Cluster {
  readonly shared: boolean;
  readonly leases: CallLeases;
  readonly directory: CallDirectory;
  readonly bus: ClusterBus;
  readonly bans: BanStore;

  /** `hub`: shared with other nodes in this process (tests); `alone()` for a node that is the whole service. */
  constructor(
    readonly nodeId: string,
    private readonly hub: MemoryHub,
    shared = true,
  ) {
    this.shared = shared;
    const { book, clock } = hub;
    const self = nodeId;
    // A node never takes itself for dead: alone it is the whole service.
    const now = () => clock.monotonic();
    this.leases = {
      acquire: async (leaseId, accountId, trunkKey, caps) => book.acquire(self, leaseId, accountId, trunkKey, caps, now()),
      release: async (leaseId) => book.release(self, leaseId),
      counts: async (accountId, trunkKey) => book.counts(accountId, trunkKey, now(), self),
    };
    this.directory = {
      place: async (uuid) => void hub.calls.set(uuid, self),
      forget: async (uuid) => {
        if (hub.calls.get(uuid) === self) hub.calls.delete(uuid);
      },
      locate: async (uuid) => {
        const node = hub.calls.get(uuid);
        return node !== undefined && (node === self || book.isAlive(node, now())) ? node : undefined;
      },
    };
    this.bus = {
      publish: async (to: string, message: ClusterMessage) => {
        const targets = to === 'all' ? [...hub.subscribers.values()] : [hub.subscribers.get(to) ?? new Set()];
        let n = 0;
        for (const set of targets) {
          if (set.size > 0) n++;
          for (const h of set) h({ ...message, from: self });
        }
        return n;
      },
      subscribe: (handler) => {
        let set = hub.subscribers.get(self);
        if (!set) hub.subscribers.set(self, (set = new Set()));
        set.add(handler);
        return () => set.delete(handler);
      },
    };
    this.bans = {
      put: async (ip, banMs) => void hub.bans.set(ip, now() + banMs),
      list: async (max) => {
        const out: Array<{ ip: string; leftMs: number }> = [];
        for (const [ip, until] of hub.bans) {
          if (until <= now()) hub.bans.delete(ip);
          else if (out.length < max) out.push({ ip, leftMs: until - now() });
        }
        return out;
      },
    };
  }

  /** A node alone: today's single-process engine. */
  static alone(nodeId: string, clock: Clock): MemoryCluster {
    return new MemoryCluster(nodeId, new MemoryHub(clock), false);
  }

  /** This node is alive now (a Redis node beats on a timer; an in-memory one when told). */
  beat(): void {
    this.hub.book.beat(this.nodeId, this.hub.clock.monotonic());
  }

  rateLimiter(name: string, windows: readonly RateWindow[]): RateLimiter {
    let limiter = this.hub.limiters.get(name);
    if (!limiter) this.hub.limiters.set(name, (limiter = new MemoryRateLimiter(windows)));
    return limiter;
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const now = this.hub.clock.monotonic();
    const until = this.hub.claims.get(key);
    if (until !== undefined && until > now) return false;
    this.hub.claims.set(key, now + ttlMs);
    if (this.hub.claims.size > 10_000) for (const [k, u] of this.hub.claims) if (u <= now) this.hub.claims.delete(k);
    return true;
  }

  async close(): Promise<void> {
    this.hub.subscribers.delete(this.nodeId);
  }
}
