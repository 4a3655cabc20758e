/**
 * A real `redis-server` on 127.0.0.1, on a free port, with no persistence, in a temp dir: started
 * by a test file that needs Redis and stopped when it is done. Where the binary is missing the
 * file skips with a visible reason (`describe.skipIf(!redisAvailable)`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
export const redisAvailable = existsSync(REDIS_SERVER_BIN);
if (!redisAvailable) console.log(`redis tests skipped: no redis-server at ${REDIS_SERVER_BIN} (apt-get install redis-server)`);

export interface RedisServer {
  url: string;
  port: number;
  /** Stops the server (SIGKILL when it does not stop within 2 s) and removes its directory. */
  stop(): Promise<void>;
  /** Stops it and starts it again on the same port (an outage and a recovery). */
  restart(): Promise<void>;
  /** Stops it without starting again (until restart()). */
  pause(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, deadlineMs: number): Promise<void> {
  for (let i = 0; i < 200 && Date.now() < deadlineMs; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = new Socket();
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
      s.connect(port, '127.0.0.1');
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`redis-server did not listen on 127.0.0.1:${port}`);
}

export async function startRedisServer(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'yes', '--loglevel', 'warning'];
    const proc = spawn(REDIS_SERVER_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString();
    });
    try {
      await waitForPort(port, Date.now() + 10_000);
    } catch (err) {
      proc.kill('SIGKILL');
      throw new Error(`${(err as Error).message}: ${stderr}`);
    }
  };
  const halt = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => proc.kill('SIGKILL'), 2000);
      proc.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      proc.kill('SIGTERM');
    });
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await halt();
      await launch();
    },
    pause: halt,
  };
}
