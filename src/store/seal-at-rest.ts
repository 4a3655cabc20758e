/**
 * Start-up sealing of secrets an older build stored in clear (custom tool headers, webhook
 * signing secrets). Sealing a row is not enough on its own: the page the plaintext sat in stays
 * in the main database file until a checkpoint writes the new page over it, and bytes a rewritten
 * cell leaves behind may stay in the page's free space. So the rewrite runs with `secure_delete`
 * (freed space is zeroed) and, when anything was sealed, a `wal_checkpoint(TRUNCATE)` writes the
 * sealed pages into the database file and empties the -wal file.
 */
import type { Logger } from 'pino';
import type { SqliteStore, Store } from './db.ts';
import type { Repos } from './index.ts';

/** Seals what is still in clear; returns how many rows it sealed. */
export async function sealSecretsAtRest(store: Store, repos: Repos, logger: Logger): Promise<number> {
  if (store.dialect !== 'sqlite') return sealRows(repos, logger);
  return sealSqlite(store as SqliteStore, repos, logger);
}

/**
 * PostgreSQL rewrites a row as a new tuple; the old one is reclaimed by (auto)vacuum, which the
 * operator's database runs. A fresh PostgreSQL store never held a plain secret anyway: only
 * SQLite databases of older builds did.
 */
async function sealRows(repos: Repos, logger: Logger): Promise<number> {
  const headers = await repos.tools.sealPlainHeaders();
  if (headers > 0) logger.info({ sealed: headers }, 'custom tool headers sealed at rest');
  const secrets = await repos.accounts.sealPlainWebhookSecrets();
  if (secrets > 0) logger.info({ sealed: secrets }, 'webhook signing secrets sealed at rest');
  return headers + secrets;
}

async function sealSqlite(store: SqliteStore, repos: Repos, logger: Logger): Promise<number> {
  const before = store.sqlite.pragma('secure_delete', { simple: true }) as number;
  store.sqlite.pragma('secure_delete = ON');
  let sealed = 0;
  try {
    sealed = await sealRows(repos, logger);
  } finally {
    store.sqlite.pragma(`secure_delete = ${before ? 'ON' : 'OFF'}`);
  }
  if (sealed > 0) store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  return sealed;
}
