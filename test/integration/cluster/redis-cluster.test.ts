/**
 * Two engine nodes sharing one real Redis (src/cluster/redis): the API rate limit is exact across
 * them, live-call slots count both nodes' calls and lapse when a node stops beating, any node
 * reaches a call held by the other, and a ban on one drops the source on both.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/api/app.ts';
import { API_WINDOWS, MemoryRateLimiter } from '../../../src/api/rate-limit.ts';
import { CallRegistry } from '../../../src/call/call-registry.ts';
import { TokenBucket } from '../../../src/call/call-rate-limit.ts';
import { openCluster } from '../../../src/cluster/index.ts';
import { RedisCluster } from '../../../src/cluster/redis/cluster.ts';
import { ManualClock, systemClock } from '../../../src/util/clock.ts';
import { createLogger } from '../../../src/util/logger.ts';
import { testApp } from '../../support/app.ts';
import { testTempDir } from '../../support/temp-dir.ts';
import { redisAvailable, startRedisServer, type RedisServer } from '../../support/redis.ts';

const logger = createLogger('silent');
let redis: RedisServer;
let prefixSeq = 0;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  if (redisAvailable) redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A node of a fresh service (its own key prefix on the shared server). */
async function node(nodeId: string, prefix: string, o: { leaseMs?: number; beatMs?: number } = {}): Promise<RedisCluster> {
  const c = await RedisCluster.connect({ url: redis.url, nodeId, leaseMs: o.leaseMs ?? 10_000, logger, clock: systemClock, prefix, ...(o.beatMs ? { beatMs: o.beatMs } : {}) });
  cleanups.push(() => c.close());
  return c;
}

function service(): string {
  return `t${++prefixSeq}:`;
}

