import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import { stopCampaignsUsing, unbindAssistants } from '../references.ts';

/** `sip_trunk`: a trunk's number, can take and place calls; `caller_id`: a number shown as caller ID. */
export type PhoneNumberType = 'sip_trunk' | 'caller_id';

export interface PhoneNumber {
  id: number;
  accountId: number;
  phoneNumber: string;
  type: PhoneNumberType;
  sipTrunkId: number | null;
  /** The inbound assistant answering this number, if one is assigned. */
  assistantId: number | null;
  createdAt: number;
}

export class PhoneNumbersRepo {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  private select(accountId: number) {
    return this.store.db
      .selectFrom('phone_numbers as p')
      .select((eb) => [
        'p.id',
        'p.account_id',
        'p.phone_number',
        'p.type',
        'p.sip_trunk_id',
        'p.created_at',
        // An inbound number has at most one inbound assistant (the assistant API enforces it);
        // outbound assistants may share a number and are not "assigned" to it.
        eb
          .selectFrom('assistants as a')
          .select('a.id')
          .whereRef('a.phone_number_id', '=', 'p.id')
          .where('a.type', '=', 'inbound')
          .where('a.account_id', '=', accountId)
          .orderBy('a.id')
          .limit(1)
          .as('assistant_id'),
      ])
      .where('p.account_id', '=', accountId);
  }

  async list(accountId: number): Promise<PhoneNumber[]> {
    const rows = await this.select(accountId).orderBy('p.id').execute();
    return rows.map(toPhoneNumber);
  }

  async get(accountId: number, id: number): Promise<PhoneNumber | undefined> {
    const row = await this.select(accountId).where('p.id', '=', id).executeTakeFirst();
    return row && toPhoneNumber(row);
  }

  /** The account's number record with this exact number and type, if any. */
  async find(accountId: number, phoneNumber: string, type: PhoneNumberType): Promise<PhoneNumber | undefined> {
    const row = await this.select(accountId).where('p.phone_number', '=', phoneNumber).where('p.type', '=', type).executeTakeFirst();
    return row && toPhoneNumber(row);
  }

  async createCallerId(accountId: number, phoneNumber: string): Promise<PhoneNumber> {
    const createdAt = this.clock.now();
    const row = await this.store.db
      .insertInto('phone_numbers')
      .values({ account_id: accountId, phone_number: phoneNumber, type: 'caller_id', sip_trunk_id: null, created_at: createdAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: row.id, accountId, phoneNumber, type: 'caller_id', sipTrunkId: null, assistantId: null, createdAt };
  }

  /**
   * Deletes a number record in one transaction with what that changes elsewhere: assistants using
   * it lose it, campaigns in progress calling from it are stopped (src/store/references.ts).
   * Undefined when the account has no such number; else the campaigns it stopped.
   */
  async delete(accountId: number, id: number): Promise<{ stoppedCampaignIds: number[] } | undefined> {
    return this.store.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const own = await trx.selectFrom('phone_numbers').select('id').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      if (!own) return undefined;
      await unbindAssistants(trx, accountId, { phoneNumbers: new Set([id]) }, now);
      const stoppedCampaignIds = await stopCampaignsUsing(trx, accountId, { phoneNumberIds: [id] }, now);
      await trx.deleteFrom('phone_numbers').where('account_id', '=', accountId).where('id', '=', id).execute();
      return { stoppedCampaignIds };
    });
  }
}

function toPhoneNumber(r: {
  id: number;
  account_id: number;
  phone_number: string;
  type: string;
  sip_trunk_id: number | null;
  created_at: number;
  assistant_id: number | null;
}): PhoneNumber {
  return {
    id: r.id,
    accountId: r.account_id,
    phoneNumber: r.phone_number,
    type: r.type as PhoneNumberType,
    sipTrunkId: r.sip_trunk_id,
    assistantId: r.assistant_id ?? null,
    createdAt: r.created_at,
  };
}
