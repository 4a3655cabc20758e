import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import { fromJson, toJson } from '../json.ts';
import type { LedgerRepo } from './ledger.ts';

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

type Row = {
  id: number;
  conversation_id: number;
  role: string;
  content: string;
  function_calls: string | null;
  provider_sid: string | null;
  delivery_status: string | null;
  created_at: number;
};

export class MessagesRepo {
  constructor(private readonly store: Store, private readonly clock: Clock, private readonly ledger: LedgerRepo) {}

  /**
   * Stores messages, moves the conversation's clocks, and charges, all or nothing. One IMMEDIATE
   * transaction on the single connection: concurrent requests queue here, so two of them can
   * never both see the same cents as available.
   */
  append(input: AppendInput): { charged: boolean; ids: number[] } {
    const sqlite = this.store.sqlite;
    const now = this.clock.now();
    return sqlite.transaction(() => {
      if (input.charge) {
        const c = input.charge;
        if (!this.ledger.tryCharge(c.accountId, c.micros, c.reason, c.reference)) return { charged: false, ids: [] };
      }
      const insert = sqlite.prepare(
        `INSERT INTO messages (conversation_id, role, content, function_calls, provider_sid, delivery_status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      const ids = input.messages.map((m) =>
        Number(
          insert.run(
            input.conversationId,
            m.role,
            m.content,
            m.functionCalls && m.functionCalls.length > 0 ? toJson(m.functionCalls) : null,
            m.providerSid ?? null,
            m.deliveryStatus ?? null,
            now,
          ).lastInsertRowid,
        ),
      );
      const fromCustomer = input.messages.some((m) => m.role === 'user');
      sqlite
        .prepare(
          `UPDATE conversations SET last_message_at = ?, inactivity_deadline = ?,
             last_customer_message_at = CASE WHEN ? THEN ? ELSE last_customer_message_at END
           WHERE id = ?`,
        )
        .run(now, now + input.inactivityMs, fromCustomer ? 1 : 0, now, input.conversationId);
      return { charged: input.charge !== undefined, ids };
    }).immediate();
  }

  list(conversationId: number): Message[] {
    const rows = this.store.sqlite
      .prepare('SELECT * FROM messages WHERE conversation_id = ? ORDER BY id')
      .all(conversationId) as Row[];
    return rows.map(toMessage);
  }

  get(id: number): Message | undefined {
    const row = this.store.sqlite.prepare('SELECT * FROM messages WHERE id = ?').get(id) as Row | undefined;
    return row && toMessage(row);
  }

  setProviderSid(id: number, sid: string, status: string): void {
    this.store.sqlite.prepare('UPDATE messages SET provider_sid = ?, delivery_status = ? WHERE id = ?').run(sid, status, id);
  }

  setDeliveryStatus(id: number, status: string): void {
    this.store.sqlite.prepare('UPDATE messages SET delivery_status = ? WHERE id = ?').run(status, id);
  }

  /** A message we sent, found by the provider's id (status callbacks carry only that). */
  findBySid(sid: string): Message | undefined {
    const row = this.store.sqlite.prepare('SELECT * FROM messages WHERE provider_sid = ? ORDER BY id DESC LIMIT 1').get(sid) as Row | undefined;
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
