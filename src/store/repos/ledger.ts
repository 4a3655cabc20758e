import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';

/**
 * The billing ledger: every top-up and charge is a row; the balance is their sum. A charge is
 * one conditional INSERT, so two concurrent charges can never spend the same cents twice, even
 * across processes sharing the database.
 */
export class LedgerRepo {
  private readonly chargeStmt;
  private readonly balanceStmt;

  constructor(private readonly store: Store, private readonly clock: Clock) {
    this.chargeStmt = store.sqlite.prepare(
      `INSERT INTO ledger (account_id, amount_micros, reason, reference, created_at)
       SELECT @account, -@amount, @reason, @reference, @now
       WHERE (SELECT COALESCE(SUM(amount_micros), 0) FROM ledger WHERE account_id = @account) >= @amount`,
    );
    this.balanceStmt = store.sqlite.prepare(
      'SELECT COALESCE(SUM(amount_micros), 0) AS balance FROM ledger WHERE account_id = ?',
    );
  }

  balance(accountId: number): number {
    return (this.balanceStmt.get(accountId) as { balance: number }).balance;
  }

  /** Adds (or with a negative amount, removes) money unconditionally: top-ups and corrections. */
  adjust(accountId: number, amountMicros: number, reason: string, reference: string | null = null): void {
    this.store.sqlite
      .prepare('INSERT INTO ledger (account_id, amount_micros, reason, reference, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(accountId, amountMicros, reason, reference, this.clock.now());
  }

  /** Sets the balance to an exact amount by booking the difference. */
  setBalance(accountId: number, targetMicros: number, reason = 'balance set', reference: string | null = null): void {
    this.store.sqlite.transaction(() => {
      const diff = targetMicros - this.balance(accountId);
      if (diff !== 0) this.adjust(accountId, diff, reason, reference);
    }).immediate();
  }

  /** Charges `amountMicros` if the balance covers it; returns false (and books nothing) otherwise. */
  tryCharge(accountId: number, amountMicros: number, reason: string, reference: string | null = null): boolean {
    const res = this.chargeStmt.run({
      account: accountId,
      amount: amountMicros,
      reason,
      reference,
      now: this.clock.now(),
    });
    return res.changes === 1;
  }

  /** Whether the balance is at least `amountMicros` (a check, not a reservation). */
  covers(accountId: number, amountMicros: number): boolean {
    return this.balance(accountId) >= amountMicros;
  }
}
