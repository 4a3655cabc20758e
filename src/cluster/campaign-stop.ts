import type { CampaignRunner } from '../campaigns/state.ts';
import type { Logger } from 'pino';
import type { Cluster } from './types.ts';

/**
 * A campaign runner whose stop reaches every node: a campaign stopped (or deleted) through any
 * node's API ends its calls on whichever node dials it. Start stays local.
 */
export function clusterCampaignRunner(local: CampaignRunner, cluster: Cluster, logger: Pick<Logger, 'error'>): CampaignRunner & { detach(): void } {
  const detach = cluster.bus.subscribe((m) => {
    if (m.type !== 'campaign-stop' || m.from === cluster.nodeId || !Number.isInteger(m.campaignId)) return;
    void local.stop(m.campaignId).catch((err: unknown) => logger.error({ campaignId: m.campaignId, err: (err as Error).message }, 'campaign runner failed to stop'));
  });
  return {
    start: (campaignId) => local.start(campaignId),
    async stop(campaignId) {
      await local.stop(campaignId);
      if (cluster.shared) await cluster.bus.publish('all', { type: 'campaign-stop', campaignId });
    },
    detach,
  };
}
