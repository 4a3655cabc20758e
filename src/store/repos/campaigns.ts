import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import { fromJson, toJson } from '../json.ts';
import type { CampaignStatus } from '../../campaigns/state.ts';
import type { CallingHours } from '../../campaigns/calling-hours.ts';

export interface LeadCounts {
  total: number;
  pending: number;
  calling: number;
  done: number;
  failed: number;
}

export interface Campaign {
  id: number;
  accountId: number;
  name: string;
  assistantId: number;
  phoneNumberId: number;
  maxConcurrentCalls: number;
  callingHours: CallingHours | null;
  status: CampaignStatus;
  createdAt: number;
  updatedAt: number;
}

export type NewCampaign = Pick<Campaign, 'name' | 'assistantId' | 'phoneNumberId' | 'maxConcurrentCalls' | 'callingHours'>;

type Row = {
  id: number;
  account_id: number;
  name: string;
  assistant_id: number;
  phone_number_id: number;
  max_concurrent_calls: number;
  calling_hours: string | null;
  status: string;
  created_at: number;
  updated_at: number;
};

export class CampaignsRepo {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  async create(accountId: number, input: NewCampaign): Promise<Campaign> {
    const now = this.clock.now();
    const row = await this.store.db
      .insertInto('campaigns')
      .values({
        account_id: accountId,
        name: input.name,
        assistant_id: input.assistantId,
        phone_number_id: input.phoneNumberId,
        max_concurrent_calls: input.maxConcurrentCalls,
        calling_hours: input.callingHours ? toJson(input.callingHours) : null,
        status: 'draft',
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toCampaign(row);
  }

  async get(accountId: number, id: number): Promise<Campaign | undefined> {
    const row = await this.store.db.selectFrom('campaigns').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    return row && toCampaign(row);
  }

  /**
   * By id alone. Only update-status uses it: the spec tells "not found" and "another user's
   * campaign" apart there. Every other read goes through get(accountId, id).
   */
  async getById(id: number): Promise<Campaign | undefined> {
    const row = await this.store.db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toCampaign(row);
  }

  async list(accountId: number): Promise<Campaign[]> {
    const rows = await this.store.db.selectFrom('campaigns').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').execute();
    return rows.map(toCampaign);
  }

  /**
   * Moves the campaign from `from` to `to` only if it still is in `from`: two concurrent
   * update-status calls cannot both win. False when the status changed meanwhile.
   */
  async setStatus(id: number, from: CampaignStatus, to: CampaignStatus): Promise<boolean> {
    const res = await this.store.db
      .updateTable('campaigns')
      .set({ status: to, updated_at: this.clock.now() })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /**
   * Deletes the account's campaign with its leads, unless it is in progress (the dialer is using
   * it; stop it first). Call records keep their campaign id as history.
   */
  async delete(accountId: number, id: number): Promise<'deleted' | 'missing' | 'running'> {
    return this.store.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('campaigns').select('status').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      if (!row) return 'missing';
      if (row.status === 'in-progress') return 'running';
      await trx.deleteFrom('leads').where('campaign_id', '=', id).execute();
      await trx.deleteFrom('campaigns').where('account_id', '=', accountId).where('id', '=', id).where('status', '!=', 'in-progress').execute();
      return 'deleted';
    });
  }

  /** Lead counts per status for campaigns of the account. */
  async leadCounts(accountId: number, campaignIds: readonly number[]): Promise<Map<number, LeadCounts>> {
    const out = new Map<number, LeadCounts>();
    for (const id of campaignIds) out.set(id, { total: 0, pending: 0, calling: 0, done: 0, failed: 0 });
    if (campaignIds.length === 0) return out;
    const rows = await this.store.db
      .selectFrom('leads')
      .select((eb) => ['campaign_id', 'status', eb.fn.countAll<number>().as('n')])
      .where('account_id', '=', accountId)
      .where('campaign_id', 'in', [...campaignIds])
      .groupBy(['campaign_id', 'status'])
      .execute();
    for (const r of rows) {
      const c = out.get(r.campaign_id);
      if (!c) continue;
      const n = Number(r.n);
      c.total += n;
      if (r.status === 'pending' || r.status === 'calling' || r.status === 'done' || r.status === 'failed') c[r.status] += n;
    }
    return out;
  }
}

function toCampaign(row: Row): Campaign {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    assistantId: row.assistant_id,
    phoneNumberId: row.phone_number_id,
    maxConcurrentCalls: row.max_concurrent_calls,
    callingHours: fromJson<CallingHours | null>(row.calling_hours, null),
    status: row.status as CampaignStatus,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
