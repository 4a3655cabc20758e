/**
 * A fresh store of either backend for a test: SQLite in memory, or a new database on the run's
 * PostgreSQL test server (test/support/postgres.ts), dropped again on close.
 */
import { openMemoryStore, type Store } from '../../src/store/db.ts';
import { openPostgresStore } from '../../src/store/postgres.ts';
import { createTestDatabase, dropTestDatabase, type StoreBackend } from './postgres.ts';

export interface TestStore {
  store: Store;
  /** The PostgreSQL URL of the test database (postgres only): for a second node's store. */
  url?: string;
  close(): Promise<void>;
}

export async function openTestStore(backend: StoreBackend, opts: { maxConnections?: number } = {}): Promise<TestStore> {
  if (backend === 'sqlite') {
    const store = openMemoryStore();
    return { store, close: () => store.close() };
  }
  const url = await createTestDatabase();
  const store = await openPostgresStore(url, ':memory:', opts);
  return {
    store,
    url,
    async close() {
      await store.close();
      await dropTestDatabase(url);
    },
  };
}
