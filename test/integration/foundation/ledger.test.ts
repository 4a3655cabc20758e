import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../../src/store/db.ts';
import { createRepos } from '../../../src/store/index.ts';
import { ManualClock } from '../../../src/util/clock.ts';

describe('billing ledger', () => {
  it('never lets charges take the balance below zero', async () => {
    const store = openMemoryStore();
    const repos = createRepos(store, new ManualClock());
    const { id } = await repos.accounts.create('A');
    await repos.ledger.adjust(id, 35_000, 'top-up'); // 3.5 cents
    const results = await Promise.all(
      Array.from({ length: 10 }, async () => await repos.ledger.tryCharge(id, 10_000, 'widget message')),
    );
    expect(results.filter(Boolean)).toHaveLength(3);
    expect(await repos.ledger.balance(id)).toBe(5_000);
    await store.close();
  });

  it('sets an exact balance by booking the difference', async () => {
    const store = openMemoryStore();
    const repos = createRepos(store, new ManualClock());
    const { id } = await repos.accounts.create('A');
    await repos.ledger.adjust(id, 1_234_567, 'top-up');
    await repos.ledger.setBalance(id, 500_000);
    expect(await repos.ledger.balance(id)).toBe(500_000);
    const rows = store.sqlite.prepare('SELECT amount_micros FROM ledger WHERE account_id = ?').all(id);
    expect(rows).toEqual([{ amount_micros: 1_234_567 }, { amount_micros: -734_567 }]);
    await store.close();
  });
});
