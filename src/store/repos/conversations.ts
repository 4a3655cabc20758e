import crypto from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Store } from '../db.ts';
import type { ConversationsTable, Database } from '../schema.ts';
import type { Clock } from '../../util/clock.ts';
import { fromJson, toJson } from '../json.ts';
import { inTransaction, isUniqueViolation } from '../dialect.ts';

type Row = Selectable<ConversationsTable>;

export type ConversationType = 'widget' | 'test' | 'api' | 'whatsapp';

export interface Conversation {
  id: number;
  uuid: string;
  accountId: number;
  assistantId: number;
  type: ConversationType;
  customerIdentifier: string | null;
  externalIdentifier: string | null;
  variables: Record<string, unknown> | null;
  aiEnabled: boolean;
  status: 'active' | 'ended';
  endedReason: string | null;
  whatsappSenderId: number | null;
  customerPhone: string | null;
  customerName: string | null;
  lastMessageAt: number;
  lastCustomerMessageAt: number | null;
  inactivityDeadline: number | null;
  endedAt: number | null;
  createdAt: number;
}

export interface NewConversation {
  accountId: number;
  assistantId: number;
  type: ConversationType;
  variables?: Record<string, unknown> | null;
  customerIdentifier?: string | null;
  externalIdentifier?: string | null;
  whatsappSenderId?: number | null;
  customerPhone?: string | null;
  customerName?: string | null;
  /** How long without a message before the sweeper ends it. */
  inactivityMs: number;
}

export class ConversationsRepo {
  private readonly db: Kysely<Database>;

  constructor(private readonly store: Store, private readonly clock: Clock) {
    this.db = store.db;
  }

