import { sql, type ExpressionBuilder } from 'kysely';
import type { Store } from '../db.ts';
import { jsonField } from '../dialect.ts';
import type { Database } from '../schema.ts';
import type { Clock } from '../../util/clock.ts';

export interface OutboxRow {
  id: number;
  accountId: number;
  eventType: string;
  url: string;
  /** The exact body to send: stored serialized so every retry signs the same bytes. */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  deliveredAt: number | null;
  /** The node making the current attempt, and until when (docs/WORK-ONCE.md). */
  leaseHolder: string | null;
  leaseExpiresAt: number | null;
}

/** Rows that may be claimed at `now`: pending, due, and not under a live lease. */
const claimable = (now: number) => (eb: ExpressionBuilder<Database, 'webhook_outbox'>) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]);

/** Persisted webhook events: written with the change that caused them, delivered by a worker. */
export class OutboxRepo {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  /**
   * Stores one event. Given a store bound to a transaction (src/store/dialect.ts inTransaction),
   * it is written with the change that caused it: both are stored, or neither.
   */
  async enqueue(accountId: number, eventType: string, url: string, payload: string): Promise<number> {
    const now = this.clock.now();
    const row = await this.store.db
      .insertInto('webhook_outbox')
      .values({ account_id: accountId, event_type: eventType, url, payload, status: 'pending', attempts: 0, next_attempt_at: now, last_error: null, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Rows not yet delivered nor given up (read at /metrics scrape: one indexed count). */
  async pendingCount(): Promise<number> {
    const row = await this.store.db
      .selectFrom('webhook_outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async due(now: number, limit = 20): Promise<OutboxRow[]> {
    const rows = await this.store.db
      .selectFrom('webhook_outbox')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toRow);
  }

  /** When the next pending row falls due, for scheduling the worker's wake-up. */
  async nextDueAt(): Promise<number | undefined> {
    const row = await this.store.db
      .selectFrom('webhook_outbox')
      .select((eb) => eb.fn.min<number>('next_attempt_at').as('at'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return row?.at ?? undefined;
  }

  async get(id: number): Promise<OutboxRow | undefined> {
    const row = await this.store.db.selectFrom('webhook_outbox').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRow(row);
  }

  async list(accountId: number): Promise<OutboxRow[]> {
    const rows = await this.store.db.selectFrom('webhook_outbox').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    return rows.map(toRow);
  }

  /** The events about one call (their payload's `data.call.uuid`), oldest first, at most 100. */
  async listForCall(accountId: number, callUuid: string): Promise<OutboxRow[]> {
    const rows = await this.store.db
      .selectFrom('webhook_outbox')
      .selectAll()
      .where('account_id', '=', accountId)
      .where(jsonField(this.store.dialect, 'payload', ['data', 'call', 'uuid']), '=', callUuid)
      .orderBy('id')
      .limit(100)
      .execute();
    return rows.map(toRow);
  }

  /**
   * Claims due rows one by one for `holder` until `now + ttlMs`, each in one conditional UPDATE
   * ... RETURNING (SQLite and PostgreSQL alike): of two nodes racing for a row one wins. The claim
   * counts the attempt (`attempts` + 1): the returned rows carry the number of the attempt to
   * make, so a node that dies mid-attempt has used it, and the next node makes the next one.
   */
  async claimDue(holder: string, now: number, ttlMs: number, limit = 20): Promise<OutboxRow[]> {
    const candidates = await this.store.db
      .selectFrom('webhook_outbox')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where(claimable(now))
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    const claimed: OutboxRow[] = [];
    for (const { id } of candidates) {
      const row = await this.store.db
        .updateTable('webhook_outbox')
        .set({ lease_holder: holder, lease_expires_at: now + ttlMs, attempts: sql<number>`attempts + 1` })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where(claimable(now))
        .returningAll()
        .executeTakeFirst();
      if (row) claimed.push(toRow(row));
    }
    return claimed;
  }

  /** Delivered is a fact whoever learnt it: only a row no longer pending is left alone. */
  async markDelivered(id: number, attempts: number): Promise<void> {
    await this.store.db
      .updateTable('webhook_outbox')
      .set({ status: 'delivered', attempts, delivered_at: this.clock.now(), last_error: null, lease_holder: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .execute();
  }

  /** Only the holder of this very attempt may schedule the next one (a late node changes nothing). */
  async markRetry(id: number, attempts: number, nextAttemptAt: number, error: string, holder?: string): Promise<void> {
    let q = this.store.db
      .updateTable('webhook_outbox')
      .set({ attempts, next_attempt_at: nextAttemptAt, last_error: error.slice(0, 500), lease_holder: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('status', '=', 'pending');
    if (holder !== undefined) q = q.where('lease_holder', '=', holder).where('attempts', '=', attempts);
    await q.execute();
  }

  async markFailed(id: number, attempts: number, error: string, holder?: string): Promise<void> {
    let q = this.store.db
      .updateTable('webhook_outbox')
      .set({ status: 'failed', attempts, last_error: error.slice(0, 500), lease_holder: null, lease_expires_at: null })
      .where('id', '=', id)
      .where('status', '=', 'pending');
    if (holder !== undefined) q = q.where('lease_holder', '=', holder).where('attempts', '=', attempts);
    await q.execute();
  }
}

function toRow(r: {
  id: number;
  account_id: number;
  event_type: string;
  url: string;
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
  lease_holder: string | null;
  lease_expires_at: number | null;
}): OutboxRow {
  return {
    id: r.id,
    accountId: r.account_id,
    eventType: r.event_type,
    url: r.url,
    payload: r.payload,
    status: r.status as OutboxRow['status'],
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastError: r.last_error,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
    leaseHolder: r.lease_holder,
    leaseExpiresAt: r.lease_expires_at,
  };
}
