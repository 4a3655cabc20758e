import type { Selectable } from 'kysely';
import type { LeadsTable } from '../schema.ts';
import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import { fromJson, toJson } from '../json.ts';

export type LeadStatus = 'pending' | 'calling' | 'done' | 'failed';
export type LeadVariables = Record<string, string | number | boolean | null>;

export interface Lead {
  id: number;
  campaignId: number;
  accountId: number;
  phoneNumber: string;
  variables: LeadVariables | null;
  status: LeadStatus;
  attempts: number;
  lastOutcome: string | null;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
  /** While `calling`: the node dialing it and until when its lease lasts (docs/WORK-ONCE.md). */
  leaseHolder: string | null;
  leaseExpiresAt: number | null;
}

export interface AddLeadsResult {
  added: number;
  /** Numbers already in the campaign, or repeated in the request: not added twice. */
  duplicates: number;
}

/** A leads row as the store holds it. */
export type LeadRow = Selectable<LeadsTable>;

/** The one mapping from a stored row to a Lead (the repository and the dialer's store use it). */
export function toLead(r: LeadRow): Lead {
  return {
    id: r.id,
    campaignId: r.campaign_id,
    accountId: r.account_id,
    phoneNumber: r.phone_number,
    variables: fromJson<LeadVariables | null>(r.variables, null),
    status: r.status as LeadStatus,
    attempts: r.attempts,
    lastOutcome: r.last_outcome,
    nextAttemptAt: r.next_attempt_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    leaseHolder: r.lease_holder,
    leaseExpiresAt: r.lease_expires_at,
  };
}

export class LeadsRepo {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  /**
   * Adds leads in one transaction (10 000 rows take milliseconds with a prepared statement).
   * A number already in the campaign is skipped: calling someone twice is the worse mistake.
   */
  add(accountId: number, campaignId: number, leads: ReadonlyArray<{ phoneNumber: string; variables?: LeadVariables | null }>): AddLeadsResult {
    const sqlite = this.store.sqlite;
    const now = this.clock.now();
    const existing = sqlite.prepare('SELECT phone_number FROM leads WHERE campaign_id = ?').pluck();
    const insert = sqlite.prepare(
      `INSERT INTO leads (campaign_id, account_id, phone_number, variables, status, attempts, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)`,
    );
    return sqlite.transaction(() => {
      const seen = new Set(existing.all(campaignId) as string[]);
      let added = 0;
      for (const lead of leads) {
        if (seen.has(lead.phoneNumber)) continue;
        seen.add(lead.phoneNumber);
        insert.run(campaignId, accountId, lead.phoneNumber, lead.variables ? toJson(lead.variables) : null, now, now);
        added++;
      }
      return { added, duplicates: leads.length - added };
    }).immediate();
  }

  async list(accountId: number, campaignId: number, opts: { status?: LeadStatus; limit: number; offset: number }): Promise<Lead[]> {
    let q = this.store.db.selectFrom('leads').selectAll().where('account_id', '=', accountId).where('campaign_id', '=', campaignId);
    if (opts.status) q = q.where('status', '=', opts.status);
    const rows = await q.orderBy('id').limit(opts.limit).offset(opts.offset).execute();
    return rows.map(toLead);
  }

  /** Leads the dialer can still call: pending ones (a start needs at least one). */
  async pendingCount(campaignId: number): Promise<number> {
    const row = await this.store.db
      .selectFrom('leads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Records the outcome of a call attempt (for the dialer). */
  async update(id: number, patch: { status?: LeadStatus; attempts?: number; lastOutcome?: string | null; nextAttemptAt?: number | null }): Promise<void> {
    await this.store.db
      .updateTable('leads')
      .set({
        ...(patch.status !== undefined && { status: patch.status }),
        ...(patch.attempts !== undefined && { attempts: patch.attempts }),
        ...(patch.lastOutcome !== undefined && { last_outcome: patch.lastOutcome }),
        ...(patch.nextAttemptAt !== undefined && { next_attempt_at: patch.nextAttemptAt }),
        updated_at: this.clock.now(),
      })
      .where('id', '=', id)
      .execute();
  }
}
