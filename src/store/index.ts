import type { Store } from './db.ts';
import type { Clock } from '../util/clock.ts';
import { AccountsRepo } from './repos/accounts.ts';
import { LedgerRepo } from './repos/ledger.ts';

/** Every repository, built once per store. A PostgreSQL backend would provide the same shapes. */
export function createRepos(store: Store, clock: Clock) {
  return {
    accounts: new AccountsRepo(store, clock),
    ledger: new LedgerRepo(store, clock),
  };
}

export type Repos = ReturnType<typeof createRepos>;
export type { Store } from './db.ts';