describe.skipIf(!redisAvailable)('two nodes on one Redis', () => {
  it('API rate limit: 20 requests with one key split over both nodes pass, the 21st is 429 on either, with the same body and headers as one node', async () => {
    const prefix = service();
    const a = await node('node-a', prefix);
    const b = await node('node-b', prefix);
    const appA = await testApp({}, { cluster: a });
    cleanups.push(() => appA.close());
    // Node B: its own app on the same store (a shared database) and the same clock.
    const { app: appB } = await buildApp({ ...appA.ctx, cluster: b });
    cleanups.push(() => appB.close());
    const { key } = await appA.account();
    const get = async (app: typeof appB) => {
      const res = await app.inject({ method: 'GET', url: '/api/user/assistants', headers: { authorization: `Bearer ${key}` } });
      return { status: res.statusCode, headers: res.headers, body: res.json() as Record<string, unknown> };
    };
    const remaining: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await get(i % 2 === 0 ? appA.app : appB);
      expect(res.status, `request ${i + 1}`).toBe(200);
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
    }
    // One count over both nodes: 19, 18, … 0 whichever node answered.
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => 19 - i));
    for (const app of [appA.app, appB]) {
      const refused = await get(app);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ message: 'Too many requests.', retry_after: 10 });
      expect(refused.headers['retry-after']).toBe('10');
      expect(refused.headers['x-ratelimit-limit']).toBe('20');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    }
    // The window slides on the shared clock: 10 s later both nodes admit again.
    appA.clock.advance(10_000);
    expect((await get(appB)).status).toBe(200);
  });

  it('the Redis sliding window decides exactly as the in-memory one, request by request', async () => {
    const prefix = service();
    const a = await node('node-a', prefix);
    const shared = a.rateLimiter('parity', API_WINDOWS);
    const memory = new MemoryRateLimiter(API_WINDOWS);
    const clock = new ManualClock();
    // 130 requests at irregular steps over about 90 s: both windows fill, refuse and free.
    for (let i = 0; i < 130; i++) {
      clock.advance([50, 300, 1200, 90, 700][i % 5]!);
      const expected = memory.hit('k', clock.now());
      expect(await shared.hit('k', clock.now()), `request ${i + 1}`).toEqual(expected);
    }
  });

  it("a trunk's new-call bucket is one over both nodes, and refills as the in-memory one does", async () => {
    const prefix = service();
    const a = await node('node-a', prefix);
    const b = await node('node-b', prefix);
    const rate = { perSec: 2, burst: 3 };
    const clock = new ManualClock();
    const local = new TokenBucket(rate, clock.now());
    let refusals = 0;
    // 40 calls at irregular steps, alternating nodes: every verdict as one bucket in memory gives it.
    for (let i = 0; i < 40; i++) {
      clock.advance([0, 100, 700, 40, 1300][i % 5]!);
      const wait = local.waitMs(clock.now());
      if (wait === 0) local.take(clock.now());
      else refusals++;
      const shared = await (i % 2 === 0 ? a : b).buckets.take([{ name: 'trunk:T1', rate }], clock.now());
      expect(shared, `call ${i + 1}`).toEqual(wait === 0 ? undefined : { index: 0, waitMs: wait });
    }
    expect(refusals).toBeGreaterThan(5);
    // Another trunk has its own bucket.
    expect(await b.buckets.take([{ name: 'trunk:T2', rate }], clock.now())).toBeUndefined();
  });

  it('live-call caps count both nodes: a slot taken on A refuses B at the cap, and frees for B when A releases it', async () => {
    const prefix = service();
    const regA = new CallRegistry(undefined, await node('node-a', prefix));
    const regB = new CallRegistry(undefined, await node('node-b', prefix));
    const caps = { maxPerAccount: 2, maxPerTrunk: 3 };
    const one = await regA.reserve(7, 'trunk-1', caps);
    const two = await regB.reserve(7, 'trunk-2', caps);
    expect(typeof one).toBe('object');
    expect(typeof two).toBe('object');
    expect(await regB.reserve(7, 'trunk-1', caps)).toBe('account');
    expect(await regA.reserve(7, 'trunk-1', caps)).toBe('account');
    // Another account on the same trunk: the trunk's cap counts both nodes too.
    expect(typeof (await regB.reserve(8, 'trunk-1', caps))).toBe('object');
    expect(typeof (await regB.reserve(8, 'trunk-1', caps))).toBe('object');
    expect(await regA.reserve(9, 'trunk-1', caps)).toBe('trunk');
    await (one as { release(): Promise<void> }).release();
    expect(typeof (await regB.reserve(7, 'trunk-3', caps))).toBe('object');
    expect(await regB.cluster.leases.counts(7, 'trunk-1')).toEqual({ account: 2, trunk: 2 });
  });

  it("a node that stops beating loses its slots once its lease lapses in Redis (real TTL), and writes them back when it beats again", async () => {
    const prefix = service();
    // A beats only when told: after its first beat it is as good as hung.
    const a = await node('node-a', prefix, { leaseMs: 400, beatMs: 3_600_000 });
    const b = await node('node-b', prefix, { leaseMs: 400 });
    const caps = { maxPerAccount: 2, maxPerTrunk: 100 };
    expect(await a.leases.acquire('a1', 7, 't', caps)).toBe('ok');
    expect(await a.leases.acquire('a2', 7, 't', caps)).toBe('ok');
    expect(await b.leases.acquire('b1', 7, 't', caps)).toBe('account');
    await new Promise((r) => setTimeout(r, 600));
    // A's alive key is gone: its two slots no longer count, B takes the cap.
    expect(await b.leases.counts(7, 't')).toEqual({ account: 0, trunk: 0 });
    expect(await b.leases.acquire('b1', 7, 't', caps)).toBe('ok');
    expect(await b.leases.acquire('b2', 7, 't', caps)).toBe('ok');
    // A was only slow, not dead: its next beat puts its calls back in the count.
    await a.beat();
    expect(await b.leases.counts(7, 't')).toEqual({ account: 4, trunk: 4 });
    expect(await a.leases.acquire('a3', 7, 't', caps)).toBe('account');
  });

  it('a node leaving cleanly frees its slots at once', async () => {
    const prefix = service();
    const a = await node('node-a', prefix);
    const b = await node('node-b', prefix);
    expect(await a.leases.acquire('a1', 7, 't', { maxPerAccount: 1, maxPerTrunk: 9 })).toBe('ok');
    expect(await b.leases.acquire('b1', 7, 't', { maxPerAccount: 1, maxPerTrunk: 9 })).toBe('account');
    await a.close();
    expect(await b.leases.acquire('b1', 7, 't', { maxPerAccount: 1, maxPerTrunk: 9 })).toBe('ok');
  });

  it('once-only claims: one node of two gets each key', async () => {
    const prefix = service();
    const a = await node('node-a', prefix);
    const b = await node('node-b', prefix);
    const results = await Promise.all([a.claim('inactivity:1', 5000), b.claim('inactivity:1', 5000), b.claim('inactivity:2', 5000)]);
    expect(results[0] !== results[1]).toBe(true);
    expect(results[2]).toBe(true);
  });
});

