import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../util/clock.ts';
import { MemoryCluster } from './memory.ts';
import { RedisCluster } from './redis/cluster.ts';
import type { Cluster } from './types.ts';

export type { Cluster } from './types.ts';

/**
 * This node's cluster: in Redis when SWITCHBOARD_REDIS_URL is set (throws, naming the address but
 * never a password, when Redis cannot be reached: the engine does not start), else this process
 * alone in memory.
 */
export async function openCluster(config: Pick<Config, 'cluster'>, logger: Logger, clock: Clock): Promise<Cluster> {
  const c = config.cluster ?? { nodeId: 'local', leaseMs: 10_000 };
  if (!c.redisUrl) return MemoryCluster.alone(c.nodeId, clock);
  const cluster = await RedisCluster.connect({ url: c.redisUrl, nodeId: c.nodeId, leaseMs: c.leaseMs, logger, clock });
  logger.info({ node: c.nodeId, leaseMs: c.leaseMs }, 'cluster state shared through Redis');
  return cluster;
}
