/**
 * What several engine nodes share when they run as one service: rate limits, live-call slots with
 * leases, which node holds which call, commands between nodes, and once-only claims. One
 * interface, two implementations: in this process's memory (one node: today's behaviour) and in
 * Redis (src/cluster/redis/). Callers never ask which one they hold.
 */
import type { RateLimiter, RateWindow } from '../api/rate-limit.ts';
import type { LiveEvent } from '../call/live/live-feed.ts';

export type CapRefusal = 'account' | 'trunk';

export interface CallCaps {
  maxPerAccount: number;
  maxPerTrunk: number;
}

/**
 * Live-call slots per account and per trunk, across nodes. A slot is a lease held by this node:
 * when the node stops beating (it died), its slots stop counting within the lease time.
 */
export interface CallLeases {
  /** Takes a slot when both caps allow, atomically across nodes; else which cap refused. */
  acquire(leaseId: string, accountId: number, trunkKey: string, caps: CallCaps): Promise<'ok' | CapRefusal>;
  release(leaseId: string): Promise<void>;
  /** Slots held now by live nodes. */
  counts(accountId: number, trunkKey: string): Promise<{ account: number; trunk: number }>;
}

/** Which node holds a live call. */
export interface CallDirectory {
  place(uuid: string): Promise<void>;
  forget(uuid: string): Promise<void>;
  /** The node holding the call, when a live node does. */
  locate(uuid: string): Promise<string | undefined>;
}

export type ClusterMessage =
  | { type: 'hangup'; uuid: string; cause: string }
  | { type: 'ban'; ip: string; banMs: number; why: string }
  | { type: 'campaign-stop'; campaignId: number }
  | { type: 'assistant-updated'; assistantId: number }
  /** A live call's event (src/call/live), for watchers connected to other nodes. */
  | { type: 'live'; event: LiveEvent };

/** Every message carries its sender, so a node can skip its own broadcasts. */
export type Envelope = ClusterMessage & { from: string };

/** Commands between nodes: to one node, or to all of them (the sender included). */
export interface ClusterBus {
  /** How many nodes got it (0: nobody listens under that id). */
  publish(to: string | 'all', message: ClusterMessage): Promise<number>;
  subscribe(handler: (message: Envelope) => void): () => void;
}

/** Sources banned service-wide, with what is left of each ban. */
export interface BanStore {
  /** Records a ban for `banMs` (also broadcast on the bus by the caller's node). */
  put(ip: string, banMs: number): Promise<void>;
  /** The bans in force, with milliseconds left (bounded to `max`). */
  list(max: number): Promise<Array<{ ip: string; leftMs: number }>>;
}

/** A new-call token bucket: sustained calls per second, and how many at once from full. */
export interface BucketRate {
  perSec: number;
  burst: number;
}

/**
 * New-call rates across nodes: one token from each named bucket, or none. Returns undefined when
 * taken, else the bucket (its index in `buckets`) that refused and ms until it has a token.
 */
export interface SharedBuckets {
  take(buckets: ReadonlyArray<{ name: string; rate: BucketRate }>, nowMs: number): Promise<{ index: number; waitMs: number } | undefined>;
}

export interface Cluster {
  readonly nodeId: string;
  /** True when state is shared with other nodes (Redis); false: this process only. */
  readonly shared: boolean;
  /** A sliding-window limiter; the same `name` on every node counts together. */
  rateLimiter(name: string, windows: readonly RateWindow[]): RateLimiter;
  readonly leases: CallLeases;
  readonly directory: CallDirectory;
  readonly bus: ClusterBus;
  readonly bans: BanStore;
  /** Absent: new-call rates are this node's own (memory); present: the service's. */
  readonly buckets?: SharedBuckets;
  /**
   * True for exactly one caller per `key` within `ttlMs` across the service: the node that gets it
   * does the work (ends an inactive conversation, say); the others leave it.
   */
  claim(key: string, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}
