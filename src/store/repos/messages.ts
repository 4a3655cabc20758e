import type { Selectable } from 'kysely';
import type { Store } from '../db.ts';
import type { MessagesTable } from '../schema.ts';
import type { Clock } from '../../util/clock.ts';
import { fromJson, toJson } from '../json.ts';
import { inTransaction } from '../dialect.ts';
import { LedgerRepo } from './ledger.ts';

/** `agent` is a human (or API client) writing in the assistant's place, e.g. a WhatsApp freeform send. */
export type MessageRole = 'user' | 'assistant' | 'agent';

export interface StoredFunctionCall {
  name: string;
  arguments: Record<string, unknown>;
  result: Record<string, unknown>;
}

export interface Message {
  id: number;
  conversationId: number;
  role: MessageRole;
  content: string;
  functionCalls: StoredFunctionCall[];
  providerSid: string | null;
  deliveryStatus: string | null;
  createdAt: number;
}

export interface NewMessage {
  role: MessageRole;
  content: string;
  functionCalls?: StoredFunctionCall[];
  providerSid?: string | null;
  deliveryStatus?: string | null;
}

export interface AppendInput {
  conversationId: number;
  messages: NewMessage[];
  /** Charged in the same transaction; nothing is stored when the balance does not cover it. */
  charge?: { accountId: number; micros: number; reason: string; reference: string };
  /** Next inactivity deadline, counted from now. */
  inactivityMs: number;
}

type Row = Selectable<MessagesTable>;

export class MessagesRepo {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  /**
   * Stores messages, moves the conversation's clocks, and charges, all or nothing, in one
   * transaction. The charge locks the account first (src/store/repos/ledger.ts), so two
   * concurrent requests can never both see the same cents as available.
   */
  async append(input: AppendInput): Promise<{ charged: boolean; ids: number[] }> {
    const now = this.clock.now();
    return inTransaction(this.store, async (tx) => {
      if (input.charge) {
        const c = input.charge;
        if (!(await new LedgerRepo(tx, this.clock).tryCharge(c.accountId, c.micros, c.reason, c.reference))) return { charged: false, ids: [] };
      }
      const ids: number[] = [];
      for (const m of input.messages) {
        const row = await tx.db
          .insertInto('messages')
          .values({
            conversation_id: input.conversationId,
            role: m.role,
            content: m.content,
            function_calls: m.functionCalls && m.functionCalls.length > 0 ? toJson(m.functionCalls) : null,
            provider_sid: m.providerSid ?? null,
            delivery_status: m.deliveryStatus ?? null,
            created_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(row.id);
      }
      const fromCustomer = input.messages.some((m) => m.role === 'user');
      await tx.db
        .updateTable('conversations')
        .set({ last_message_at: now, inactivity_deadline: now + input.inactivityMs, ...(fromCustomer && { last_customer_message_at: now }) })
        .where('id', '=', input.conversationId)
        .execute();
      return { charged: input.charge !== undefined, ids };
    });
  }

  async list(conversationId: number): Promise<Message[]> {
    const rows = await this.store.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).orderBy('id').execute();
    return rows.map(toMessage);
  }

  async get(id: number): Promise<Message | undefined> {
    const row = await this.store.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toMessage(row);
  }

  async setProviderSid(id: number, sid: string, status: string): Promise<void> {
    await this.store.db.updateTable('messages').set({ provider_sid: sid, delivery_status: status }).where('id', '=', id).execute();
  }

  async setDeliveryStatus(id: number, status: string): Promise<void> {
    await this.store.db.updateTable('messages').set({ delivery_status: status }).where('id', '=', id).execute();
  }

  /** A message we sent, found by the provider's id (status callbacks carry only that). */
  async findBySid(sid: string): Promise<Message | undefined> {
    const row = await this.store.db.selectFrom('messages').selectAll().where('provider_sid', '=', sid).orderBy('id', 'desc').limit(1).executeTakeFirst();
    return row && toMessage(row);
  }
}

function toMessage(row: Row): Message {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    role: row.role as MessageRole,
    content: row.content,
    functionCalls: fromJson<StoredFunctionCall[]>(row.function_calls, []),
    providerSid: row.provider_sid,
    deliveryStatus: row.delivery_status,
    createdAt: row.created_at,
  };
}
