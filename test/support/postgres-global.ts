/**
 * vitest global setup: gives the run one directory for the shared PostgreSQL test server
 * (test/support/postgres.ts starts it there on first use) and stops that server when the run
 * ends. Nothing starts here: a run without PostgreSQL tests costs one mkdtemp.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopServer } from './postgres.ts';

export default function setup(): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-pg-run-'));
  process.env.SWITCHBOARD_TEST_PG_DIR = dir;
  return () => {
    stopServer(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
