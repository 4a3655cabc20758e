import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/db.ts';
import { hashKey } from '../../../src/store/repos/accounts.ts';

const exec = promisify(execFile);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-cli-'));
const bin = path.resolve('bin/switchboard.js');

async function cli(...args: string[]): Promise<{ code: number; out: any; err: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, ...args], {
      env: { ...process.env, SWITCHBOARD_DATA_DIR: dataDir },
    });
    return { code: 0, out: JSON.parse(stdout), err: stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout, err: err.stderr };
  }
}

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('switchboard CLI', { timeout: 90_000 }, () => {
  it('creates an account with a key shown once and stored only as a hash', async () => {
    const res = await cli('accounts', 'create', '--name', 'Acme', '--balance', '25.10');
    expect(res.code).toBe(0);
    expect(res.out.account_id).toBeTypeOf('number');
    expect(res.out.api_key).toMatch(/^sb_live_[A-Za-z0-9_-]{43}$/);
    const store = openStore(dataDir);
    const rows = store.sqlite.prepare('SELECT hash, prefix FROM api_keys').all() as { hash: string; prefix: string }[];
    await store.close();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hash).toBe(hashKey(res.out.api_key));
    expect(JSON.stringify(rows)).not.toContain(res.out.api_key);
    const balance = await cli('accounts', 'balance', '--account', String(res.out.account_id));
    expect(balance.out).toEqual({ account_id: res.out.account_id, balance: 25.1 });
  });

  it('sets and adds balance exactly', async () => {
    const { out } = await cli('accounts', 'create', '--name', 'Beta');
    const id = String(out.account_id);
    expect((await cli('accounts', 'balance', '--account', id, '--set', '10')).out.balance).toBe(10);
    expect((await cli('accounts', 'balance', '--account', id, '--add', '0.01')).out.balance).toBe(10.01);
    expect((await cli('accounts', 'balance', '--account', id, '--set', '0.3')).out.balance).toBe(0.3);
    const store = openStore(dataDir);
    const rows = store.sqlite.prepare('SELECT reason, reference FROM ledger WHERE account_id = ?').all(Number(id));
    await store.close();
    expect(rows).toHaveLength(3);
    for (const row of rows as { reason: string; reference: string }[]) expect(row.reference).toBe('operator:cli');
  });

  it('creates and revokes keys', async () => {
    const { out } = await cli('accounts', 'create', '--name', 'Gamma');
    const key = await cli('keys', 'create', '--account', String(out.account_id));
    expect(key.code).toBe(0);
    expect(key.out.api_key).not.toBe(out.api_key);
    expect((await cli('keys', 'revoke', '--key', key.out.api_key)).out).toEqual({ revoked: true });
    const again = await cli('keys', 'revoke', '--key', key.out.api_key);
    expect(again.code).not.toBe(0);
    expect(again.err).toContain('no active key');
  });

  it('fails clearly on bad input', async () => {
    const cases: string[][] = [
      ['accounts', 'create'],
      ['accounts', 'create', '--name', 'X', '--balance', 'lots'],
      ['accounts', 'balance', '--account', 'abc'],
      ['accounts', 'balance', '--account', '9999'],
      ['keys', 'create', '--account', '9999'],
      ['nonsense'],
      ['accounts', 'create', '--name', 'X', '--bogus'],
    ];
    for (const args of cases) {
      const res = await cli(...args);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.err, args.join(' ')).toMatch(/^switchboard: /);
    }
  });

  it('names the bad environment variable', async () => {
    try {
      await exec(process.execPath, [bin, 'accounts', 'create', '--name', 'X'], {
        env: { ...process.env, SWITCHBOARD_DATA_DIR: dataDir, LOG_LEVEL: 'shouty' },
      });
      expect.unreachable();
    } catch (e) {
      expect((e as { stderr: string }).stderr).toContain('LOG_LEVEL');
    }
  });
});
