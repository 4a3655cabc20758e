import crypto from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Store } from '../db.ts';
import type { ConversationsTable, Database } from '../schema.ts';
import type { Clock } from '../../util/clock.ts';
import { fromJson, toJson } from '../json.ts';

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
  create(input: NewConversation, initialMessage?: string): Conversation {
    const now = this.clock.now();
    const uuid = crypto.randomUUID();
    const sqlite = this.store.sqlite;
    const id = sqlite.transaction(() => {
      const res = sqlite
        .prepare(
          `INSERT INTO conversations (uuid, account_id, assistant_id, type, customer_identifier, external_identifier,
             variables, ai_enabled, status, whatsapp_sender_id, customer_phone, customer_name, last_message_at,
             last_customer_message_at, ended_at, created_at, inactivity_deadline)
           VALUES (?, ?, ?, ?, ?, ?, ?, 1, 'active', ?, ?, ?, ?, NULL, NULL, ?, ?)`,
        )
        .run(
          uuid,
          input.accountId,
          input.assistantId,
          input.type,
          input.customerIdentifier ?? null,
          input.externalIdentifier ?? null,
          input.variables == null ? null : toJson(input.variables),
          input.whatsappSenderId ?? null,
          input.customerPhone ?? null,
          input.customerName ?? null,
          now,
          now,
          now + input.inactivityMs,
        );
      const convId = Number(res.lastInsertRowid);
      if (initialMessage) {
        sqlite
          .prepare(`INSERT INTO messages (conversation_id, role, content, created_at) VALUES (?, 'assistant', ?, ?)`)
          .run(convId, initialMessage, now);
      }
      return convId;
    }).immediate();
    return this.byIdSync(id)!;
  }

  /**
   * The conversation of (assistant, customer identifier), created on first use. Two first
   * requests racing both end up with the same row thanks to the unique index.
   */
  findOrCreateForCustomer(input: NewConversation & { customerIdentifier: string }): { conversation: Conversation; created: boolean } {
    const existing = this.store.sqlite
      .prepare('SELECT * FROM conversations WHERE assistant_id = ? AND customer_identifier = ?')
      .get(input.assistantId, input.customerIdentifier) as Row | undefined;
    if (existing) return { conversation: toConversation(existing), created: false };
    try {
      return { conversation: this.create(input), created: true };
    } catch (err) {
      if (!String((err as Error).message).includes('UNIQUE')) throw err;
      const row = this.store.sqlite
        .prepare('SELECT * FROM conversations WHERE assistant_id = ? AND customer_identifier = ?')
        .get(input.assistantId, input.customerIdentifier) as Row;
      return { conversation: toConversation(row), created: false };
    }
  }

  async getByUuid(uuid: string): Promise<Conversation | undefined> {
    const row = await this.db.selectFrom('conversations').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row && toConversation(row);
  }

  async getById(id: number): Promise<Conversation | undefined> {
    return this.byIdSync(id);
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

  /** `latestWhatsapp`, synchronously, for find-or-create inside one transaction. */
  latestWhatsappSync(senderId: number, customerPhone: string): Conversation | undefined {
    const row = this.store.sqlite
      .prepare('SELECT * FROM conversations WHERE whatsapp_sender_id = ? AND customer_phone = ? ORDER BY id DESC LIMIT 1')
      .get(senderId, customerPhone) as Row | undefined;
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
    this.setCustomerNameSync(id, name);
  }

  setCustomerNameSync(id: number, name: string): void {
    this.store.sqlite.prepare('UPDATE conversations SET customer_name = ? WHERE id = ?').run(name, id);
  }

  /** An ended conversation starts again (assistants with `conversation_ended_retrigger`). */
  async reopen(id: number, inactivityMs: number): Promise<void> {
    this.reopenSync(id, inactivityMs);
  }

  reopenSync(id: number, inactivityMs: number): void {
    this.store.sqlite
      .prepare(`UPDATE conversations SET status = 'active', ended_at = NULL, ended_reason = NULL, inactivity_deadline = ? WHERE id = ?`)
      .run(this.clock.now() + inactivityMs, id);
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
    return this.endSync(id, reason);
  }

  /** `end`, synchronously, to share a transaction with the event it causes. */
  endSync(id: number, reason: 'inactivity' | 'assistant'): boolean {
    const now = this.clock.now();
    const res = this.store.sqlite
      .prepare(
        `UPDATE conversations SET status = 'ended', ended_at = ?, ended_reason = ?, inactivity_deadline = NULL
         WHERE id = ? AND status = 'active' AND (? = 0 OR inactivity_deadline <= ?)`,
      )
      .run(now, reason, id, reason === 'inactivity' ? 1 : 0, now);
    return res.changes > 0;
  }

  /**
   * An account's conversations, the most recently active first, with how many messages each
   * holds (one indexed count per row of the page, so a page costs at most `limit` counts).
   */
  listForAccount(accountId: number, opts: { limit: number; offset: number; assistantId?: number }): Array<Conversation & { messageCount: number }> {
    const byAssistant = opts.assistantId !== undefined;
    const rows = this.store.sqlite
      .prepare(
        `SELECT c.*, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS message_count
         FROM conversations c
         WHERE c.account_id = ? AND (? = 0 OR c.assistant_id = ?)
         ORDER BY c.last_message_at DESC, c.id DESC LIMIT ? OFFSET ?`,
      )
      .all(accountId, byAssistant ? 1 : 0, opts.assistantId ?? 0, opts.limit, opts.offset) as Array<Row & { message_count: number }>;
    return rows.map((row) => ({ ...toConversation(row), messageCount: row.message_count }));
  }

  getByIdSync(id: number): Conversation | undefined {
    return this.byIdSync(id);
  }

  private byIdSync(id: number): Conversation | undefined {
    const row = this.store.sqlite.prepare('SELECT * FROM conversations WHERE id = ?').get(id) as Row | undefined;
    return row && toConversation(row);
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