  /** Creates the conversation and, when given, its opening assistant message in one transaction. */
  async create(input: NewConversation, initialMessage?: string): Promise<Conversation> {
    const now = this.clock.now();
    const uuid = crypto.randomUUID();
    const id = await inTransaction(this.store, async (tx) => {
      const row = await tx.db
        .insertInto('conversations')
        .values({
          uuid,
          account_id: input.accountId,
          assistant_id: input.assistantId,
          type: input.type,
          customer_identifier: input.customerIdentifier ?? null,
          external_identifier: input.externalIdentifier ?? null,
          variables: input.variables == null ? null : toJson(input.variables),
          ai_enabled: 1,
          status: 'active',
          whatsapp_sender_id: input.whatsappSenderId ?? null,
          customer_phone: input.customerPhone ?? null,
          customer_name: input.customerName ?? null,
          last_message_at: now,
          last_customer_message_at: null,
          ended_at: null,
          created_at: now,
          inactivity_deadline: now + input.inactivityMs,
          ended_reason: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (initialMessage) {
        await tx.db.insertInto('messages').values({ conversation_id: row.id, role: 'assistant', content: initialMessage, created_at: now }).execute();
      }
      return row.id;
    });
    return (await this.getById(id))!;
  }

  /**
   * The conversation of (assistant, customer identifier), created on first use. Two first
   * requests racing both end up with the same row thanks to the unique index.
   */
  async findOrCreateForCustomer(input: NewConversation & { customerIdentifier: string }): Promise<{ conversation: Conversation; created: boolean }> {
    const find = () =>
      this.db.selectFrom('conversations').selectAll().where('assistant_id', '=', input.assistantId).where('customer_identifier', '=', input.customerIdentifier).executeTakeFirst();
    const existing = await find();
    if (existing) return { conversation: toConversation(existing), created: false };
    try {
      return { conversation: await this.create(input), created: true };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      return { conversation: toConversation((await find())!), created: false };
    }
  }

  async getByUuid(uuid: string): Promise<Conversation | undefined> {
    const row = await this.db.selectFrom('conversations').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row && toConversation(row);
  }

  async getById(id: number): Promise<Conversation | undefined> {
    const row = await this.db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toConversation(row);
  }

  /** The newest conversation between a WhatsApp sender and a customer phone. */
  async latestWhatsapp(senderId: number, customerPhone: string): Promise<Conversation | undefined> {
    const row = await this.db
      .selectFrom('conversations')
      .selectAll()
      .where('whatsapp_sender_id', '=', senderId)
      .where('customer_phone', '=', customerPhone)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    return row && toConversation(row);
  }

  /** Hand-over flag; false when the conversation is not the account's. */
  async setAiEnabled(accountId: number, uuid: string, enabled: boolean): Promise<boolean> {
    const res = await this.db
      .updateTable('conversations')
      .set({ ai_enabled: enabled ? 1 : 0 })
      .where('uuid', '=', uuid)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async setVariables(id: number, variables: Record<string, unknown> | null): Promise<void> {
    await this.db.updateTable('conversations').set({ variables: variables == null ? null : toJson(variables) }).where('id', '=', id).execute();
  }

  async setCustomerName(id: number, name: string): Promise<void> {
    await this.db.updateTable('conversations').set({ customer_name: name }).where('id', '=', id).execute();
  }

  /** An ended conversation starts again (assistants with `conversation_ended_retrigger`). */
  async reopen(id: number, inactivityMs: number): Promise<void> {
    await this.db
      .updateTable('conversations')
      .set({ status: 'active', ended_at: null, ended_reason: null, inactivity_deadline: this.clock.now() + inactivityMs })
      .where('id', '=', id)
      .execute();
  }

  /** Active conversations whose inactivity deadline has passed, oldest first. */
  async dueForEnd(now: number, limit = 100): Promise<Conversation[]> {
    const rows = await this.db
      .selectFrom('conversations')
      .selectAll()
      .where('status', '=', 'active')
      .where('inactivity_deadline', '<=', now)
      .orderBy('inactivity_deadline')
      .limit(limit)
      .execute();
    return rows.map(toConversation);
  }

  /**
   * Ends the conversation if it is still active (and, for inactivity, still past its deadline:
   * a message may have arrived since it was found). True when this call ended it.
   */
  async end(id: number, reason: 'inactivity' | 'assistant'): Promise<boolean> {
    const now = this.clock.now();
    let q = this.db
      .updateTable('conversations')
      .set({ status: 'ended', ended_at: now, ended_reason: reason, inactivity_deadline: null })
      .where('id', '=', id)
      .where('status', '=', 'active');
    if (reason === 'inactivity') q = q.where('inactivity_deadline', '<=', now);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /**
   * An account's conversations, the most recently active first, with how many messages each
   * holds (one indexed count per row of the page, so a page costs at most `limit` counts).
   */
  async listForAccount(accountId: number, opts: { limit: number; offset: number; assistantId?: number }): Promise<Array<Conversation & { messageCount: number }>> {
    let q = this.db
      .selectFrom('conversations as c')
      .selectAll('c')
      .select((eb) => eb.selectFrom('messages as m').select((e) => e.fn.countAll<number>().as('n')).whereRef('m.conversation_id', '=', 'c.id').as('message_count'))
      .where('c.account_id', '=', accountId);
    if (opts.assistantId !== undefined) q = q.where('c.assistant_id', '=', opts.assistantId);
    const rows = await q.orderBy('c.last_message_at', 'desc').orderBy('c.id', 'desc').limit(opts.limit).offset(opts.offset).execute();
    return rows.map((row) => ({ ...toConversation(row as Row), messageCount: Number(row.message_count ?? 0) }));
  }
}

export function toConversation(row: Row): Conversation {
  return {
    id: row.id,
    uuid: row.uuid,
    accountId: row.account_id,
    assistantId: row.assistant_id,
    type: row.type as ConversationType,
    customerIdentifier: row.customer_identifier,
    externalIdentifier: row.external_identifier,
    variables: fromJson<Record<string, unknown> | null>(row.variables, null),
    aiEnabled: row.ai_enabled === 1,
    status: row.status === 'ended' ? 'ended' : 'active',
    endedReason: row.ended_reason,
    whatsappSenderId: row.whatsapp_sender_id,
    customerPhone: row.customer_phone,
    customerName: row.customer_name,
    lastMessageAt: row.last_message_at,
    lastCustomerMessageAt: row.last_customer_message_at,
    inactivityDeadline: row.inactivity_deadline,
    endedAt: row.ended_at,
    createdAt: row.created_at,
  };
}
