/**
 * The shipped SIP edge (deploy/kamailio/kamailio.cfg, rendered with this test's addresses) in
 * front of two engine nodes, each a `switchboard serve` process with its own data dir and node id,
 * trusting Kamailio's address (SIP_TRUSTED_PROXIES) and sending its outbound calls through it
 * (SIP_OUTBOUND_PROXY). Addresses on loopback, each its own so everyone can be told apart:
 *
 *   127.0.0.1   the two nodes (SIP, HTTP, RTP)
 *   127.0.0.2   Kamailio
 *   127.0.0.3   the caller (a test phone), the only address the nodes' trunks allow
 *   127.0.0.5   a stranger, whom no trunk allows
 *   127.0.0.84  the carrier the nodes' trunk dials out to (port 5060, as a trunk's address says)
 *
 * In order: 40 echo calls through the edge land on both nodes, recorded with each node's id and
 * the trunk the caller's own address matched; an outbound call leaves a node through Kamailio;
 * SIGTERM on a node under load (a rolling restart) lets its live calls finish while new calls go
 * to the other node and none fails, and the restarted node is back in rotation; SIGKILL on a node
 * sends every new call to the survivor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineProcess, seedAccount } from '../support/engine-process.ts';
import { TestPhone, type PhoneCall } from '../support/test-phone.ts';
import { KamailioEdge, kamailioAvailable } from './support/kamailio-edge.ts';
import { engineRtpRange, freePort, sleep, tempDir, waitFor, within } from './support/tools.ts';

const EDGE_IP = '127.0.0.2';
const CALLER_IP = '127.0.0.3';
const STRANGER_IP = '127.0.0.5';
const CARRIER_IP = '127.0.0.84';
const TRUNK_NUMBER = '+14155550123';
const CARRIER_NUMBER = '+14155550199';

const available = kamailioAvailable();
if (!available) console.warn('kamailio-edge: SKIPPED, no kamailio binary on PATH (Debian package kamailio, listed in .ci/apt-packages)');

interface Node {
  id: string;
  dir: { path: string; remove(): void };
  key: string;
  env: Record<string, string>;
  proc: EngineProcess;
  trunkId: number;
  phoneNumberId: number;
  ports: { http: number; sip: number };
  /** Its RTP port range: the answer's m= port says which node took a call. */
  rtp: { minPort: number; maxPort: number };
}

type CallRecord = Record<string, unknown> & { id: number; node_id: string | null };

