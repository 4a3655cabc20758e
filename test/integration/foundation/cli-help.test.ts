import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/db.ts';
import { verify, signedHeaders } from '../../../src/webhooks/signing.ts';

/**
 * The `switchboard` command as an operator runs it, in a child process: help for every command,
 * the data directory named on stderr with a warning when a new store is created there,
 * `accounts list`, and `webhooks secret` (read and rotate).
 */
const exec = promisify(execFile);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-cli-help-'));
const bin = path.resolve('bin/switchboard.js');

async function cli(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, ...args], { env: { ...process.env, SWITCHBOARD_DATA_DIR: dataDir } });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const COMMANDS = ['accounts create', 'accounts list', 'accounts balance', 'keys create', 'keys revoke', 'webhooks secret', 'serve', 'replay'];

describe('switchboard help', { timeout: 180_000 }, () => {
  it('`help`, `--help` and `-h` print every command on stdout and exit 0, touching no store', async () => {
    const dir = path.join(root, 'untouched');
    for (const args of [['help'], ['--help'], ['-h']]) {
      const res = await cli(dir, ...args);
      expect(res.code, args.join(' ')).toBe(0);
      for (const c of COMMANDS) expect(res.stdout, `${args.join(' ')} lists ${c}`).toContain(`switchboard ${c}`);
    }
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('each command has its own --help, -h and `help COMMAND`, naming its options', async () => {
    const dir = path.join(root, 'untouched');
    const options: Record<string, string[]> = {
      'accounts create': ['--name', '--balance'],
      'accounts balance': ['--account', '--set', '--add'],
      'keys create': ['--account'],
      'keys revoke': ['--key'],
      'webhooks secret': ['--account', '--rotate', '--overlap-hours', '--force'],
      replay: ['--assistant', '--caller', '--tape', '--stand-ins'],
    };
    // Every command in process (cheap), each of the three spellings as a child process for some.
    const { run, HelpText } = await import('../../../src/cli/commands.ts');
    for (const c of COMMANDS) {
      const words = c.split(' ');
      for (const args of [[...words, '--help'], [...words, '-h'], ['help', ...words]]) {
        const out = await run(args, { note: () => {} });
        expect(out, args.join(' ')).toBeInstanceOf(HelpText);
        const text = (out as InstanceType<typeof HelpText>).text;
        expect(text, args.join(' ')).toMatch(new RegExp(`^usage: switchboard ${c}`));
        expect(text).toContain('output:');
        for (const o of options[c] ?? []) expect(text, `${c} documents ${o}`).toContain(o);
      }
    }
    const spots = [['webhooks', 'secret', '--help'], ['accounts', 'list', '-h'], ['help', 'keys', 'revoke'], ['serve', '--help']];
    for (const args of spots) {
      const res = await cli(dir, ...args);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout, args.join(' ')).toMatch(/^usage: switchboard /);
    }
    // --help wins over missing required options and starts nothing (serve would not return).
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('an unknown command or option is a usage error (exit 2) with the summary on stderr', async () => {
    const dir = path.join(root, 'untouched');
    for (const args of [[], ['help', 'nonsense'], ['accounts', 'list', '--name', 'x'], ['accounts', 'list', '--bogus']]) {
      const res = await cli(dir, ...args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr, args.join(' ')).toMatch(/^switchboard: /);
      expect(res.stderr).toContain('usage:');
    }
  });
});

describe('switchboard data directory notes', { timeout: 180_000 }, () => {
  it('names the data directory on stderr for every store command and warns only when it creates a new store', async () => {
    const dir = path.join(root, 'fresh');
    const first = await cli(dir, 'accounts', 'list');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ accounts: [] });
    expect(first.stderr).toContain(`switchboard: data directory ${dir}`);
    expect(first.stderr).toMatch(/warning: no store in .*; a new, empty one is created there/);
    expect(fs.existsSync(path.join(dir, 'switchboard.db'))).toBe(true);

    const created = await cli(dir, 'accounts', 'create', '--name', 'Acme', '--balance', '5');
    expect(created.code).toBe(0);
    const id = String(JSON.parse(created.stdout).account_id);
    const runs = [
      ['accounts', 'list'],
      ['accounts', 'balance', '--account', id],
      ['keys', 'create', '--account', id],
      ['webhooks', 'secret', '--account', id],
    ];
    for (const args of [['accounts', 'create', '--name', 'Beta'], ...runs]) {
      const res = await cli(dir, ...args);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stderr, args.join(' ')).toBe(`switchboard: data directory ${dir}\n`);
    }
    expect(created.stderr).toBe(`switchboard: data directory ${dir}\n`);
  });

  it('a failing store command still names its data directory', async () => {
    const dir = path.join(root, 'fresh');
    const res = await cli(dir, 'keys', 'create', '--account', '9999');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`switchboard: data directory ${dir}`);
    expect(res.stderr).toContain('account 9999 not found');
  });
});

