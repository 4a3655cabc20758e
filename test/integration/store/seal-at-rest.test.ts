/**
 * A webhook secret and tool headers an older build stored in clear: after the start-up sealing
 * step (what startEngine runs) the plaintext is in no file of the data directory, neither the
 * database file nor its -wal, while the store stays open as the engine keeps it. Real files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/db.ts';
import { createRepos } from '../../../src/store/index.ts';
import { sealSecretsAtRest } from '../../../src/store/seal-at-rest.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { createLogger } from '../../../src/util/logger.ts';

const PLAIN_SECRET = 'whsec_PLAINTEXTsecretFROMANOLDERBUILD0123';
const PLAIN_TOKEN = 'Bearer PLAINTEXTtoolTOKENfromOLDbuild4567';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length > 0) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
});

/** Every file of the data directory that holds `needle`, by name. */
function filesHolding(dir: string, needle: string): string[] {
  return fs.readdirSync(dir).filter((f) => fs.readFileSync(path.join(dir, f)).includes(Buffer.from(needle)));
}

describe('start-up sealing of secrets stored in clear', () => {
  it('leaves the plaintext in no file of the data dir (database, -wal)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-seal-'));
    dirs.push(dir);
    // An older build's data: plaintext columns, checkpointed into the database file on close.
    const old = openStore(dir);
    const oldRepos = createRepos(old, new ManualClock());
    const account = await oldRepos.accounts.create('Old');
    old.sqlite.prepare('UPDATE accounts SET webhook_secret = ? WHERE id = ?').run(PLAIN_SECRET, account.id);
    old.sqlite
      .prepare("INSERT INTO tools (account_id, name, description, parameters, endpoint, method, headers, timeout_ms, created_at, updated_at) VALUES (?, 't', 'd', '{}', 'https://example.test', 'POST', ?, 5000, 0, 0)")
      .run(account.id, JSON.stringify({ Authorization: PLAIN_TOKEN }));
    await old.close();
    expect(filesHolding(dir, PLAIN_SECRET)).toEqual(['switchboard.db']);

    const store = openStore(dir);
    try {
      const repos = createRepos(store, new ManualClock());
      const logs: string[] = [];
      const logger = createLogger('info', new Writable({ write: (c: Buffer, _e, done) => (logs.push(c.toString()), done()) }));
      expect(await sealSecretsAtRest(store, repos, logger)).toBe(2);
      expect(await repos.accounts.signingSecrets(account.id)).toEqual([PLAIN_SECRET]);
      for (const needle of [PLAIN_SECRET, PLAIN_TOKEN]) expect(filesHolding(dir, needle), needle).toEqual([]);
      for (const line of logs) expect(line).not.toContain('PLAINTEXT');
    } finally {
      await store.close();
    }
  });
});
