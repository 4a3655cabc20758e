/**
 * A real PostgreSQL 15 for tests: started once per vitest run (lazily, by the first test file
 * that asks; the global setup in test/support/postgres-global.ts stops it when the run ends) and
 * a fresh database per caller. initdb refuses to run as root, so as root the server runs as the
 * `postgres` user through `runuser`. Missing binaries make `postgresAvailable` false: tests then
 * skip with the reason in `postgresUnavailableReason`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const PG_BIN = process.env.SWITCHBOARD_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

function unavailableReason(): string | undefined {
  for (const b of ['initdb', 'pg_ctl', 'postgres']) {
    if (!fs.existsSync(path.join(PG_BIN, b))) return `PostgreSQL binaries not found in ${PG_BIN} (missing ${b}); install postgresql-15`;
  }
  if (process.getuid?.() === 0 && spawnSync('id', ['postgres']).status !== 0) {
    return 'running as root and no `postgres` user to run initdb as';
  }
  return undefined;
}

export const postgresUnavailableReason = unavailableReason();
export const postgresAvailable = postgresUnavailableReason === undefined;
if (!postgresAvailable) console.warn(`[postgres tests skipped] ${postgresUnavailableReason}`);

/** The backends a parametrised store test runs on: SQLite always, PostgreSQL when installed. */
export const STORE_BACKENDS = ['sqlite', 'postgres'] as const;
export type StoreBackend = (typeof STORE_BACKENDS)[number];

/** The run directory the global setup made, or one for this process alone. */
function runDir(): string {
  const fromSetup = process.env.SWITCHBOARD_TEST_PG_DIR;
  if (fromSetup) return fromSetup;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-pg-'));
  process.env.SWITCHBOARD_TEST_PG_DIR = dir;
  process.on('exit', () => {
    stopServer(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

const asRoot = process.getuid?.() === 0;

function run(bin: string, args: string[]): void {
  const file = path.join(PG_BIN, bin);
  if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', file, ...args], { stdio: 'pipe' });
  else execFileSync(file, args, { stdio: 'pipe' });
}

/** Stops the server of a run directory if one runs there (used by the global teardown). */
export function stopServer(dir: string): void {
  const data = path.join(dir, 'data');
  if (!fs.existsSync(path.join(data, 'postmaster.pid'))) return;
  try {
    run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '20']);
  } catch {
    // already gone
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the run's server (one process wins a mkdir lock; the others wait for its port file). */
async function serverPort(): Promise<number> {
  const dir = runDir();
  const portFile = path.join(dir, 'port');
  const lock = path.join(dir, 'lock');
  let owner = false;
  try {
    fs.mkdirSync(lock);
    owner = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (owner) {
    const data = path.join(dir, 'data');
    fs.mkdirSync(data, { recursive: true, mode: 0o700 });
    if (asRoot) {
      fs.chmodSync(dir, 0o755);
      execFileSync('chown', ['-R', 'postgres:', data]);
    }
    run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const port = await freePort();
    const opts = `-F -h 127.0.0.1 -p ${port} -k ${data} -c max_connections=200 -c shared_buffers=16MB -c full_page_writes=off -c synchronous_commit=off`;
    run('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', path.join(data, 'server.log'), '-o', opts]);
    fs.writeFileSync(portFile + '.tmp', String(port));
    fs.renameSync(portFile + '.tmp', portFile);
    return port;
  }
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (fs.existsSync(portFile)) return Number(fs.readFileSync(portFile, 'utf8'));
    await sleep(100);
  }
  throw new Error(`PostgreSQL test server in ${dir} did not start within 90 s`);
}

let port: Promise<number> | undefined;

/** The admin URL of the run's server (database `postgres`). */
export async function postgresAdminUrl(): Promise<string> {
  port ??= serverPort();
  return `postgres://postgres@127.0.0.1:${await port}/postgres`;
}

/** A new, empty database on the run's server; returns its URL. Dropped by `dropTestDatabase`. */
export async function createTestDatabase(): Promise<string> {
  const admin = await postgresAdminUrl();
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name} TEMPLATE template0`);
  } finally {
    await client.end();
  }
  return admin.replace(/\/postgres$/, `/${name}`);
}

export async function dropTestDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  if (!/^t_[0-9a-f]+$/.test(name)) throw new Error(`not a test database: ${name}`);
  const client = new pg.Client({ connectionString: await postgresAdminUrl() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** The backends this machine can run (PostgreSQL drops out, with the warning above, when missing). */
export const AVAILABLE_BACKENDS: readonly StoreBackend[] = STORE_BACKENDS.filter((b) => b !== 'postgres' || postgresAvailable);
