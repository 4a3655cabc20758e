import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { openConfiguredStore } from '../../../src/store/open-store.ts';
import { SecretBox } from '../../../src/store/secrets.ts';
import { testTempDir } from '../../support/temp-dir.ts';

const KEY = crypto.randomBytes(32).toString('base64');
const URL_WITH_PASSWORD = 'postgres://sb:hunter2-password@127.0.0.1:5432/switchboard';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('SWITCHBOARD_DATABASE_URL and SWITCHBOARD_SECRET_KEY', () => {
  it('unset: the embedded SQLite store and the data directory key, as before', () => {
    const c = loadConfig({});
    expect(c.databaseUrl).toBeUndefined();
    expect(c.secretKey).toBeUndefined();
  });

  it('a PostgreSQL URL without a key refuses to start, naming the variable and never the password', () => {
    const msg = configError({ SWITCHBOARD_DATABASE_URL: URL_WITH_PASSWORD });
    expect(msg).toContain('SWITCHBOARD_SECRET_KEY');
    expect(msg).toMatch(/required with SWITCHBOARD_DATABASE_URL/);
    expect(msg).not.toContain('hunter2');
  });

  it('a URL of another scheme, or no URL at all, is refused without echoing it', () => {
    for (const bad of ['mysql://u:hunter2-password@h/db', 'not a url hunter2-password']) {
      const msg = configError({ SWITCHBOARD_DATABASE_URL: bad, SWITCHBOARD_SECRET_KEY: KEY });
      expect(msg).toContain('SWITCHBOARD_DATABASE_URL: must be a postgres:// or postgresql:// URL');
      expect(msg).not.toContain('hunter2');
    }
  });

  it('a key that is not 32 bytes of base64 is refused without echoing it', () => {
    for (const bad of [crypto.randomBytes(16).toString('base64'), 'not-base64!!', `${KEY}AAAA`]) {
      const msg = configError({ SWITCHBOARD_SECRET_KEY: bad });
      expect(msg).toContain('SWITCHBOARD_SECRET_KEY: must be 32 bytes in base64');
      expect(msg).not.toContain(bad);
    }
  });

  it('both set: PostgreSQL with the shared key', () => {
    const c = loadConfig({ SWITCHBOARD_DATABASE_URL: URL_WITH_PASSWORD, SWITCHBOARD_SECRET_KEY: KEY });
    expect(c.databaseUrl).toBe(URL_WITH_PASSWORD);
    expect(c.secretKey?.equals(Buffer.from(KEY, 'base64'))).toBe(true);
  });

  describe('openConfiguredStore', () => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });

    it('seals with SWITCHBOARD_SECRET_KEY when set, and writes no key file', async () => {
      const dir = testTempDir('sb-key-');
      const config = loadConfig({ SWITCHBOARD_DATA_DIR: dir, SWITCHBOARD_SECRET_KEY: KEY });
      const { store, secrets } = await openConfiguredStore(config);
      close = () => store.close();
      expect(store.dialect).toBe('sqlite');
      // Another node holding the same key reads what this one sealed.
      expect(new SecretBox(Buffer.from(KEY, 'base64')).open(secrets.seal('shared'))).toBe('shared');
      expect(fs.existsSync(path.join(dir, 'secret.key'))).toBe(false);
    });

    it('without a key keeps the data directory key file', async () => {
      const dir = testTempDir('sb-key-');
      const { store, secrets } = await openConfiguredStore(loadConfig({ SWITCHBOARD_DATA_DIR: dir }));
      close = () => store.close();
      expect(SecretBox.forDataDir(dir).open(secrets.seal('local'))).toBe('local');
      expect(fs.existsSync(path.join(dir, 'switchboard.db'))).toBe(true);
    });

    it('refuses a hand-built PostgreSQL config without a key', async () => {
      await expect(openConfiguredStore({ dataDir: '/nonexistent', databaseUrl: URL_WITH_PASSWORD })).rejects.toThrow(/SWITCHBOARD_SECRET_KEY is required/);
    });
  });
});
