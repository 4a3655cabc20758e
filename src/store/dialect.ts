/**
 * The few things SQLite and PostgreSQL word differently, in one place: everything else goes
 * through kysely, which speaks both.
 */
import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from './schema.ts';
import type { Store } from './db.ts';

/** A constraint-unique violation, from either backend. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return (
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === '23505' ||
    /UNIQUE constraint failed|duplicate key value violates unique constraint/.test(e?.message ?? '')
  );
}

/**
 * Runs `fn` in one transaction with a store whose `db` is that transaction; inside a transaction
 * already, in that one. On SQLite it begins IMMEDIATE (the write lock at once); on PostgreSQL it
 * is READ COMMITTED, so code that checks then writes money first takes `lockAccount`.
 */
export async function inTransaction<T>(store: Store, fn: (tx: Store) => Promise<T>): Promise<T> {
  if (store.db.isTransaction) return fn(store);
  return store.db.transaction().execute((trx) => fn({ ...store, db: trx }));
}

/**
 * Serialises money decisions on one account until the transaction ends: a row lock on the
 * account on PostgreSQL (another node charging the same account waits here, then sees the
 * committed charge). A no-op on SQLite, whose IMMEDIATE transaction already holds the one write
 * lock. Must run inside `inTransaction`.
 */
export async function lockAccount(db: Kysely<Database>, dialect: Store['dialect'], accountId: number): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`.execute(db);
}

/**
 * The larger of two values, NULL when either is NULL: SQLite's two-argument max(); on
 * PostgreSQL GREATEST, which would skip a NULL, guarded so both backends agree.
 */
export function greatest(dialect: Store['dialect'], x: RawBuilder<unknown> | number, y: RawBuilder<unknown> | number): RawBuilder<number> {
  // A bare number would be a parameter whose type PostgreSQL cannot infer in `IS NULL`.
  const a = typeof x === 'number' ? sql.lit(x) : x;
  const b = typeof y === 'number' ? sql.lit(y) : y;
  return dialect === 'postgres'
    ? sql<number>`(CASE WHEN ${a} IS NULL OR ${b} IS NULL THEN NULL ELSE GREATEST(${a}, ${b}) END)`
    : sql<number>`max(${a}, ${b})`;
}

/**
 * Serialises transactions that find-or-create by a key (e.g. one WhatsApp customer of one
 * sender) until the transaction ends: a transaction-scoped advisory lock on PostgreSQL, a no-op
 * on SQLite (IMMEDIATE transactions are serial already). Must run inside `inTransaction`.
 */
export async function lockKey(db: Kysely<Database>, dialect: Store['dialect'], key: string): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`.execute(db);
}

/**
 * A text field inside a JSON text column (`path` like ['post_call', 'finished_at']), NULL when absent.
 * PostgreSQL's JSON parser (json and jsonb alike) refuses the escape `\u0000` anywhere in the
 * document (a NUL character in some string, e.g. a transcript), which would fail the whole query
 * over one such row; the text is read with every `\u0000` turned into `\ufffd` (U+FFFD), which
 * keeps the document valid JSON whatever precedes the backslash. Only a value that itself holds
 * that escape reads differently, never the ids and timestamps looked up here.
 */
export function jsonField(dialect: Store['dialect'], column: string, path: readonly string[]): RawBuilder<unknown> {
  return dialect === 'postgres'
    ? sql`(replace(${sql.ref(column)}, ${'\\u0000'}, ${'\\ufffd'})::jsonb #>> ${`{${path.join(',')}}`})`
    : sql`json_extract(${sql.ref(column)}, ${`$.${path.join('.')}`})`;
}
