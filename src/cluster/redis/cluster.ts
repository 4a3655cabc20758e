/**
 * The cluster in Redis: what several engine nodes share (docs/REDIS.md). Every shared decision is
 * one atomic script; when Redis does not answer (down, or slower than the command timeout) the
 * decision is taken on this node's memory instead, so the limits hold per node for the outage and
 * nothing waits or crashes; once Redis is back this node's slots are written to it again.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { decide, MemoryRateLimiter, type RateDecision, type RateLimiter, type RateWindow } from '../../api/rate-limit.ts';
import type { Clock } from '../../util/clock.ts';
import type { BanStore, SharedBuckets, CallCaps, CallDirectory, CallLeases, CapRefusal, Cluster, ClusterBus, Envelope } from '../types.ts';
import { connectRedis } from './connection.ts';
import { ACQUIRE, BEAT, COUNTS, LEAVE, RELEASE, SLIDING_WINDOW, TOKEN_BUCKETS } from './scripts.ts';

export interface RedisClusterOptions {
  url: string;
  nodeId: string;
  /** A node that has not beaten for this long no longer counts (its call slots lapse). */
  leaseMs: number;
  logger: Logger;
  /** Key and channel prefix (tests give each file its own); default `switchboard:`. */
  prefix?: string;
  /** How often this node beats (default a third of leaseMs). */
  beatMs?: number;
  clock: Clock;
}

/** Longest a call is expected to live: the directory entry of a call never forgotten goes then. */
const CALL_ENTRY_MS = 24 * 3_600_000;
/** A bus message larger than this is not read (a live call's transcript line is the largest we send). */
export const MAX_MESSAGE_BYTES = 64 * 1024;

type Script = 'window' | 'acquire' | 'release' | 'counts' | 'beat' | 'leave' | 'buckets';
const SCRIPTS: Record<Script, string> = { window: SLIDING_WINDOW, acquire: ACQUIRE, release: RELEASE, counts: COUNTS, beat: BEAT, leave: LEAVE, buckets: TOKEN_BUCKETS };
/** Scripts that name their keys (KEYS) rather than reaching them through the nodes set. */
const KEYED: Partial<Record<Script, number>> = { window: 1 };

export class RedisCluster implements Cluster {
  readonly shared = true;
  readonly nodeId: string;
  readonly leases: CallLeases;
  readonly directory: CallDirectory;
  readonly bus: ClusterBus;
  readonly bans: BanStore;
  readonly buckets: SharedBuckets;
  private readonly prefix: string;
  private readonly handlers = new Set<(m: Envelope) => void>();
  /** Leases this node holds (or is taking): what a resync writes, what counts while Redis is away. */
  private readonly held = new Map<string, { accountId: number; trunkKey: string }>();
  /** A write Redis missed: the next beat rewrites this node's slots. */
  private dirty = false;
  private beatTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private lastFallbackLog = -Infinity;
  private readonly local = new Map<string, MemoryRateLimiter>();
  private seq = 0;

  private constructor(
    private readonly redis: Redis,
    private readonly sub: Redis,
    private readonly o: RedisClusterOptions,
  ) {
    this.nodeId = o.nodeId;
    this.prefix = o.prefix ?? 'switchboard:';
    this.leases = {
      acquire: (leaseId, accountId, trunkKey, caps) => this.acquire(leaseId, accountId, trunkKey, caps),
      release: (leaseId) => this.release(leaseId),
      counts: (accountId, trunkKey) => this.counts(accountId, trunkKey),
    };
    this.directory = {
      place: (uuid) => this.write(() => this.redis.set(this.key(`call:${uuid}`), this.nodeId, 'PX', CALL_ENTRY_MS)),
      forget: (uuid) => this.write(() => this.redis.del(this.key(`call:${uuid}`))),
      locate: (uuid) => this.locate(uuid),
    };
    this.bus = {
      publish: (to, message) => this.redis.publish(this.channel(to), JSON.stringify({ ...message, from: this.nodeId })),
      subscribe: (handler) => {
        this.handlers.add(handler);
        return () => this.handlers.delete(handler);
      },
    };
    this.buckets = {
      take: async (buckets, nowMs) => {
        const keys = buckets.map((b) => this.key(`cps:${b.name}`));
        const args = [nowMs, ...buckets.flatMap((b) => [b.rate.perSec, b.rate.burst])];
        const [which, waitMs] = (await this.run('buckets', [String(keys.length), ...keys], args)) as [number, number];
        return which === 0 ? undefined : { index: which - 1, waitMs };
      },
    };
    this.bans = {
      put: (ip, banMs) => this.write(() => this.redis.set(this.key(`ban:${ip}`), '1', 'PX', Math.max(1, Math.round(banMs)))),
      list: (max) => this.listBans(max),
    };
  }

