import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, SqliteDriver } from 'kysely';
import type { DatabaseConnection, Driver } from 'kysely';
import type { Database } from './schema.ts';
import { sql as m001 } from './migrations/001-initial.ts';
import { sql as m002 } from './migrations/002-chat.ts';
import { sql as m003 } from './migrations/003-call-heartbeat.ts';
import { sql as m004 } from './migrations/004-trunk-transport.ts';
import { sql as m005 } from './migrations/005-trunk-media-nat.ts';
import { sql as m006 } from './migrations/006-trunk-srtp.ts';
import { sql as m007 } from './migrations/007-webhook-secret-rotation.ts';
import { sql as m008 } from './migrations/008-call-node.ts';
import { sql as m009 } from './migrations/009-conversations-by-account.ts';
import { sql as m010 } from './migrations/010-leases.ts';

/**
 * Ordered SQLite migrations; the index + 1 is the schema version recorded in `PRAGMA user_version`.
 * Each has a PostgreSQL twin of the same number in migrations/pg/.
 */
export const MIGRATIONS: readonly string[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010];

export type StoreDialect = 'sqlite' | 'postgres';

/**
 * An open store, SQLite or PostgreSQL. The repositories see only `db`: code that must word a
 * statement differently per backend reads `dialect` (see src/store/dialect.ts).
 */
export interface Store {
  db: Kysely<Database>;
  dialect: StoreDialect;
  /** Where the engine keeps its files (and, without SWITCHBOARD_SECRET_KEY, the sealing key). */
  dataDir: string;
  close(): Promise<void>;
}

/** The embedded store; `sqlite` is the raw connection, for SQLite-only maintenance (pragmas). */
export interface SqliteStore extends Store {
  dialect: 'sqlite';
  sqlite: SQLite.Database;
}

/** Opens (creating if needed) the SQLite store under `dataDir`, in WAL mode, migrated to the latest. */
export function openStore(dataDir: string): SqliteStore {
  fs.mkdirSync(dataDir, { recursive: true });
  const sqlite = new SQLite(path.join(dataDir, 'switchboard.db'));
  return wrap(sqlite, dataDir);
}

/** An in-memory store for tests. */
export function openMemoryStore(dataDir = ':memory:'): SqliteStore {
  return wrap(new SQLite(':memory:'), dataDir);
}

/**
 * Kysely's SQLite transactions start with a plain BEGIN, which takes the write lock only at the
 * first write: a transaction that reads then writes could then fail with SQLITE_BUSY against
 * another process. BEGIN IMMEDIATE takes it at once (and waits out busy_timeout), as the
 * better-sqlite3 `.immediate()` transactions this store used before did.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly database: SQLite.Database) {
    super({ database });
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.database });
  }
}

function wrap(sqlite: SQLite.Database, dataDir: string): SqliteStore {
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  migrate(sqlite);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(sqlite) });
  let closed = false;
  return {
    db,
    dialect: 'sqlite',
    sqlite,
    dataDir,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy(); // closes the better-sqlite3 handle too
    },
  };
}

export function migrate(sqlite: SQLite.Database): number {
  const current = sqlite.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this build (${MIGRATIONS.length})`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    sqlite.transaction(() => {
      sqlite.exec(MIGRATIONS[v]!);
      sqlite.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
  return MIGRATIONS.length;
}
