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

export interface RateLimiter {
  hit(key: string, nowMs: number): RateDecision;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly hits = new Map<string, number[]>();
  private readonly longestMs: number;

  constructor(private readonly windows: readonly RateWindow[]) {
    if (windows.length === 0) throw new Error('at least one window');
    this.longestMs = Math.max(...windows.map((w) => w.windowMs));
  }

  hit(key: string, nowMs: number): RateDecision {
    const times = (this.hits.get(key) ?? []).filter((t) => t > nowMs - this.longestMs);
    let allowed = true;
    let retryAtMs = nowMs;
    let tightest: { limit: number; remaining: number; resetAtMs: number } | undefined;
    for (const w of this.windows) {
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
    if (allowed) times.push(nowMs);
    if (times.length === 0) this.hits.delete(key);
    else this.hits.set(key, times);
    const t = tightest!;
    return {
      allowed,
      limit: t.limit,
      remaining: allowed ? t.remaining : 0,
      resetAtMs: allowed ? t.resetAtMs : retryAtMs,
      retryAfterSec: allowed ? 0 : Math.max(1, Math.ceil((retryAtMs - nowMs) / 1000)),
    };
  }

  /** Drops keys with no recent hits; call periodically to bound memory. */
  sweep(nowMs: number): void {
    for (const [key, times] of this.hits) {
      if ((times.at(-1) ?? 0) <= nowMs - this.longestMs) this.hits.delete(key);
    }
  }
}

/** The spec's general API limits: 100 per minute and 20 per 10 seconds, per key. */
export const API_WINDOWS: readonly RateWindow[] = [
  { limit: 100, windowMs: 60_000 },
  { limit: 20, windowMs: 10_000 },
];
