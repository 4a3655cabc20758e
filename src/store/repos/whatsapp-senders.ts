import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import type { SecretBox } from '../secrets.ts';

export type SenderStatus = 'online' | 'offline';

/** A WhatsApp sender with its provider credentials; `authToken` is decrypted (never return it). */
export interface WhatsappSender {
  id: number;
  accountId: number;
  name: string;
  phone: string;
  assistantId: number | null;
  accountSid: string;
  authToken: string;
  status: SenderStatus;
  createdAt: number;
  updatedAt: number;
}

export interface NewWhatsappSender {
  name: string;
  phone: string;
  assistantId: number | null;
  accountSid: string;
  authToken: string;
  status: SenderStatus;
}

type Row = {
  id: number;
  account_id: number;
  name: string;
  phone: string;
  assistant_id: number | null;
  account_sid: string;
  auth_token_enc: string;
  status: string;
  created_at: number;
  updated_at: number;
};

export class WhatsappSendersRepo {
  constructor(private readonly store: Store, private readonly clock: Clock, private readonly secrets: SecretBox) {}

  async create(accountId: number, input: NewWhatsappSender): Promise<WhatsappSender> {
    const now = this.clock.now();
    const row = await this.store.db
      .insertInto('whatsapp_senders')
      .values({
        account_id: accountId,
        name: input.name,
        phone: input.phone,
        assistant_id: input.assistantId,
        account_sid: input.accountSid,
        auth_token_enc: this.secrets.seal(input.authToken),
        status: input.status,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.toSender(row);
  }

  /** Updates the given fields; undefined when the sender is not the account's. */
  async update(accountId: number, id: number, patch: Partial<NewWhatsappSender>): Promise<WhatsappSender | undefined> {
    const row = await this.store.db
      .updateTable('whatsapp_senders')
      .set({
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.phone !== undefined && { phone: patch.phone }),
        ...(patch.assistantId !== undefined && { assistant_id: patch.assistantId }),
        ...(patch.accountSid !== undefined && { account_sid: patch.accountSid }),
        ...(patch.authToken !== undefined && { auth_token_enc: this.secrets.seal(patch.authToken) }),
        ...(patch.status !== undefined && { status: patch.status }),
        updated_at: this.clock.now(),
      })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && this.toSender(row);
  }

  /** The account's sender, or undefined (missing and another account's look the same). */
  async get(accountId: number, id: number): Promise<WhatsappSender | undefined> {
    const row = await this.store.db
      .selectFrom('whatsapp_senders')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && this.toSender(row);
  }

  /**
   * Deletes the account's sender; false when there is none. Its conversations stay as history
   * (they show no sender once it is gone); its webhook then answers like an unknown sender's.
   */
  async delete(accountId: number, id: number): Promise<boolean> {
    const res = await this.store.db.deleteFrom('whatsapp_senders').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** By id alone: the provider webhook knows the sender, not the account. */
  async getById(id: number): Promise<WhatsappSender | undefined> {
    const row = await this.store.db.selectFrom('whatsapp_senders').selectAll().where('id', '=', id).executeTakeFirst();
    return row && this.toSender(row);
  }

  async list(accountId: number): Promise<WhatsappSender[]> {
    const rows = await this.store.db.selectFrom('whatsapp_senders').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    return rows.map((r) => this.toSender(r));
  }

  /** Another sender of the account with this phone (senders are told apart by number). */
  async findByPhone(accountId: number, phone: string): Promise<WhatsappSender | undefined> {
    const row = await this.store.db
      .selectFrom('whatsapp_senders')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('phone', '=', phone)
      .executeTakeFirst();
    return row && this.toSender(row);
  }

  private toSender(row: Row): WhatsappSender {
    return {
      id: row.id,
      accountId: row.account_id,
      name: row.name,
      phone: row.phone,
      assistantId: row.assistant_id,
      accountSid: row.account_sid,
      authToken: this.secrets.open(row.auth_token_enc),
      status: row.status === 'offline' ? 'offline' : 'online',
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}
