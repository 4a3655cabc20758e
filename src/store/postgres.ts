/**
 * The PostgreSQL store (SWITCHBOARD_DATABASE_URL=postgres://...): the same repositories over
 * kysely's PostgresDialect. Several engine nodes may share one database; migrations run under an
 * advisory lock so nodes starting together migrate once, and record their versions in
 * `schema_migrations`.
 */
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from './schema.ts';
import type { Store } from './db.ts';
import { PG_MIGRATIONS } from './migrations/pg/index.ts';

/** Any constant shared by every node: the advisory lock the migrator holds ("SWMIGRAT"). */
const MIGRATION_LOCK_KEY = 0x53574d49_47524154n;

/**
 * BIGINT arrives from PostgreSQL as a string by default; every BIGINT here is an id, epoch-ms
 * timestamp, count or micro-dollar amount, all far inside 2^53, so it is read as a number like
 * SQLite's INTEGER. A value past 2^53 throws rather than silently losing precision.
 */
function parseBigint(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`BIGINT ${text} is past the exact range of a JS number`);
  return n;
}

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 && format !== 'binary') return parseBigint;
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as unknown as pg.CustomTypesConfig;

export interface PostgresStoreOptions {
  /** Pool size per node (default 10). */
  maxConnections?: number;
}

export interface PostgresStore extends Store {
  dialect: 'postgres';
  pool: pg.Pool;
}

/** Connects, migrates to the latest schema (once across nodes), and returns the store. */
export async function openPostgresStore(url: string, dataDir: string, opts: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const pool = new pg.Pool({ connectionString: url, max: opts.maxConnections ?? 10, types });
  // An idle client's error (the server restarting) must not crash the process: the pool drops it.
  pool.on('error', () => {});
  try {
    await migratePostgres(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closed = false;
  return {
    db,
    dialect: 'postgres',
    pool,
    dataDir,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy(); // ends the pool
    },
  };
}

/** Applies the missing migrations, each in its own transaction, under the migration lock. */
export async function migratePostgres(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
      );
      const res = await client.query<{ v: number }>('SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_migrations');
      const current = res.rows[0]?.v ?? 0;
      if (current > PG_MIGRATIONS.length) {
        throw new Error(`database schema version ${current} is newer than this build (${PG_MIGRATIONS.length})`);
      }
      for (let v = current; v < PG_MIGRATIONS.length; v++) {
        await client.query('BEGIN');
        try {
          await client.query(PG_MIGRATIONS[v]!);
          await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [v + 1, Date.now()]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`PostgreSQL migration ${v + 1} failed: ${(err as Error).message}`);
        }
      }
      return PG_MIGRATIONS.length;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]);
    }
  } finally {
    client.release();
  }
}