describe('switchboard accounts list and webhooks secret', { timeout: 180_000 }, () => {
  it('lists accounts with balance and active keys, never a key or secret', async () => {
    const dir = path.join(root, 'list');
    const a = JSON.parse((await cli(dir, 'accounts', 'create', '--name', 'Acme', '--balance', '12.5')).stdout);
    const b = JSON.parse((await cli(dir, 'accounts', 'create', '--name', 'Beta')).stdout);
    const extra = JSON.parse((await cli(dir, 'keys', 'create', '--account', String(b.account_id))).stdout);
    await cli(dir, 'keys', 'revoke', '--key', b.api_key);
    const res = await cli(dir, 'accounts', 'list');
    const out = JSON.parse(res.stdout);
    expect(out.accounts).toEqual([
      { account_id: a.account_id, name: 'Acme', balance: 12.5, active_keys: 1, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      { account_id: b.account_id, name: 'Beta', balance: 0, active_keys: 1, created_at: expect.any(String) },
    ]);
    for (const secretish of [a.api_key, b.api_key, extra.api_key, 'whsec_']) expect(res.stdout).not.toContain(secretish);
  });

  it('shows the signing secret the engine signs with, and rotates it with an overlap', async () => {
    const dir = path.join(root, 'secret');
    const { account_id: id } = JSON.parse((await cli(dir, 'accounts', 'create', '--name', 'Hooks')).stdout);
    const shown = JSON.parse((await cli(dir, 'webhooks', 'secret', '--account', String(id))).stdout);
    expect(shown).toEqual({ account_id: id, rotated: false, webhook_secret: expect.stringMatching(/^whsec_/), previous_secret_valid_until: null });
    // What the engine reads from the same store (sealed at rest) is the secret shown.
    const store = openStore(dir);
    const row = store.sqlite.prepare('SELECT webhook_secret FROM accounts WHERE id = ?').get(id) as { webhook_secret: string };
    await store.close();
    expect(row.webhook_secret).toMatch(/^v1:/);
    expect(row.webhook_secret).not.toContain(shown.webhook_secret.slice(6));

    const before = Date.now();
    const rotated = JSON.parse((await cli(dir, 'webhooks', 'secret', '--account', String(id), '--rotate', '--overlap-hours', '2')).stdout);
    expect(rotated.rotated).toBe(true);
    expect(rotated.webhook_secret).not.toBe(shown.webhook_secret);
    const until = Date.parse(rotated.previous_secret_valid_until);
    expect(until - before).toBeGreaterThanOrEqual(2 * 3_600_000 - 1000);
    expect(until - before).toBeLessThan(2 * 3_600_000 + 60_000);
    const again = JSON.parse((await cli(dir, 'webhooks', 'secret', '--account', String(id))).stdout);
    expect(again).toEqual({ ...rotated, rotated: false });
    // Both secrets verify what the engine signs during the overlap.
    const store2 = openStore(dir);
    const { createRepos } = await import('../../../src/store/index.ts');
    const secrets = await createRepos(store2, { now: () => Date.now() } as never).accounts.signingSecrets(id);
    await store2.close();
    const h = signedHeaders(secrets!, 'msg_1', 1000, '{}');
    expect(verify(shown.webhook_secret, h, '{}', 1000)).toBe(true);
    expect(verify(rotated.webhook_secret, h, '{}', 1000)).toBe(true);

    for (const args of [['--overlap-hours', '3'], ['--rotate', '--overlap-hours', 'soon']]) {
      const bad = await cli(dir, 'webhooks', 'secret', '--account', String(id), ...args);
      expect(bad.code, args.join(' ')).toBe(2);
    }
    expect((await cli(dir, 'webhooks', 'secret', '--account', '9999')).code).toBe(1);
  });

  it('refuses a second rotation during an overlap (the older secret still verifies) unless --force', async () => {
    const dir = path.join(root, 'rotate-twice');
    const { account_id: id } = JSON.parse((await cli(dir, 'accounts', 'create', '--name', 'Hooks')).stdout);
    const first = JSON.parse((await cli(dir, 'webhooks', 'secret', '--account', String(id), '--rotate')).stdout);
    const second = await cli(dir, 'webhooks', 'secret', '--account', String(id), '--rotate');
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('A rotation is in progress');
    expect(JSON.parse((await cli(dir, 'webhooks', 'secret', '--account', String(id))).stdout)).toEqual({ ...first, rotated: false });
    expect((await cli(dir, 'webhooks', 'secret', '--account', String(id), '--force')).code).toBe(2);
    const forced = JSON.parse((await cli(dir, 'webhooks', 'secret', '--account', String(id), '--rotate', '--force', '--overlap-hours', '0')).stdout);
    expect(forced).toEqual({ account_id: id, rotated: true, webhook_secret: expect.stringMatching(/^whsec_/), previous_secret_valid_until: null });
    expect(forced.webhook_secret).not.toBe(first.webhook_secret);
  });
});