  /** Connects (or throws RedisUnavailableError), subscribes, takes this node's place with a first beat. */
  static async connect(o: RedisClusterOptions): Promise<RedisCluster> {
    const logger = o.logger.child({ part: 'cluster', node: o.nodeId });
    const redis = await connectRedis(o.url, logger, `switchboard:${o.nodeId}`);
    let sub: Redis | undefined;
    try {
      sub = await connectRedis(o.url, logger, `switchboard:${o.nodeId}:bus`);
      const cluster = new RedisCluster(redis, sub, { ...o, logger });
      await cluster.start();
      return cluster;
    } catch (err) {
      redis.disconnect();
      sub?.disconnect();
      throw err;
    }
  }

  private async start(): Promise<void> {
    for (const [name, lua] of Object.entries(SCRIPTS) as Array<[Script, string]>) {
      // The bucket script takes one or two keys: it is called with their number first.
      if (name === 'buckets') this.redis.defineCommand(`sb_${name}`, { lua });
      else this.redis.defineCommand(`sb_${name}`, { numberOfKeys: KEYED[name] ?? 0, lua });
    }
    this.sub.on('message', (_channel: string, text: string) => this.deliver(text));
    await this.sub.subscribe(this.channel('all'), this.channel(this.nodeId));
    // A node starting under an id holds nothing yet: whatever an earlier run left is dropped.
    await this.beat(true);
    // Redis back after an outage: this node's slots as it holds them now (they may have changed).
    this.redis.on('ready', () => {
      this.dirty = true;
      void this.beat(true).catch(() => undefined);
    });
    const every = this.o.beatMs ?? Math.max(200, Math.floor(this.o.leaseMs / 3));
    this.beatTimer = setInterval(() => void this.beat(this.dirty).catch(() => undefined), every);
    this.beatTimer.unref();
  }

  rateLimiter(name: string, windows: readonly RateWindow[]): RateLimiter {
    const longest = Math.max(...windows.map((w) => w.windowMs));
    let fallback = this.local.get(name);
    if (!fallback) this.local.set(name, (fallback = new MemoryRateLimiter(windows)));
    const local = fallback;
    return {
      hit: async (key: string, nowMs: number): Promise<RateDecision> => {
        // The key is hashed: an API key never lies in Redis in the clear.
        const redisKey = this.key(`rate:${name}:${createHash('sha256').update(key).digest('base64url').slice(0, 32)}`);
        const member = `${nowMs}:${this.nodeId}:${++this.seq}`;
        const args = [nowMs, longest, member, windows.length, ...windows.flatMap((w) => [w.limit, w.windowMs])];
        try {
          const [allowed, flat] = (await this.run('window', [redisKey], args)) as [number, string[]];
          const times: number[] = [];
          for (let i = 1; i < flat.length; i += 2) times.push(Number(flat[i]));
          const d = decide(windows, times, nowMs);
          // The script's verdict is the one recorded; decide() agrees unless the clocks disagree.
          return allowed === 1 ? d : { ...d, allowed: false, remaining: 0, retryAfterSec: Math.max(1, d.retryAfterSec) };
        } catch (err) {
          this.fellBack('rate limit', err);
          return local.hit(key, nowMs);
        }
      },
    };
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    try {
      return (await this.redis.set(this.key(`claim:${key}`), this.nodeId, 'PX', Math.max(1, Math.round(ttlMs)), 'NX')) === 'OK';
    } catch (err) {
      // Nobody can be asked: this node does the work (twice done beats never done for these).
      this.fellBack('claim', err);
      return true;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.beatTimer) clearInterval(this.beatTimer);
    // Leaving cleanly: this node's slots free at once rather than after the lease.
    await this.run('leave', [], [this.prefix, this.nodeId]).catch(() => undefined);
    this.handlers.clear();
    await Promise.allSettled([this.sub.quit(), this.redis.quit()]);
    this.sub.disconnect();
    this.redis.disconnect();
  }

  /**
   * One beat now (tests; the timer beats on its own). It carries this node's slots: Redis writes
   * them when our alive key had lapsed (the others dropped them), or when `force`d or a write was
   * missed.
   */
  async beat(force = false): Promise<void> {
    if (this.closed) return;
    const mode = force || this.dirty ? 'force' : '';
    const triples = [...this.held].flatMap(([id, l]) => [id, String(l.accountId), l.trunkKey]);
    await this.run('beat', [], [this.prefix, this.nodeId, this.o.leaseMs, mode, ...triples]);
    if (mode === 'force') this.dirty = false;
  }

