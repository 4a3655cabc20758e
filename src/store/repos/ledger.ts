import { sql } from 'kysely';
import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import { inTransaction, lockAccount } from '../dialect.ts';

/**
 * The billing ledger: every top-up and charge is a row; the balance is their sum. A charge is
 * one conditional INSERT inside a transaction that first locks the account (PostgreSQL; SQLite's
 * IMMEDIATE transaction holds the single write lock), so two concurrent charges can never spend
 * the same cents twice, even across processes or nodes sharing the database.
 */
export class LedgerRepo {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  async balance(accountId: number): Promise<number> {
    const row = await sql<{ balance: number }>`
      SELECT CAST(COALESCE(SUM(amount_micros), 0) AS BIGINT) AS balance FROM ledger WHERE account_id = ${accountId}`.execute(
      this.store.db,
    );
    return Number(row.rows[0]?.balance ?? 0);
  }

  /** Adds (or with a negative amount, removes) money unconditionally: top-ups and corrections. */
  async adjust(accountId: number, amountMicros: number, reason: string, reference: string | null = null): Promise<void> {
    await this.store.db
      .insertInto('ledger')
      .values({ account_id: accountId, amount_micros: amountMicros, reason, reference, created_at: this.clock.now() })
      .execute();
  }

  /** Sets the balance to an exact amount by booking the difference. */
  async setBalance(accountId: number, targetMicros: number, reason = 'balance set', reference: string | null = null): Promise<void> {
    await inTransaction(this.store, async (tx) => {
      await lockAccount(tx.db, tx.dialect, accountId);
      const inTx = new LedgerRepo(tx, this.clock);
      const diff = targetMicros - (await inTx.balance(accountId));
      if (diff !== 0) await inTx.adjust(accountId, diff, reason, reference);
    });
  }

  /** Charges `amountMicros` if the balance covers it; returns false (and books nothing) otherwise. */
  async tryCharge(accountId: number, amountMicros: number, reason: string, reference: string | null = null): Promise<boolean> {
    return inTransaction(this.store, async (tx) => {
      await lockAccount(tx.db, tx.dialect, accountId);
      const res = await sql`
        INSERT INTO ledger (account_id, amount_micros, reason, reference, created_at)
        SELECT CAST(${accountId} AS BIGINT), CAST(${-amountMicros} AS BIGINT), CAST(${reason} AS TEXT), CAST(${reference} AS TEXT), CAST(${this.clock.now()} AS BIGINT)
        WHERE (SELECT COALESCE(SUM(amount_micros), 0) FROM ledger WHERE account_id = ${accountId}) >= ${amountMicros}`.execute(tx.db);
      return Number(res.numAffectedRows ?? 0) === 1;
    });
  }

  /** Whether the balance is at least `amountMicros` (a check, not a reservation). */
  async covers(accountId: number, amountMicros: number): Promise<boolean> {
    return (await this.balance(accountId)) >= amountMicros;
  }
}
