import type { AppContext } from '../context.ts';
import { noopCampaignRunner } from '../campaigns/state.ts';

/**
 * Tells the dialer about campaigns a delete stopped (their status is already `stopped` in the
 * store, committed with the delete). A dialer that fails to abort is logged, not undone: the
 * status stays stopped, as after update-status `stop`.
 */
export async function stopRunningCampaigns(ctx: AppContext, campaignIds: readonly number[], cause: string): Promise<void> {
  const runner = ctx.campaignRunner ?? noopCampaignRunner;
  for (const campaignId of campaignIds) {
    ctx.logger.info({ campaignId, cause }, 'campaign stopped: what it calls with was deleted');
    await runner.stop(campaignId).catch((err: unknown) => ctx.logger.error({ campaignId, err: (err as Error).message }, 'campaign runner failed to stop'));
  }
}
