/**
 * One database seen by two "nodes", each through its own connection: two connections to one
 * SQLite file (WAL) in a temp dir, or two pools to one fresh database on the run's PostgreSQL
 * test server (test/support/postgres.ts), dropped again on close.
 */
import { openStore, type Store } from '../../src/store/db.ts';
import { openPostgresStore } from '../../src/store/postgres.ts';
import type { StoreBackend } from './postgres.ts';
import { openTestStore } from './test-store.ts';
import { testTempDir } from './temp-dir.ts';

export interface TwoNodeStore {
  a: Store;
  b: Store;
  close(): Promise<void>;
}

/** Call from inside a test (the SQLite directory is removed when the test finishes). */
export async function openTwoNodeStore(backend: StoreBackend, prefix = 'two-nodes'): Promise<TwoNodeStore> {
  if (backend === 'sqlite') {
    const dir = testTempDir(prefix);
    const a = openStore(dir);
    const b = openStore(dir);
    return {
      a,
      b,
      async close() {
        await a.close();
        await b.close();
      },
    };
  }
  const first = await openTestStore('postgres', { maxConnections: 5 });
  const b = await openPostgresStore(first.url!, ':memory:', { maxConnections: 5 });
  return {
    a: first.store,
    b,
    async close() {
      await b.close();
      await first.close();
    },
  };
}
