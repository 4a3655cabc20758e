/**
 * The composition root's one opener: PostgreSQL when SWITCHBOARD_DATABASE_URL is set, else the
 * embedded SQLite store in the data directory (unchanged default). The sealing key comes with it:
 * SWITCHBOARD_SECRET_KEY when set, else the data directory's own key file.
 */
import type { Config } from '../config.ts';
import { openStore, type Store } from './db.ts';
import { openPostgresStore } from './postgres.ts';
import { SecretBox } from './secrets.ts';

export interface OpenedStore {
  store: Store;
  secrets: SecretBox;
}

export async function openConfiguredStore(config: Pick<Config, 'dataDir' | 'databaseUrl' | 'secretKey'>): Promise<OpenedStore> {
  if (config.databaseUrl !== undefined && config.secretKey === undefined) {
    // loadConfig refuses this already; a hand-built config must not fall back to a per-node key.
    throw new Error('SWITCHBOARD_SECRET_KEY is required with SWITCHBOARD_DATABASE_URL (every node must share the sealing key)');
  }
  const secrets = config.secretKey ? new SecretBox(config.secretKey) : SecretBox.forDataDir(config.dataDir);
  const store = config.databaseUrl !== undefined ? await openPostgresStore(config.databaseUrl, config.dataDir) : openStore(config.dataDir);
  return { store, secrets };
}
