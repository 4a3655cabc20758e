import { MemoryRateLimiter, type RateLimiter, type RateWindow } from '../api/rate-limit.ts';
import type { Cluster } from './types.ts';

/** The limiter named `name`: shared by every node when the cluster is, else this process's own. */
export function limiterFor(cluster: Cluster | undefined, name: string, windows: readonly RateWindow[]): RateLimiter {
  return cluster ? cluster.rateLimiter(name, windows) : new MemoryRateLimiter(windows);
}