async function api(node: Node, method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${node.proc.httpUrl}/api${url}`, {
    method,
    headers: { authorization: `Bearer ${node.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function startNode(id: string, edgePort: number, rtp: { minPort: number; maxPort: number }): Promise<Node> {
  const dir = tempDir(`edge-${id}`);
  const account = await seedAccount(dir.path);
  const env = {
    SWITCHBOARD_NODE_ID: id,
    SIP_TRUSTED_PROXIES: EDGE_IP,
    SIP_OUTBOUND_PROXY: `${EDGE_IP}:${edgePort}`,
    SWITCHBOARD_DRAIN_SECONDS: '30',
    RTP_PORT_MIN: String(rtp.minPort),
    RTP_PORT_MAX: String(rtp.maxPort),
    LOG_LEVEL: 'info',
  };
  const proc = await EngineProcess.start(dir.path, env);
  const node: Node = { id, dir, key: account.key, env, proc, trunkId: 0, phoneNumberId: 0, ports: { http: Number(new URL(proc.httpUrl).port), sip: proc.sipPort }, rtp };
  const trunk = await api(node, 'POST', '/user/sip-trunks', {
    sip_trunk_type: 'number',
    phone_number: TRUNK_NUMBER,
    sip_username: 'edge',
    sip_password: 'edge-secret',
    sip_address: CARRIER_IP,
    sip_calling_format: 'e164',
    inbound_authorization_type: 'ip',
    allowed_inbound_ips: [CALLER_IP],
  });
  if (trunk.status !== 201) throw new Error(`trunk on ${id}: ${trunk.status} ${JSON.stringify(trunk.body)}`);
  node.trunkId = trunk.body.data.id;
  node.phoneNumberId = trunk.body.data.phone_number_id;
  return node;
}

/** Every call record a node holds (newest first). */
async function records(node: Node): Promise<CallRecord[]> {
  const res = await api(node, 'GET', '/user/calls?limit=100');
  if (res.status !== 200) throw new Error(`calls on ${node.id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as CallRecord[];
}

/** The inbound echo records a node holds. */
async function echoRecords(node: Node): Promise<CallRecord[]> {
  return (await records(node)).filter((r) => r.direction === 'inbound' && r.to_number === 'echo');
}

describe.skipIf(!available)('Kamailio edge (deploy/kamailio/kamailio.cfg) in front of two engine nodes', () => {
  let edge: KamailioEdge;
  let a: Node;
  let b: Node;
  let caller: TestPhone;

  beforeAll(async () => {
    const edgePort = await freePort();
    const rtpA = engineRtpRange();
    let rtpB = engineRtpRange();
    while (rtpB.minPort === rtpA.minPort) rtpB = engineRtpRange();
    [a, b] = await Promise.all([startNode('node-a', edgePort, rtpA), startNode('node-b', edgePort, rtpB)]);
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
  }, 120_000);

  afterAll(async () => {
    await caller?.close();
    if (process.env.EDGE_TEST_DUMP && edge) (await import('node:fs')).writeFileSync(process.env.EDGE_TEST_DUMP, edge.output);
    await edge?.stop();
    for (const node of [a, b]) {
      if (!node) continue;
      await node.proc.stop('SIGKILL', 5000);
      node.dir.remove();
    }
  }, 60_000);

  /** Which node answered a call: the one whose RTP range holds the answer's media port. */
  function nodeOf(call: PhoneCall): string | undefined {
    const port = Number(/^m=audio (\d+)/m.exec(call.dialog?.remoteSdp ?? '')?.[1]);
    return [a, b].find((n) => port >= n.rtp.minPort && port <= n.rtp.maxPort)?.id;
  }

  /** An echo call through the edge, held `holdMs`, hung up by the caller: who answered, the BYE's status. */
  async function echoCall(holdMs: number): Promise<{ node: string | undefined; answered: number; bye: number | undefined }> {
    const call = await caller.dial(edge.uri('echo'));
    const outcome = await within(call.outcome, 15_000, 'the echo call to be answered');
    if (outcome.status !== 200) return { node: undefined, answered: outcome.status, bye: undefined };
    await sleep(holdMs);
    const bye = await within(call.hangup(), 10_000, 'the BYE through the edge');
    return { node: nodeOf(call), answered: 200, bye };
  }

  const count = (list: Array<{ node: string | undefined }>, id: string) => list.filter((r) => r.node === id).length;

  it('balances 40 calls over both nodes; each record names its node and the trunk of the caller’s own address', async () => {
    const results: Array<Awaited<ReturnType<typeof echoCall>>> = [];
    for (let batch = 0; batch < 5; batch++) {
      results.push(...(await Promise.all(Array.from({ length: 8 }, () => echoCall(200)))));
    }
    expect(results.map((r) => `${r.answered}/${r.bye}`)).toEqual(Array(40).fill('200/200'));

    // Round robin: both nodes took a fair share.
    expect(count(results, a.id) + count(results, b.id)).toBe(40);
    expect(count(results, a.id)).toBeGreaterThanOrEqual(10);
    expect(count(results, b.id)).toBeGreaterThanOrEqual(10);
    // Ended by the caller's BYE, which reached the node holding the dialog through the edge.
    await waitFor(() => edge.lines.filter((l) => l.startsWith('in-dialog BYE')).length >= 40, 'the 40 BYEs in the edge log', 5000);
    for (const node of [a, b]) {
      const list = await echoRecords(node);
      expect(list).toHaveLength(count(results, node.id));
      for (const record of list) {
        // The node's own id; the trunk that allows 127.0.0.3 (Kamailio's 127.0.0.2 is allowed by none).
        expect(record).toMatchObject({ node_id: node.id, sip_trunk_id: node.trunkId, status: 'completed' });
      }
    }
    // The per-call log lines carry the node's id.
    expect(a.proc.output).toMatch(/"node":"node-a"[^\n]*"msg":"call started"|"msg":"call started"[^\n]*"node":"node-a"/);
    expect(b.proc.output).toMatch(/"node":"node-b"[^\n]*"msg":"call started"|"msg":"call started"[^\n]*"node":"node-b"/);
  }, 120_000);

  it('a stranger’s call through the edge is refused, even claiming the caller’s address in X-Switchboard-Source', async () => {
    const stranger = await TestPhone.create({ host: STRANGER_IP, userName: 'stranger' });
    try {
      const plain = await stranger.dial(edge.uri('echo'));
      expect((await within(plain.outcome, 10_000, 'the refusal')).status).toBe(403);
      const forged = await stranger.dial(edge.uri('echo'), { headers: [{ name: 'x-switchboard-source', value: `${CALLER_IP}:5060` }] });
      expect((await within(forged.outcome, 10_000, 'the refusal')).status).toBe(403);
    } finally {
      await stranger.close();
    }
  }, 30_000);

  it('an outbound call leaves a node through Kamailio: the carrier sees the edge, the dialog runs through it', async () => {
    const carrier = await TestPhone.create({ host: CARRIER_IP, port: 5060, userName: 'carrier' });
    try {
      const assistant = await api(a, 'POST', '/user/assistant', {
        name: 'edge outbound',
        type: 'outbound',
        mode: 'pipeline',
        voice_id: 121,
        language_id: 1,
        llm_model_id: 1,
        timezone: 'Europe/Paris',
        initial_message: 'Hello.',
        system_prompt: 'Be brief.',
        phone_number_id: a.phoneNumberId,
      });
      expect(assistant.status, JSON.stringify(assistant.body)).toBe(201);
      const placed = await api(a, 'POST', '/user/calls', { assistant_id: assistant.body.data.id, phone_number_id: a.phoneNumberId, to: CARRIER_NUMBER });
      expect(placed.status, JSON.stringify(placed.body)).toBeLessThan(300);
      const id = Number((placed.body.data ?? placed.body).id);
      await waitFor(() => carrier.answered.length === 1, 'the carrier to answer the INVITE', 10_000);
      const invite = carrier.incoming[0]!;
      // From the edge's address, the carrier still named in the Request-URI, the edge record-routing.
      expect(invite.source.address).toBe(EDGE_IP);
      expect(invite.request.uri).toBe(`sip:${CARRIER_NUMBER.slice(1)}@${CARRIER_IP}`);
      const header = (name: string) => invite.request.headers.filter((h) => h.name === name).map((h) => h.value);
      expect(header('record-route').join(',')).toContain(`${EDGE_IP}:${edge.port}`);
      expect(header('route')).toEqual([]);
      expect(header('x-switchboard-source')).toEqual([]);
      // Whoever hangs up, the BYE goes through the edge to the other side.
      const call: PhoneCall = carrier.answered[0]!;
      await sleep(300);
      const bye = call.dialog?.state === 'confirmed' ? await within(call.hangup(), 10_000, 'the carrier’s BYE') : undefined;
      await within(call.ended, 10_000, 'the outbound dialog to end');
      if (bye !== undefined) expect(bye).toBe(200);
      expect(edge.lines.some((l) => l.startsWith('in-dialog BYE'))).toBe(true);
      expect(edge.lines.some((l) => l.startsWith(`INVITE from node 127.0.0.1:${a.proc.sipPort} to carrier`))).toBe(true);
      const record = (await records(a)).find((r) => r.id === id);
      expect(record).toMatchObject({ direction: 'outbound', node_id: a.id });
    } finally {
      await carrier.close();
    }
  }, 60_000);

  it('SIGTERM on a node under load: its live calls finish, new calls go to the other node, none fails; restarted, it is back in rotation', async () => {
    // Live calls on both nodes (round robin), held open.
    const live: PhoneCall[] = [];
    for (let i = 0; i < 6; i++) {
      const call = await caller.dial(edge.uri('echo'));
      expect((await within(call.outcome, 15_000, 'a live call')).status).toBe(200);
      live.push(call);
    }
    const liveOnA = live.filter((c) => nodeOf(c) === a.id).length;
    expect(liveOnA).toBeGreaterThan(0);
    const aBefore = (await echoRecords(a)).length;
    const bBefore = (await echoRecords(b)).length;

    a.proc.child.kill('SIGTERM');
    // Draining: alive (healthz 200, says so), not ready (readyz 503), probes answered 503.
    let ready = 200;
    for (let i = 0; i < 50 && ready === 200; i++) {
      ready = (await fetch(`${a.proc.httpUrl}/readyz`)).status;
      if (ready === 200) await sleep(50);
    }
    expect(ready).toBe(503);
    const health = await fetch(`${a.proc.httpUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', ready: false, draining: true });

    // New calls while A drains: every one answered, by B.
    const fresh: Array<Awaited<ReturnType<typeof echoCall>>> = [];
    for (let i = 0; i < 5; i++) fresh.push(...(await Promise.all([echoCall(100), echoCall(100)])));
    expect(fresh.map((r) => `${r.answered}/${r.bye}`)).toEqual(Array(10).fill('200/200'));
    expect(count(fresh, b.id)).toBe(10);
    await waitFor(() => edge.lines.some((l) => l.startsWith('node down:') && l.includes(`127.0.0.1:${a.ports.sip}`)), `the edge to take the draining node out; edge log:\n${edge.lines.slice(-30).join('\n')}`, 5000);

    // The live calls, A's included, go on until their callers hang up.
    expect(a.proc.child.exitCode).toBeNull();
    for (const call of live) expect(await within(call.hangup(), 10_000, 'a live call’s BYE')).toBe(200);
    const exit = await within(a.proc.exited, 20_000, 'the drained node to exit');
    expect(exit.code).toBe(0);
    // Restarted in place (same data dir and ports). Its calls were ended by their callers, not cut by the drain.
    await restart(a);
    const aRecords = await echoRecords(a);
    expect(aRecords).toHaveLength(aBefore);
    for (const record of aRecords) expect(record).toMatchObject({ status: 'completed', end_cause: 'remote-hangup', node_id: a.id });
    expect(await echoRecords(b)).toHaveLength(bBefore + 10);

    // Back in rotation: once its probe is answered, calls reach it again.
    await waitFor(() => edge.lines.some((l) => l.startsWith('node up:') && l.includes(`127.0.0.1:${a.ports.sip}`)), `the restarted node back up; edge log:\n${edge.lines.slice(-30).join('\n')}`, 10_000);
    const again: Array<Awaited<ReturnType<typeof echoCall>>> = [];
    for (let i = 0; i < 4; i++) again.push(await echoCall(50));
    expect(again.map((r) => r.answered)).toEqual([200, 200, 200, 200]);
    expect(count(again, a.id)).toBeGreaterThan(0);
  }, 180_000);

  it('SIGKILL on a node: every new call goes to the survivor', async () => {
    b.proc.child.kill('SIGKILL');
    await within(b.proc.exited, 5000, 'the killed node to be gone');
    const results: Array<Awaited<ReturnType<typeof echoCall>>> = [];
    for (let i = 0; i < 4; i++) results.push(...(await Promise.all([echoCall(50), echoCall(50)])));
    expect(results.map((r) => `${r.answered}/${r.bye}`)).toEqual(Array(8).fill('200/200'));
    expect(count(results, a.id)).toBe(8);
  }, 120_000);

  /** Starts a node again on its data dir and ports (a rolling restart's second half). */
  async function restart(node: Node): Promise<Node> {
    node.proc = await EngineProcess.start(node.dir.path, node.env, node.ports);
    return node;
  }
});
