/**
 * Two engine nodes with real SIP servers on loopback, sharing one real Redis: a call on one node
 * counts against the account's cap on the other, a hang-up asked of node A ends a real call held
 * by node B (B sends the BYE), and a source banned by A gets no answer from B.
 */
import dgram from 'node:dgram';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisCluster } from '../../../src/cluster/redis/cluster.ts';
import { header, type SipRequest } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { createLogger } from '../../../src/util/logger.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { sleep } from '../../support/test-phone-rtp.ts';
import { redisAvailable, startRedisServer, type RedisServer } from '../../support/redis.ts';
import { harness, until, type Harness } from '../calls/harness.ts';

const logger = createLogger('silent');
let redis: RedisServer;
let seq = 0;
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

/** Two engines (A and B), each its own node of one service. */
async function twoNodes(limits: { maxPerAccount?: number } = {}): Promise<[Harness, Harness]> {
  const prefix = `sip${++seq}:`;
  const nodes: Harness[] = [];
  for (const id of ['node-a', 'node-b']) {
    const cluster = await RedisCluster.connect({ url: redis.url, nodeId: id, leaseMs: 10_000, logger, clock: systemClock, prefix });
    const h = await harness({ cluster, limits });
    cleanups.push(async () => {
      await h.close();
      await cluster.close();
    });
    nodes.push(h);
  }
  return nodes as [Harness, Harness];
}

async function phone(host = '127.0.0.1'): Promise<TestPhone> {
  const p = await TestPhone.create({ host });
  cleanups.push(() => p.close());
  return p;
}

describe.skipIf(!redisAvailable)('two SIP nodes on one Redis', () => {
  it("an account's live-call cap counts both nodes' calls: a call on A makes B answer 486, and B takes calls again once it ends", async () => {
    const [a, b] = await twoNodes({ maxPerAccount: 1 });
    // Same account id (1) on both nodes, as with a shared database.
    expect(a.owner.id).toBe(b.owner.id);
    await a.trunk();
    await b.trunk();
    const p = await phone();
    const first = await p.call(a.target('echo'));
    const second = await p.dial(b.target('echo'));
    const refused = await second.invite!.result.then(
      () => undefined,
      (e: { response?: Parameters<typeof header>[0] }) => e.response,
    );
    expect(refused && 'status' in refused ? refused.status : 0).toBe(486);
    expect(header(refused!, 'reason')).toContain('account concurrent call limit');
    expect(await first.hangup()).toBe(200);
    await until(() => a.server.registry.size === 0, 3000, 'call on A ended');
    // A's slot is freed as the call ends (a write to Redis, awaited by nothing the caller sees).
    await until(async () => (await b.server.registry.cluster.leases.counts(a.owner.id, 'x')).account === 0, 3000, 'slot freed');
    const third = await p.call(b.target('echo'));
    expect(await third.hangup()).toBe(200);
  });

  it('a hang-up asked of node A ends a real call held by node B: B sends the BYE', async () => {
    const [a, b] = await twoNodes();
    await b.trunk();
    const p = await phone();
    const call = await p.call(b.target('echo'));
    await until(() => b.server.registry.size === 1, 3000, 'call live on B');
    const uuid = b.server.registry.list()[0]!.uuid;
    expect(a.server.registry.get(uuid)).toBeUndefined();
    expect(await a.server.registry.hangup(uuid)).toBe('sent');
    // The caller hears a BYE from B.
    const reason = await Promise.race([call.ended, sleep(3000).then(() => 'timeout')]);
    expect(reason).not.toBe('timeout');
    await until(() => b.server.registry.size === 0, 3000, 'call ended on B');
    const [rec] = (await b.req('GET', '/user/calls')).body as Array<{ end_cause: string }>;
    expect(rec!.end_cause).toBe('local-hangup');
    // Ended: no node holds it any more.
    await until(async () => (await a.server.registry.hangup(uuid)) === 'not-found', 3000, 'call forgotten');
  });

  it('a source banned on A gets no answer from B either', async () => {
    const [a, b] = await twoNodes();
    const src = '127.0.0.31';
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((r) => socket.bind(0, src, r));
    cleanups.push(() => socket.close());
    const statuses: number[] = [];
    socket.on('message', (msg) => {
      const parsed = parseMessage(msg);
      if (parsed.ok && parsed.message.kind === 'response') statuses.push(parsed.message.status);
    });
    let n = 0;
    const options = (port: number, userAgent: string) => {
      n++;
      const text = [
        `OPTIONS sip:100@127.0.0.1:${port} SIP/2.0`,
        `Via: SIP/2.0/UDP ${src}:${socket.address().port};branch=z9hG4bK-ban${n}-${Date.now()}`,
        'Max-Forwards: 70',
        `From: <sip:probe@${src}>;tag=t${n}`,
        'To: <sip:100@127.0.0.1>',
        `Call-ID: ban-${n}-${Date.now()}@${src}`,
        `CSeq: ${n} OPTIONS`,
        `User-Agent: ${userAgent}`,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      socket.send(text, port, '127.0.0.1');
    };
    // B answers this source while nobody has banned it.
    options(b.server.port, 'probe/1.0');
    await until(() => statuses.length === 1, 3000, 'B answers before the ban');
    // A scanner's User-Agent at A: banned there, and the ban spreads.
    options(a.server.port, 'friendly-scanner');
    await until(() => b.server.abuse.isBanned(src), 3000, 'ban reached B');
    options(b.server.port, 'probe/1.0');
    await sleep(400);
    expect(statuses).toHaveLength(1);
    // Another source is still answered by B.
    expect(b.server.abuse.isBanned('127.0.0.32')).toBe(false);
  });

  it('a node starting after a ban adopts it', async () => {
    const [a] = await twoNodes();
    const scan: SipRequest = { kind: 'request', method: 'OPTIONS', uri: 'sip:x@127.0.0.1', version: 'SIP/2.0', headers: [{ name: 'user-agent', value: 'sipvicious' }], body: Buffer.alloc(0) };
    expect(a.server.abuse.check(scan, '127.0.0.41')).toBe('drop');
    const prefix = `sip${seq}:`;
    const late = await RedisCluster.connect({ url: redis.url, nodeId: 'node-c', leaseMs: 10_000, logger, clock: systemClock, prefix });
    await until(async () => (await late.bans.list(10)).some((x) => x.ip === '127.0.0.41'), 3000, 'ban recorded');
    const c = await harness({ cluster: late });
    cleanups.push(async () => {
      await c.close();
      await late.close();
    });
    expect(c.server.abuse.isBanned('127.0.0.41')).toBe(true);
  });
});
