/**
 * The whole cluster on real servers: the shipped Kamailio edge in front of two engine nodes
 * (`switchboard serve` processes) that share one PostgreSQL database (SWITCHBOARD_DATABASE_URL,
 * one SWITCHBOARD_SECRET_KEY) and one Redis (SWITCHBOARD_REDIS_URL).
 *
 * - 40 calls through the edge spread over both nodes; every record is in the shared store, read
 *   through either node, naming the node that carried it.
 * - The API rate limit holds across nodes: 20 requests with one key split over both, then the
 *   21st is 429 on either.
 * - The live call feed opened on one node shows the calls the other node carries (Redis relay).
 * - A rolling restart under load (SIGTERM, drain, restart in place) loses no call.
 * - A SIP trunk created or deleted through one node reaches the other (the trunk sync).
 * - SIGKILL on a node holding a live call: new calls go to the survivor, and the survivor closes
 *   the dead node's call record (no heartbeat for four periods).
 *
 * Addresses as in kamailio-edge.test.ts: nodes on 127.0.0.1, Kamailio 127.0.0.2, the caller 127.0.0.3.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openConfiguredStore } from '../../src/store/open-store.ts';
import { createRepos } from '../../src/store/index.ts';
import { systemClock } from '../../src/util/clock.ts';
import { dollarsToMicros } from '../../src/util/money.ts';
import { EngineProcess } from '../support/engine-process.ts';
import { createTestDatabase, dropTestDatabase, postgresAvailable, postgresUnavailableReason } from '../support/postgres.ts';
import { redisAvailable, startRedisServer, type RedisServer } from '../support/redis.ts';
import { TestPhone, type PhoneCall } from '../support/test-phone.ts';
import { KamailioEdge, kamailioAvailable } from './support/kamailio-edge.ts';
import { SseParser } from '../../console/src/live/sse.ts';
import { engineRtpRange, freePort, sleep, tempDir, within } from './support/tools.ts';

const EDGE_IP = '127.0.0.2';
const CALLER_IP = '127.0.0.3';
const TRUNK_NUMBER = '+14155550123';

const missing = [!kamailioAvailable() && 'kamailio', !postgresAvailable && `PostgreSQL (${postgresUnavailableReason})`, !redisAvailable && 'redis-server'].filter(Boolean);
if (missing.length) console.warn(`kamailio-cluster: SKIPPED, missing ${missing.join(', ')} (all listed in .ci/apt-packages)`);

interface Node {
  id: string;
  dir: { path: string; remove(): void };
  proc: EngineProcess;
  rtp: { minPort: number; maxPort: number };
  env: Record<string, string>;
}

type CallRecord = Record<string, unknown> & { id: number; node_id: string | null; to_number: string; ended_at: string | null };

describe.skipIf(missing.length > 0)('a two-node cluster on PostgreSQL and Redis behind the Kamailio edge', () => {
  let dbUrl: string;
  let redis: RedisServer;
  let edge: KamailioEdge;
  let a: Node;
  let b: Node;
  let caller: TestPhone;
  let key: string;
  let limitKey: string;
  const secretKey = crypto.randomBytes(32).toString('base64');
  let sharedEnv: Record<string, string>;

  async function api(node: Node, method: string, url: string, body?: unknown, withKey = key): Promise<{ status: number; body: any }> {
    const res = await fetch(`${node.proc.httpUrl}/api${url}`, {
      method,
      headers: { authorization: `Bearer ${withKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  async function startNode(id: string, edgePort: number, rtp: Node['rtp']): Promise<Node> {
    const dir = tempDir(`cluster-${id}`);
    const env = {
      ...sharedEnv,
      SWITCHBOARD_NODE_ID: id,
      SIP_OUTBOUND_PROXY: `${EDGE_IP}:${edgePort}`,
      RTP_PORT_MIN: String(rtp.minPort),
      RTP_PORT_MAX: String(rtp.maxPort),
    };
    const proc = await EngineProcess.start(dir.path, env);
    return { id, dir, proc, rtp, env };
  }

  beforeAll(async () => {
    dbUrl = await createTestDatabase();
    redis = await startRedisServer();
    sharedEnv = {
      SWITCHBOARD_DATABASE_URL: dbUrl,
      SWITCHBOARD_SECRET_KEY: secretKey,
      SWITCHBOARD_REDIS_URL: redis.url,
      SIP_TRUSTED_PROXIES: EDGE_IP,
      SWITCHBOARD_CALL_HEARTBEAT_SECONDS: '1',
      SWITCHBOARD_LEASE_SECONDS: '3',
      SWITCHBOARD_NODE_LEASE_SECONDS: '2',
      SWITCHBOARD_DRAIN_SECONDS: '5',
      // The trunk's new-call rate is one budget for the whole service (Redis): this test's bursts
      // of eight calls need more than the default 10/s with bursts of 20.
      SWITCHBOARD_MAX_CALL_RATE_PER_TRUNK: '100',
      LOG_LEVEL: 'info',
    };
    // The account lives in the shared database (as `switchboard accounts create` would put it there).
    const seedDir = tempDir('cluster-seed');
    const { store, secrets } = await openConfiguredStore(loadConfig({ SWITCHBOARD_DATA_DIR: seedDir.path, SWITCHBOARD_DATABASE_URL: dbUrl, SWITCHBOARD_SECRET_KEY: secretKey }));
    try {
      const repos = createRepos(store, systemClock, secrets);
      const account = await repos.accounts.create('cluster');
      await repos.ledger.adjust(account.id, dollarsToMicros(20), 'test top-up');
      key = await repos.accounts.createKey(account.id);
      limitKey = await repos.accounts.createKey(account.id);
    } finally {
      await store.close();
      seedDir.remove();
    }
    const edgePort = await freePort();
    const rtpA = engineRtpRange();
    let rtpB = engineRtpRange();
    while (rtpB.minPort === rtpA.minPort) rtpB = engineRtpRange();
    a = await startNode('node-a', edgePort, rtpA);
    // The trunk is made once, through node A, into the shared store; node B provisions it at its start.
    const trunk = await api(a, 'POST', '/user/sip-trunks', {
      sip_trunk_type: 'number',
      phone_number: TRUNK_NUMBER,
      sip_username: 'edge',
      sip_password: 'edge-secret',
      sip_address: '127.0.0.84',
      sip_calling_format: 'e164',
      inbound_authorization_type: 'ip',
      allowed_inbound_ips: [CALLER_IP],
    });
    if (trunk.status !== 201) throw new Error(`trunk: ${trunk.status} ${JSON.stringify(trunk.body)}`);
    b = await startNode('node-b', edgePort, rtpB);
    edge = await KamailioEdge.start({
      ip: EDGE_IP,
      port: edgePort,
      nodes: [
        { id: a.id, host: '127.0.0.1', port: a.proc.sipPort },
        { id: b.id, host: '127.0.0.1', port: b.proc.sipPort },
      ],
      pingIntervalS: 1,
    });
    caller = await TestPhone.create({ host: CALLER_IP, userName: 'caller' });
  }, 180_000);

  afterAll(async () => {
    if (process.env.CLUSTER_TEST_DUMP) for (const n of [a, b]) if (n) (await import('node:fs')).writeFileSync(`${process.env.CLUSTER_TEST_DUMP}.${n.id}`, n.proc.output);
    await caller?.close();
    await edge?.stop();
    for (const node of [a, b]) {
      if (!node) continue;
      await node.proc.stop('SIGKILL', 5000);
      node.dir.remove();
    }
    await redis?.stop();
    if (dbUrl) await dropTestDatabase(dbUrl).catch(() => undefined);
  }, 60_000);

  function nodeOf(call: PhoneCall): string | undefined {
    const port = Number(/^m=audio (\d+)/m.exec(call.dialog?.remoteSdp ?? '')?.[1]);
    return [a, b].find((n) => port >= n.rtp.minPort && port <= n.rtp.maxPort)?.id;
  }

  async function echoCall(holdMs: number): Promise<{ node: string | undefined; answered: number }> {
    const call = await caller.dial(edge.uri('echo'));
    const outcome = await within(call.outcome, 15_000, 'the echo call to be answered');
    if (outcome.status !== 200) return { node: undefined, answered: outcome.status };
    await sleep(holdMs);
    await within(call.hangup(), 10_000, 'the BYE through the edge');
    return { node: nodeOf(call), answered: 200 };
  }

  async function echoRecords(node: Node): Promise<CallRecord[]> {
    const res = await api(node, 'GET', '/user/calls?limit=100');
    if (res.status !== 200) throw new Error(`calls on ${node.id}: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as CallRecord[]).filter((r) => r.to_number === 'echo');
  }

  it('40 calls spread over both nodes, each record in the shared store naming its node', async () => {
    const results: Array<{ node: string | undefined; answered: number }> = [];
    for (let batch = 0; batch < 5; batch++) results.push(...(await Promise.all(Array.from({ length: 8 }, () => echoCall(200)))));
    expect(results.map((r) => r.answered)).toEqual(Array(40).fill(200));
    const byNode = (id: string) => results.filter((r) => r.node === id).length;
    expect(byNode('node-a')).toBeGreaterThanOrEqual(10);
    expect(byNode('node-b')).toBeGreaterThanOrEqual(10);
    // One store: either node lists all 40, each with the node that carried it.
    await sleep(500);
    const viaA = await echoRecords(a);
    const viaB = await echoRecords(b);
    expect(viaA).toHaveLength(40);
    expect(viaB.map((r) => r.id).sort()).toEqual(viaA.map((r) => r.id).sort());
    expect(viaA.filter((r) => r.node_id === 'node-a')).toHaveLength(byNode('node-a'));
    expect(viaA.filter((r) => r.node_id === 'node-b')).toHaveLength(byNode('node-b'));
    expect(viaA.every((r) => r.ended_at !== null && r.status === 'completed')).toBe(true);
  }, 180_000);

  it('the API rate limit holds across nodes: 20 requests split over both, then 429 on either', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await api(i % 2 ? b : a, 'GET', '/user/assistants', undefined, limitKey)).status);
    expect(statuses).toEqual(Array(20).fill(200));
    expect((await api(a, 'GET', '/user/assistants', undefined, limitKey)).status).toBe(429);
    expect((await api(b, 'GET', '/user/assistants', undefined, limitKey)).status).toBe(429);
  }, 30_000);

  it('the live call feed of either node shows calls the other node carries', async () => {
    const ctl = new AbortController();
    const res = await fetch(`${a.proc.httpUrl}/api/user/calls/events`, { headers: { authorization: `Bearer ${key}` }, signal: ctl.signal });
    expect(res.status).toBe(200);
    const events: Array<{ event: string; data: any }> = [];
    const parser = new SseParser();
    const decoder = new TextDecoder();
    void (async () => {
      try {
        for await (const chunk of res.body!) for (const e of parser.push(decoder.decode(chunk as Uint8Array, { stream: true }))) events.push({ event: e.event, data: JSON.parse(e.data) });
      } catch {
        // aborted
      }
    })();
    try {
      // A call held on node B, watched from node A.
      let held: PhoneCall | undefined;
      for (let i = 0; i < 6 && !held; i++) {
        const call = await caller.dial(edge.uri('echo'));
        expect((await within(call.outcome, 15_000, 'answer')).status).toBe(200);
        if (nodeOf(call) === 'node-b') held = call;
        else await call.hangup();
      }
      expect(held).toBeDefined();
      const seen = () => events.filter((e) => e.event === 'call' && e.data.node_id === 'node-b' && e.data.status === 'in-progress');
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline && seen().length === 0) await sleep(100);
      expect(seen().length, JSON.stringify(events.map((e) => [e.event, e.data.id, e.data.node_id, e.data.status]))).toBeGreaterThan(0);
      const id = seen()[0]!.data.id as number;
      await held!.hangup();
      const ended = Date.now() + 5000;
      while (Date.now() < ended && !events.some((e) => e.event === 'call' && e.data.id === id && e.data.ended_at !== null)) await sleep(100);
      expect(events.some((e) => e.event === 'call' && e.data.id === id && e.data.ended_at !== null)).toBe(true);
    } finally {
      ctl.abort();
    }
  }, 60_000);

  it('a rolling restart under load loses no call: the draining node finishes its calls, new ones go to the other, then it is back', async () => {
    const lastBefore = Math.max(0, ...(await echoRecords(a)).map((r) => r.id));
    const live: PhoneCall[] = [];
    for (let i = 0; i < 6; i++) {
      const call = await caller.dial(edge.uri('echo'));
      expect((await within(call.outcome, 15_000, 'a live call')).status).toBe(200);
      live.push(call);
    }
    const liveIds = new Set(live.map((c) => nodeOf(c)));
    expect(liveIds.has('node-a') && liveIds.has('node-b')).toBe(true);
    const ports = { http: Number(new URL(a.proc.httpUrl).port), sip: a.proc.sipPort };
    a.proc.child.kill('SIGTERM');
    await within(
      (async () => {
        while ((await fetch(`${a.proc.httpUrl}/readyz`)).status === 200) await sleep(50);
      })(),
      5000,
      'node A to report draining',
    );
    // While A drains, every new call is answered, by B.
    const fresh = [];
    for (let i = 0; i < 5; i++) fresh.push(...(await Promise.all([echoCall(100), echoCall(100)])));
    expect(fresh.map((r) => `${r.answered}:${r.node}`)).toEqual(Array(10).fill('200:node-b'));
    // The live calls, A's included, go on until their callers hang up; then A exits cleanly.
    for (const call of live) expect(await within(call.hangup(), 10_000, 'a live call’s BYE')).toBe(200);
    expect((await within(a.proc.exited, 20_000, 'the drained node to exit')).code).toBe(0);
    a.proc = await EngineProcess.start(a.dir.path, a.env, ports);
    // Back in rotation once the edge's probe sees it.
    let back = false;
    let probes = 0;
    for (; probes < 20 && !back; probes++) {
      const r = await echoCall(50);
      expect(r.answered).toBe(200);
      back = r.node === 'node-a';
      if (!back) await sleep(500);
    }
    expect(back).toBe(true);
    // Every one of those calls completed normally, in the shared store (the last record is written
    // a moment after its BYE).
    const settled = Date.now() + 5000;
    while (Date.now() < settled && (await echoRecords(b)).some((r) => r.id > lastBefore && r.ended_at === null)) await sleep(100);
    const since = (await echoRecords(b)).filter((r) => r.id > lastBefore);
    expect(since).toHaveLength(live.length + fresh.length + probes);
    expect(since.filter((r) => r.status !== 'completed' || r.end_cause !== 'remote-hangup').map((r) => [r.id, r.node_id, r.status, r.end_cause, r.from_number])).toEqual([]);
  }, 120_000);

  it('a trunk created through one node serves calls on the other within seconds, and a deleted one stops', async () => {
    const number = '+14155550124';
    const direct = (node: Node) => `sip:${number.slice(1)}@127.0.0.1:${node.proc.sipPort}`;
    const statusOf = async (node: Node) => (await within((await caller.dial(direct(node))).outcome, 10_000, 'an answer')).status;
    // Unknown number on node A: 404.
    expect(await statusOf(a)).toBe(404);
    const made = await api(b, 'POST', '/user/sip-trunks', {
      sip_trunk_type: 'number',
      phone_number: number,
      sip_username: 'second',
      sip_password: 'second-secret',
      sip_address: '127.0.0.84',
      sip_calling_format: 'e164',
      inbound_authorization_type: 'ip',
      allowed_inbound_ips: [CALLER_IP],
    });
    expect(made.status).toBe(201);
    // Known on A once it synced: the trunk matches the caller, and with no assistant on the number, 480.
    const deadline = Date.now() + 15_000;
    let status = 404;
    while (Date.now() < deadline && (status = await statusOf(a)) === 404) await sleep(500);
    expect(status).toBe(480);
    expect((await api(b, 'DELETE', `/user/sip-trunks/${made.body.data.id}`)).status).toBe(200);
    const gone = Date.now() + 20_000;
    while (Date.now() < gone && (status = await statusOf(a)) !== 404) await sleep(500);
    expect(status).toBe(404);
  }, 60_000);

  it('SIGKILL on a node with a live call: new calls go to the survivor, which closes the dead node’s record', async () => {
    // A call held on node B.
    let held: PhoneCall | undefined;
    for (let i = 0; i < 6 && !held; i++) {
      const call = await caller.dial(edge.uri('echo'));
      expect((await within(call.outcome, 15_000, 'answer')).status).toBe(200);
      if (nodeOf(call) === 'node-b') held = call;
      else await call.hangup();
    }
    expect(held, 'round robin never gave node B a call').toBeDefined();
    await sleep(1500); // a heartbeat or two stamped
    await b.proc.stop('SIGKILL', 5000);
    // Its live call's record is open in the shared store, as node B left it.
    const openOfB = async () => (await echoRecords(a)).filter((r) => r.node_id === 'node-b' && r.ended_at === null);
    expect(await openOfB()).toHaveLength(1);

    // New calls: all answered, all by node A (Kamailio's probes take B out, or it fails over).
    const after = [];
    for (let i = 0; i < 6; i++) after.push(await echoCall(100));
    expect(after.map((r) => `${r.answered}:${r.node}`)).toEqual(Array(6).fill('200:node-a'));

    // Node A's sweep closes it once its heartbeat is four periods old (bounded wait).
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline && (await openOfB()).length > 0) await sleep(1000);
    expect(await openOfB()).toEqual([]);
    const closed = (await echoRecords(a)).filter((r) => r.node_id === 'node-b' && r.end_cause !== 'remote-hangup');
    expect(closed.length).toBeGreaterThanOrEqual(1);
    await held!.hangup().catch(() => undefined);
  }, 120_000);
});
