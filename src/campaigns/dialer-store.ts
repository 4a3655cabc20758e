/**
 * DialerStore over the SQLite store. The claim and the attempt-guarded finish are single
 * conditional UPDATEs, which is what makes "never dialled twice" hold across restarts and
 * between two runners racing for a lead.
 *
 * The attempt id lives in `leads.last_outcome` as `calling:<id>` while the lead is calling (the
 * leads table has no column for it; a migration could add one without changing the dialer).
 *
 * `interrupted`: a call record carrying the lead id and created after the claim tells what became
 * of the attempt. The outbound placer does not yet write `lead_id` into the call record, so
 * `callsCarryLeadId` defaults to false and every interrupted attempt resolves as `unknown`
 * (failed-unknown): never a blind redial. Turn it on once the wiring passes the lead id.
 *
 * Leases (several nodes on one database, docs/WORK-ONCE.md): the claim also writes this node as
 * the lead's `lease_holder` until `lease_expires_at`; `renew` pushes the expiry on while the call
 * lasts (a conditional UPDATE ... RETURNING, so only leads still ours are renewed). A lead whose
 * lease lapsed is settled by whichever node sees it first, as after a restart.
 */
import { sql } from 'kysely';
import type { Repos, Store } from '../store/index.ts';
import type { Campaign } from '../store/repos/campaigns.ts';
import { toLead, type Lead } from '../store/repos/leads.ts';
import type { Clock } from '../util/clock.ts';
import { greatest } from '../store/dialect.ts';
import type { CallOutcome, DialerStore, InterruptedAttempt, LeadPatch } from './dialer.ts';
import { NODE_LEASE_PREFIX } from '../cluster/node-leases.ts';

/** Lease defaults when the caller names none: a single node (the old behaviour) under one name. */
const DEFAULT_HOLDER = 'local';
const DEFAULT_LEASE_TTL_MS = 30_000;

/** Call record statuses (call-record.ts) that settle an attempt. */
const FINAL: Record<string, CallOutcome> = { completed: 'completed', busy: 'busy', 'no-answer': 'no-answer', failed: 'failed', voicemail: 'voicemail' };

export function sqliteDialerStore(
  store: Store,
  repos: Pick<Repos, 'campaigns' | 'ledger' | 'assistants'>,
  clock: Clock,
  opts: { callsCarryLeadId?: boolean; holder?: string; leaseTtlMs?: number } = {},
): DialerStore {
  const db = store.db;
  const holder = opts.holder ?? DEFAULT_HOLDER;
  const leaseTtlMs = opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  return {
    holder,
    leaseTtlMs,
    campaign: (id: number): Promise<Campaign | undefined> => repos.campaigns.getById(id),
    complete: (id) => repos.campaigns.setStatus(id, 'in-progress', 'completed'),
    async dueLeads(campaignId, nowMs, limit) {
      const rows = await db
        .selectFrom('leads')
        .selectAll()
        .where('campaign_id', '=', campaignId)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', nowMs)]))
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map(toLead);
    },
    async nextRetryAt(campaignId, nowMs) {
      const row = await db
        .selectFrom('leads')
        .select((eb) => eb.fn.min('next_attempt_at').as('at'))
        .where('campaign_id', '=', campaignId)
        .where('status', '=', 'pending')
        .where('next_attempt_at', '>', nowMs)
        .executeTakeFirst();
      return row?.at == null ? null : Number(row.at);
    },
    async openCount(campaignId) {
      const row = await db
        .selectFrom('leads')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('campaign_id', '=', campaignId)
        .where('status', 'in', ['pending', 'calling'])
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async claim(leadId, attemptId, cap) {
      const now = clock.now();
      let q = db
        .updateTable('leads')
        .set({ status: 'calling', attempts: sql`attempts + 1`, last_outcome: `calling:${attemptId}`, updated_at: now, lease_holder: holder, lease_expires_at: now + leaseTtlMs })
        .where('id', '=', leadId)
        .where('status', '=', 'pending');
      if (cap) {
        q = q.where(
          (eb) => eb.selectFrom('leads as busy').select((b) => b.fn.countAll<number>().as('n')).where('busy.campaign_id', '=', cap.campaignId).where('busy.status', '=', 'calling'),
          '<',
          cap.max,
        );
      }
      const res = await q.executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    async liveNodes(nowMs) {
      const row = await db
        .selectFrom('leases')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('name', 'like', `${NODE_LEASE_PREFIX}%`)
        .where('expires_at', '>', nowMs)
        .executeTakeFirstOrThrow();
      return Math.max(1, Number(row.n));
    },
    async callingCount(campaignId) {
      const row = await db
        .selectFrom('leads')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('campaign_id', '=', campaignId)
        .where('status', '=', 'calling')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async finish(leadId, attemptId, patch: LeadPatch) {
      const res = await db
        .updateTable('leads')
        .set({
          status: patch.status,
          last_outcome: patch.lastOutcome,
          next_attempt_at: patch.nextAttemptAt,
          attempts: greatest(store.dialect, 0, sql`attempts + ${patch.attemptsDelta ?? 0}`),
          updated_at: clock.now(),
          lease_holder: null,
          lease_expires_at: null,
        })
        .where('id', '=', leadId)
        .where('status', '=', 'calling')
        .where('last_outcome', '=', `calling:${attemptId}`)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    async renew(leadIds) {
      if (leadIds.length === 0) return [];
      // Only the expiry moves: updated_at marks the claim, which the call record is compared to.
      const rows = await db
        .updateTable('leads')
        .set({ lease_expires_at: clock.now() + leaseTtlMs })
        .where('id', 'in', [...leadIds])
        .where('status', '=', 'calling')
        .where('lease_holder', '=', holder)
        .returning('id')
        .execute();
      return rows.map((r) => r.id);
    },
    async callingLeads(campaignId) {
      const rows = await db.selectFrom('leads').selectAll().where('campaign_id', '=', campaignId).where('status', '=', 'calling').execute();
      return rows.map(toLead);
    },
    async interrupted(lead): Promise<InterruptedAttempt> {
      if (!opts.callsCarryLeadId) return 'unknown';
      const call = await db
        .selectFrom('calls')
        .select(['status'])
        .where('lead_id', '=', lead.id)
        .where('invite_at', '>=', lead.updatedAt)
        .orderBy('id', 'desc')
        .executeTakeFirst();
      if (!call) return 'not-placed';
      return FINAL[call.status] ?? 'unknown';
    },
    async timeZoneOf(assistantId) {
      const a = await repos.assistants.getById(assistantId);
      const tz = (a?.config as { timezone?: unknown } | undefined)?.timezone;
      return typeof tz === 'string' && tz ? tz : undefined;
    },
    covers: (accountId, micros) => repos.ledger.covers(accountId, micros),
  };
}