describe.skipIf(!redisAvailable)('Redis away', () => {
  it('at start: the engine refuses to start, naming the address but never the password', async () => {
    const err = await openCluster({ cluster: { nodeId: 'n', redisUrl: 'redis://:hunter2secret@127.0.0.1:1', leaseMs: 10_000, leaseTtlMs: 30_000 } }, logger, systemClock).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/? is unreachable/);
    expect(err?.message).toContain('SWITCHBOARD_REDIS_URL');
    expect(err?.message).not.toContain('hunter2secret');
  });

  it('`switchboard serve` with SWITCHBOARD_REDIS_URL unreachable exits 1 with the reason, before opening the store', async () => {
    const dataDir = testTempDir('sb-redis-start-');
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['bin/switchboard.js', 'serve'],
        {
          env: { ...process.env, SWITCHBOARD_DATA_DIR: join(dataDir, 'data'), SWITCHBOARD_REDIS_URL: 'redis://:hunter2secret@127.0.0.1:1', HTTP_HOST: '127.0.0.1', HTTP_PORT: '65001', SIP_HOST: '127.0.0.1', SIP_PORT: '65002', SIP_PUBLIC_HOST: '127.0.0.1', LOG_LEVEL: 'error' },
          timeout: 50_000,
        },
        (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
      );
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/? is unreachable/);
    expect(result.stderr).not.toContain('hunter2secret');
    expect(existsSync(join(dataDir, 'data'))).toBe(false);
  }, 60_000);

  it('mid-run: limits fall back to this node (no crash, no wait), then are shared again once Redis is back', async () => {
    const own = await startRedisServer();
    cleanups.push(() => own.stop());
    const prefix = service();
    const mk = async (id: string) => {
      const c = await RedisCluster.connect({ url: own.url, nodeId: id, leaseMs: 10_000, logger, clock: systemClock, prefix });
      cleanups.push(() => c.close());
      return c;
    };
    const a = await mk('node-a');
    const b = await mk('node-b');
    const caps = { maxPerAccount: 1, maxPerTrunk: 9 };
    expect(await a.leases.acquire('a1', 7, 't', caps)).toBe('ok');
    await own.pause();
    const limiter = b.rateLimiter('api-key', [{ limit: 2, windowMs: 10_000 }]);
    const started = Date.now();
    // Decided on B alone: B's own count of the key, B's own calls (A's slot is not seen).
    expect((await limiter.hit('k', 1_000)).allowed).toBe(true);
    expect((await limiter.hit('k', 1_001)).allowed).toBe(true);
    expect((await limiter.hit('k', 1_002)).allowed).toBe(false);
    expect(await b.leases.acquire('b1', 7, 't', caps)).toBe('ok');
    expect(await b.leases.acquire('b2', 7, 't', caps)).toBe('account');
    expect(Date.now() - started).toBeLessThan(3000);
    await own.restart();
    // Both nodes write their slots back on reconnecting; then the count is the service's again.
    const deadline = Date.now() + 8000;
    let counts = { account: -1, trunk: -1 };
    while (Date.now() < deadline) {
      counts = await b.leases.counts(7, 't').catch(() => counts);
      if (counts.account === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(counts).toEqual({ account: 2, trunk: 2 });
    expect(await a.leases.acquire('a2', 7, 't', caps)).toBe('account');
  });
});