  private async acquire(leaseId: string, accountId: number, trunkKey: string, caps: CallCaps): Promise<'ok' | CapRefusal> {
    // Held before asking, so a resync running meanwhile writes it too (ACQUIRE then takes nothing more).
    this.held.set(leaseId, { accountId, trunkKey });
    let verdict: 'ok' | CapRefusal;
    try {
      verdict = (await this.run('acquire', [], [this.prefix, this.nodeId, leaseId, accountId, trunkKey, caps.maxPerAccount, caps.maxPerTrunk])) as 'ok' | CapRefusal;
    } catch (err) {
      this.fellBack('call caps', err);
      this.dirty = true;
      verdict = this.localVerdict(leaseId, accountId, trunkKey, caps);
    }
    if (verdict !== 'ok') {
      this.held.delete(leaseId);
      // A resync may have written it meanwhile.
      await this.run('release', [], [this.prefix, this.nodeId, leaseId]).catch(() => (this.dirty = true));
    }
    return verdict;
  }

  private async release(leaseId: string): Promise<void> {
    if (!this.held.delete(leaseId)) return;
    await this.write(() => this.run('release', [], [this.prefix, this.nodeId, leaseId]));
  }

  private async counts(accountId: number, trunkKey: string): Promise<{ account: number; trunk: number }> {
    try {
      const [account, trunk] = (await this.run('counts', [], [this.prefix, this.nodeId, accountId, trunkKey])) as [number, number];
      return { account, trunk };
    } catch (err) {
      this.fellBack('call caps', err);
      return this.localCounts(accountId, trunkKey);
    }
  }

  /** While Redis is away: this node's own slots against the caps (other leases than `leaseId`). */
  private localVerdict(leaseId: string, accountId: number, trunkKey: string, caps: CallCaps): 'ok' | CapRefusal {
    const c = this.localCounts(accountId, trunkKey, leaseId);
    if (c.account >= caps.maxPerAccount) return 'account';
    if (c.trunk >= caps.maxPerTrunk) return 'trunk';
    return 'ok';
  }

  private localCounts(accountId: number, trunkKey: string, except?: string): { account: number; trunk: number } {
    let account = 0;
    let trunk = 0;
    for (const [id, l] of this.held) {
      if (id === except) continue;
      if (l.accountId === accountId) account++;
      if (l.trunkKey === trunkKey) trunk++;
    }
    return { account, trunk };
  }

  private async locate(uuid: string): Promise<string | undefined> {
    const node = await this.redis.get(this.key(`call:${uuid}`));
    if (node === null) return undefined;
    if (node === this.nodeId) return node;
    return (await this.redis.exists(this.key(`node:${node}:alive`))) === 1 ? node : undefined;
  }

  private async listBans(max: number): Promise<Array<{ ip: string; leftMs: number }>> {
    const out: Array<{ ip: string; leftMs: number }> = [];
    const match = this.key('ban:*');
    let cursor = '0';
    // Bounded: at most `max` bans and 100 scan rounds, whatever the keyspace holds.
    for (let round = 0; round < 100 && out.length < max; round++) {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      for (const k of keys) {
        if (out.length >= max) break;
        const left = await this.redis.pttl(k);
        if (left > 0) out.push({ ip: k.slice(this.key('ban:').length), leftMs: left });
      }
      cursor = next;
      if (cursor === '0') break;
    }
    return out;
  }

  private deliver(text: string): void {
    if (text.length > MAX_MESSAGE_BYTES) return;
    let message: Envelope;
    try {
      message = JSON.parse(text) as Envelope;
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null || typeof message.type !== 'string' || typeof message.from !== 'string') return;
    for (const h of this.handlers) {
      try {
        h(message);
      } catch (err) {
        this.o.logger.error({ err: (err as Error).message, type: message.type }, 'cluster message handler failed');
      }
    }
  }

  /** A write whose loss a later resync repairs: never thrown at the caller. */
  private async write(op: () => Promise<unknown>): Promise<void> {
    try {
      await op();
    } catch (err) {
      this.dirty = true;
      this.fellBack('shared state', err);
    }
  }

  private run(script: Script, keys: string[], args: Array<string | number>): Promise<unknown> {
    const call = (this.redis as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>)[`sb_${script}`]!;
    return call.call(this.redis, ...keys, ...args);
  }

  private fellBack(what: string, err: unknown): void {
    const now = this.o.clock.monotonic();
    if (now - this.lastFallbackLog < 10_000) return;
    this.lastFallbackLog = now;
    this.o.logger.warn({ what, err: (err as Error).message }, 'Redis did not answer: decided on this node alone (logged at most every 10 s)');
  }

  private key(rest: string): string {
    return `${this.prefix}${rest}`;
  }

  private channel(to: string): string {
    return to === 'all' ? `${this.prefix}bus:all` : `${this.prefix}bus:node:${to}`;
  }
}
