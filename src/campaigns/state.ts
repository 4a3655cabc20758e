/**
 * The campaign state table, pure. The spec names draft, in-progress and stopped and leaves the
 * permitted source states open; ours: start from draft (first run) or stopped (resume), stop from
 * draft or in-progress. `completed` (set by the dialer when no lead is left) is final.
 */

export type CampaignStatus = 'draft' | 'in-progress' | 'stopped' | 'completed';
export type CampaignAction = 'start' | 'stop';

export const CAMPAIGN_ACTIONS: readonly CampaignAction[] = ['start', 'stop'];

export type Transition =
  | { ok: true; next: CampaignStatus }
  | { ok: false; reason: 'already_in_progress' | 'already_stopped' | 'completed'; message: string };

const TABLE: Record<CampaignStatus, Partial<Record<CampaignAction, CampaignStatus>>> = {
  draft: { start: 'in-progress', stop: 'stopped' },
  'in-progress': { stop: 'stopped' },
  stopped: { start: 'in-progress' },
  completed: {},
};

export function isCampaignAction(value: unknown): value is CampaignAction {
  return value === 'start' || value === 'stop';
}

export function transition(status: CampaignStatus, action: CampaignAction): Transition {
  const next = TABLE[status][action];
  if (next) return { ok: true, next };
  if (status === 'completed') {
    return { ok: false, reason: 'completed', message: `The campaign is completed and cannot be ${action === 'start' ? 'started' : 'stopped'}.` };
  }
  if (status === 'in-progress') return { ok: false, reason: 'already_in_progress', message: 'The campaign is already in progress.' };
  return { ok: false, reason: 'already_stopped', message: 'The campaign is already stopped.' };
}

/**
 * What runs a campaign's calls. update-status persists the new state first, then tells the
 * runner; the dialer implements it later (`stop` aborts the campaign's ongoing calls).
 */
export interface CampaignRunner {
  start(campaignId: number): Promise<void>;
  stop(campaignId: number): Promise<void>;
}

export const noopCampaignRunner: CampaignRunner = {
  async start() {},
  async stop() {},
};
