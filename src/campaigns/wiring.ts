/**
 * The campaign dialer in the composition root: CampaignDialer over the SQLite store, with a
 * `placeCall` that goes through the same OutboundDialer as POST /user/calls.
 *
 * - A campaign call carries `campaign_id` and `lead_id` on its record, which is what lets a
 *   restarted dialer settle a lead found `calling` from the record instead of redialling it
 *   (dialer-store.ts `callsCarryLeadId`).
 * - placeCall resolves when the call has ended, with the outcome read from the record: its
 *   status (busy, no-answer, …) and, for answered calls, the voicemail verdict call control wrote
 *   in `details.voicemail` (a machine answered → `voicemail`, so the lead is retried per the
 *   dialer's rules). 603 Declined counts as busy: the person is there but not now.
 * - The abort signal (campaign stop, shutdown) ends the call: CANCEL while it rings, BYE once
 *   answered (CallSession.close does the right one for its state).
 * - `start()` resumes every campaign found `in-progress` (after a restart), and looks again every
 *   `watchMs`: a campaign another node started is dialed here too, and a run idle while other
 *   nodes' leases were live wakes (docs/WORK-ONCE.md).
 */
import type { CallRegistry } from '../call/call-registry.ts';
import type { OutboundCallPlacer } from '../call/outbound-dialer.ts';
import type { TrunkRegistry } from '../sip/trunk-registry.ts';
import type { Repos, Store } from '../store/index.ts';
import type { Call } from '../store/repos/calls.ts';
import type { Campaign } from '../store/repos/campaigns.ts';
import type { Lead } from '../store/repos/leads.ts';
import type { Clock, Timer } from '../util/clock.ts';
import { AppError } from '../util/errors.ts';
import { CampaignDialer, type CallOutcome, type DialerOptions, type PlaceCall } from './dialer.ts';
import { sqliteDialerStore } from './dialer-store.ts';

export interface CampaignWiringDeps {
  store: Store;
  repos: Pick<Repos, 'campaigns' | 'ledger' | 'assistants' | 'phoneNumbers' | 'calls'>;
  trunks: TrunkRegistry;
  /** The outbound dialer and its live-call registry (SipServer.dialer / .registry). */
  placer: OutboundCallPlacer;
  registry: Pick<CallRegistry, 'get'>;
  clock: Clock;
  logger: { info(o: object, m?: string): void; error(o: object, m?: string): void };
  options?: DialerOptions;
  /** This node's lease name and the lease time of a claimed lead (config.cluster). */
  cluster?: { nodeId: string; leaseTtlMs: number };
  /** How often in-progress campaigns are looked for; default 5 s. */
  watchMs?: number;
}

/** The outcome of a finished call record. */
export function outcomeOf(call: Pick<Call, 'status' | 'details'> | undefined): CallOutcome {
  if (!call) return 'failed';
  switch (call.status) {
    case 'completed': {
      const vm = call.details?.voicemail as { verdict?: unknown } | undefined;
      return vm?.verdict === 'voicemail' ? 'voicemail' : 'completed';
    }
    case 'busy':
    case 'declined':
      return 'busy';
    case 'no-answer':
      return 'no-answer';
    default:
      return 'failed';
  }
}

export function campaignPlaceCall(d: CampaignWiringDeps): PlaceCall {
  return async (lead: Lead, campaign: Campaign, signal: AbortSignal) => {
    const assistant = await d.repos.assistants.getById(campaign.assistantId);
    const phone = await d.repos.phoneNumbers.get(campaign.accountId, campaign.phoneNumberId);
    const trunk = phone?.sipTrunkId != null ? d.trunks.list().find((t) => t.spec.id === phone.sipTrunkId) : undefined;
    if (!assistant || assistant.accountId !== campaign.accountId) throw new AppError('The campaign assistant no longer exists', 422, 'ASSISTANT_NOT_FOUND');
    // A trunk not provisioned right now (SIP restarting) is worth another try later.
    if (!trunk) throw new AppError('The campaign phone number has no live SIP trunk', 503, 'SIP_UNAVAILABLE', true);
    signal.throwIfAborted();
    const record = await d.placer.place({
      accountId: campaign.accountId,
      assistant,
      phoneNumberId: campaign.phoneNumberId,
      trunk,
      to: lead.phoneNumber,
      ...(lead.variables ? { variables: lead.variables as Record<string, unknown> } : {}),
      campaignId: campaign.id,
      leadId: lead.id,
    });
    const session = d.registry.get(record.uuid);
    if (session) {
      const onAbort = (): void => void session.close('local-hangup');
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      try {
        await session.done;
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    }
    return outcomeOf(await d.repos.calls.getById(record.id));
  };
}

export interface CampaignWiring {
  dialer: CampaignDialer;
  /** Resumes the campaigns a previous run left in progress. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export function wireCampaigns(d: CampaignWiringDeps): CampaignWiring {
  const store = sqliteDialerStore(d.store, d.repos, d.clock, {
    callsCarryLeadId: true,
    ...(d.cluster ? { holder: d.cluster.nodeId, leaseTtlMs: d.cluster.leaseTtlMs } : {}),
  });
  const dialer = new CampaignDialer(store, campaignPlaceCall(d), d.clock, {
    onError: (err, campaignId) => d.logger.error({ campaignId, err: (err as Error).message }, 'campaign dialer error'),
    ...d.options,
  });
  let timer: Timer | undefined;
  let closed = false;
  const resume = async (): Promise<number> => {
    const rows = await d.store.db.selectFrom('campaigns').select('id').where('status', '=', 'in-progress').execute();
    for (const { id } of rows) await dialer.start(id);
    return rows.length;
  };
  const watch = (): void => {
    if (closed) return;
    timer = d.clock.setTimeout(() => {
      void resume()
        .catch((err: unknown) => d.logger.error({ err: (err as Error).message }, 'campaign watch failed'))
        .finally(watch);
    }, d.watchMs ?? 5_000);
  };
  return {
    dialer,
    async start() {
      const n = await resume();
      if (n > 0) d.logger.info({ campaigns: n }, 'in-progress campaigns resumed');
      watch();
    },
    async close() {
      closed = true;
      timer?.cancel();
      await dialer.close();
    },
  };
}
