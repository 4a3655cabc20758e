/**
 * Connections to Redis. Commands fail fast while Redis is away (no offline queue, a command
 * timeout) so a request or an INVITE never waits on it: the callers fall back to this node's
 * memory (docs/REDIS.md). ioredis reconnects on its own, backing off to 2 s.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export const COMMAND_TIMEOUT_MS = 1000;
export const CONNECT_TIMEOUT_MS = 5000;

/** The URL without its password (for logs and errors). */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'an unparsable URL';
  }
}

export class RedisUnavailableError extends Error {}

/**
 * A connected client, or a RedisUnavailableError saying where and why (never the password). Errors
 * after that are logged at most once per outage, never thrown at the process.
 */
export async function connectRedis(url: string, logger: Logger, name: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    connectionName: name,
  });
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    logger.warn({ redis: redactRedisUrl(url), err: err.message }, 'Redis unreachable: shared limits fall back to this node until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info({ redis: redactRedisUrl(url) }, 'Redis reachable again');
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new RedisUnavailableError(
      `Redis at ${redactRedisUrl(url)} is unreachable (${(err as Error).message}): with SWITCHBOARD_REDIS_URL set the engine does not start without it (unset it to run one node alone)`,
    );
  }
  return redis;
}
