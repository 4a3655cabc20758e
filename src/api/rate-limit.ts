import type { FastifyReply } from 'fastify';

/**
 * Sliding-window rate limits. Every window must admit a request for it to pass; a refused request
 * is not counted. Behind an interface so a Redis-backed limiter can serve several nodes.
 */
export interface RateWindow {
  limit: number;
  windowMs: number;
}

export interface RateDecision {
  allowed: boolean;
  /** The window closest to refusing: its size, what is left, and when it frees a slot (ms). */
  limit: number;
  remaining: number;
  resetAtMs: number;
  /** Seconds until the request would be admitted (only when refused). */
  retryAfterSec: number;
}

/** In memory the answer is at once; a shared limiter (src/cluster) answers after a round trip. */
export interface RateLimiter {
  hit(key: string, nowMs: number): RateDecision | Promise<RateDecision>;
}

/**
 * The decision for one request at `nowMs` given the admitted times of its key within the longest
 * window (ascending, this request not among them): every window must admit it. Shared by the
 * memory limiter and the Redis one, so both answer alike to the header.
 */
export function decide(windows: readonly RateWindow[], times: readonly number[], nowMs: number): RateDecision {
  let allowed = true;
  let retryAtMs = nowMs;
  let tightest: { limit: number; remaining: number; resetAtMs: number } | undefined;
  for (const w of windows) {
    const inWindow = times.filter((t) => t > nowMs - w.windowMs);
    const oldest = inWindow[0];
    if (inWindow.length >= w.limit) {
      allowed = false;
      // The slot frees when the request `limit` back from the newest leaves the window.
      const freeing = inWindow[inWindow.length - w.limit]!;
      retryAtMs = Math.max(retryAtMs, freeing + w.windowMs);
    }
    const remaining = Math.max(0, w.limit - inWindow.length - 1);
    const resetAtMs = (oldest ?? nowMs) + w.windowMs;
    if (!tightest || remaining < tightest.remaining) tightest = { limit: w.limit, remaining, resetAtMs };
  }
  const t = tightest!;
  return {
    allowed,
    limit: t.limit,
    remaining: allowed ? t.remaining : 0,
    resetAtMs: allowed ? t.resetAtMs : retryAtMs,
    retryAfterSec: allowed ? 0 : Math.max(1, Math.ceil((retryAtMs - nowMs) / 1000)),
  };
}

/** Keys one limiter remembers at most; past it the least recently seen key is forgotten. */
export const DEFAULT_MAX_KEYS = 50_000;

/**
 * In memory, on the caller's clock (no timer of its own). Memory is bounded: a key with no hit
 * in the longest window is swept (a sweep runs at most once per longest window, on a hit), and
 * past `maxKeys` the least recently seen key goes, so a flood of distinct client addresses
 * cannot grow the map without end. Each key holds at most the largest window's limit of times.
 */
export class MemoryRateLimiter implements RateLimiter {
  /** In order of the last hit: the first key is the least recently seen. */
  private readonly hits = new Map<string, number[]>();
  private readonly longestMs: number;
  private nextSweepAtMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly windows: readonly RateWindow[],
    private readonly maxKeys = DEFAULT_MAX_KEYS,
  ) {
    if (windows.length === 0) throw new Error('at least one window');
    if (!(maxKeys >= 1)) throw new Error('maxKeys must be at least 1');
    this.longestMs = Math.max(...windows.map((w) => w.windowMs));
  }

  /** Keys remembered now. */
  get size(): number {
    return this.hits.size;
  }

  hit(key: string, nowMs: number): RateDecision {
    if (nowMs >= this.nextSweepAtMs) {
      this.sweep(nowMs);
      this.nextSweepAtMs = nowMs + this.longestMs;
    }
    const times = (this.hits.get(key) ?? []).filter((t) => t > nowMs - this.longestMs);
    const decision = decide(this.windows, times, nowMs);
    if (decision.allowed) times.push(nowMs);
    // Re-inserted at the back: the map stays in order of the last hit, refused ones included,
    // so a client that keeps knocking is the last to be forgotten.
    this.hits.delete(key);
    if (times.length > 0) {
      this.hits.set(key, times);
      if (this.hits.size > this.maxKeys) this.hits.delete(this.hits.keys().next().value!);
    }
    return decision;
  }

  /** Drops keys with no hit in the longest window (hit() does this itself once per window). */
  sweep(nowMs: number): void {
    for (const [key, times] of this.hits) {
      if ((times.at(-1) ?? 0) <= nowMs - this.longestMs) this.hits.delete(key);
    }
  }
}

/** The spec's rate-limit headers for a decision, and Retry-After when it refuses. */
export function setRateHeaders(reply: FastifyReply, decision: RateDecision): void {
  void reply.header('X-RateLimit-Limit', decision.limit);
  void reply.header('X-RateLimit-Remaining', decision.remaining);
  void reply.header('X-RateLimit-Reset', Math.ceil(decision.resetAtMs / 1000));
  if (!decision.allowed) void reply.header('Retry-After', decision.retryAfterSec);
}

/** The spec's general API limits: 100 per minute and 20 per 10 seconds, per key. */
export const API_WINDOWS: readonly RateWindow[] = [
  { limit: 100, windowMs: 60_000 },
  { limit: 20, windowMs: 10_000 },
];
