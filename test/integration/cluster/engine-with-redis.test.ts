/**
 * `switchboard serve` with SWITCHBOARD_REDIS_URL: the engine joins the service (its node beats in
 * Redis, its API limits are counted there) and leaves it on SIGTERM (its node keys are gone).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, startRedisServer, type RedisServer } from '../../support/redis.ts';
import { testTempDir } from '../../support/temp-dir.ts';

let redis: RedisServer;
let child: ChildProcess | undefined;
let client: Redis | undefined;

beforeAll(async () => {
  if (redisAvailable) redis = await startRedisServer();
});
afterAll(async () => {
  if (child?.pid && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
  client?.disconnect();
  await redis?.stop();
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

describe.skipIf(!redisAvailable)('an engine with SWITCHBOARD_REDIS_URL', () => {
  it('joins the service on start (its node beats in Redis, /healthz answers) and leaves it on SIGTERM', async () => {
    const dataDir = testTempDir('sb-engine-redis-');
    const port = await freePort();
    child = spawn(process.execPath, ['bin/switchboard.js', 'serve'], {
      env: {
        ...process.env,
        SWITCHBOARD_DATA_DIR: dataDir,
        SWITCHBOARD_REDIS_URL: redis.url,
        SWITCHBOARD_NODE_ID: 'engine-under-test',
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        SIP_HOST: '127.0.0.1',
        SIP_PORT: String(await freePort()),
        SIP_PUBLIC_HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    let health: unknown;
    for (let i = 0; i < 150 && health === undefined; i++) {
      await new Promise((r) => setTimeout(r, 200));
      try {
        health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).json();
      } catch {
        // not up yet
      }
    }
    expect(health).toEqual({ status: 'ok', ready: true, draining: false });
    client = new Redis(redis.url);
    expect(await client.exists('switchboard:node:engine-under-test:alive')).toBe(1);
    expect(await client.smembers('switchboard:nodes')).toContain('engine-under-test');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await client.exists('switchboard:node:engine-under-test:alive')).toBe(0);
    expect(await client.smembers('switchboard:nodes')).not.toContain('engine-under-test');
  }, 90_000);
});
