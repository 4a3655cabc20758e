/**
 * The live feed across the nodes of a cluster (SWITCHBOARD_REDIS_URL): every node forwards its
 * calls' events on the cluster bus and delivers the other nodes' to its own watchers, so a feed
 * opened on any node behind a load balancer shows the account's calls wherever they run. An
 * event too large for the bus (a transcript line of tens of kilobytes) stays on its node.
 */
import type { Cluster } from '../../cluster/types.ts';
import { MAX_MESSAGE_BYTES } from '../../cluster/redis/cluster.ts';
import type { LiveEvent, LiveFeed } from './live-feed.ts';

export function relayLiveFeed(feed: LiveFeed, cluster: Cluster): () => void {
  if (!cluster.shared) return () => {};
  feed.forward = (event) => {
    if (JSON.stringify(event).length > MAX_MESSAGE_BYTES - 512) return;
    void cluster.bus.publish('all', { type: 'live', event }).catch(() => undefined);
  };
  const unsubscribe = cluster.bus.subscribe((m) => {
    if (m.type !== 'live' || m.from === cluster.nodeId || !isLiveEvent(m.event)) return;
    feed.deliver(m.event);
  });
  return () => {
    feed.forward = undefined;
    unsubscribe();
  };
}

function isLiveEvent(e: unknown): e is LiveEvent {
  if (typeof e !== 'object' || e === null) return false;
  const v = e as Record<string, unknown>;
  return (
    typeof v.accountId === 'number' &&
    typeof v.callId === 'number' &&
    typeof v.uuid === 'string' &&
    (v.kind === 'call' || (v.kind === 'transcript' && typeof v.entry === 'object') || (v.kind === 'timeline' && typeof v.event === 'object'))
  );
}
