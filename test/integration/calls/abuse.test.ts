import dgram from 'node:dgram';
import net from 'node:net';
import client from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { parseMessage } from '../../../src/sip/parser.ts';
import { header } from '../../../src/sip/message.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { sleep } from '../../support/test-phone-rtp.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await h?.close();
  h = undefined;
});

/** A bare UDP source for raw requests; counts the responses it gets. */
async function rawSource(host: string) {
  const socket = dgram.createSocket('udp4');
  const responses: number[] = [];
  socket.on('message', (msg) => {
    const parsed = parseMessage(msg);
    if (parsed.ok && parsed.message.kind === 'response') responses.push(parsed.message.status);
    // A 400 echoes the malformed header it refuses, so the parser here rejects it too: read the status line.
    else if (!parsed.ok) responses.push(Number(/^SIP\/2\.0 (\d{3})/.exec(msg.toString('latin1'))?.[1] ?? 0));
  });
  await new Promise<void>((r) => socket.bind(0, host, r));
  cleanups.push(() => socket.close());
  let n = 0;
  const send = (port: number, userAgent = 'probe/1.0') => {
    n++;
    socket.send(options(port, host, socket.address().port, 'UDP', n, { userAgent }), port, '127.0.0.1');
  };
  /** An OPTIONS the parser rejects (malformed CSeq) but can answer with 400. */
  const sendMalformed = (port: number) => {
    n++;
    socket.send(options(port, host, socket.address().port, 'UDP', n, { cseq: `${n}x OPTIONS` }), port, '127.0.0.1');
  };
  return { send, sendMalformed, responses };
}

function options(port: number, host: string, localPort: number, transport: 'UDP' | 'TCP', n: number, o: { userAgent?: string; cseq?: string; contentLength?: string }): string {
  return [
    `OPTIONS sip:100@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/${transport} ${host}:${localPort};branch=z9hG4bK-raw${n}-${Date.now()}`,
    'Max-Forwards: 70',
    `From: <sip:probe@${host}>;tag=t${n}`,
    `To: <sip:100@127.0.0.1>`,
    `Call-ID: raw-${n}-${Date.now()}@${host}`,
    `CSeq: ${o.cseq ?? `${n} OPTIONS`}`,
    `User-Agent: ${o.userAgent ?? 'probe/1.0'}`,
    `Content-Length: ${o.contentLength ?? '0'}`,
    '',
    '',
  ].join('\r\n');
}

/** One TCP connection from `host`: what it received and whether the engine closed it. */
async function tcpSource(host: string, port: number) {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress: host });
  cleanups.push(() => socket.destroy());
  let received = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', () => undefined); // a refused connection may reset
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    get received() {
      return received;
    },
    get closed() {
      return closed;
    },
    statuses: () => [...received.matchAll(/^SIP\/2\.0 (\d{3})/gm)].map((m) => Number(m[1])),
  };
}

async function metricValue(registry: client.Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want));
  return hit?.value ?? 0;
}

async function phone(host: string): Promise<TestPhone> {
  const p = await TestPhone.create({ host });
  cleanups.unshift(() => p.close());
  return p;
}

describe('abuse resistance', () => {
  it('drops scanner traffic silently, before any transaction, and bans the source', async () => {
    h = await harness();
    const src = await rawSource('127.0.0.6');
    src.send(h.server.port, 'friendly-scanner');
    src.send(h.server.port, 'sipvicious 0.3');
    await sleep(150);
    expect(src.responses).toEqual([]);
    expect(h.server.ua.stats.transactions).toBe(0);
    expect(h.server.abuse.stats).toMatchObject({ scanners: 1, banned: 1 });
    // Banned: even an innocent-looking request from there now goes unanswered.
    src.send(h.server.port);
    await sleep(100);
    expect(src.responses).toEqual([]);
  });

  it('bans a source that floods, but never a trunk’s own carrier', async () => {
    h = await harness();
    await h.trunk(); // trusts 127.0.0.1
    const flood = await rawSource('127.0.0.7');
    for (let i = 0; i < 40; i++) flood.send(h.server.port);
    const carrier = await rawSource('127.0.0.1');
    for (let i = 0; i < 40; i++) carrier.send(h.server.port);
    await until(() => carrier.responses.length === 40, 2000, 'carrier answered');
    await sleep(100);
    expect(flood.responses).toHaveLength(20);
    expect(h.server.abuse.isBanned('127.0.0.7')).toBe(true);
    expect(h.server.abuse.isBanned('127.0.0.1')).toBe(false);
  });

  it('bans after repeated refusals (strikes); the refusal that bans is not answered', async () => {
    h = await harness({ abuse: { maxStrikes: 3 } });
    await h.trunk();
    const p = await phone('127.0.0.8');
    for (let i = 0; i < 2; i++) expect((await (await p.dial(h.target('+14155550100'))).outcome).status).toBe(403);
    // The third strike bans the source before its 403 goes out: it hears no final answer.
    const third = await p.dial(h.target('+14155550100'));
    await until(() => h!.server.abuse.isBanned('127.0.0.8'), 2000, 'source banned');
    const answered = await Promise.race([third.outcome.then(() => true), sleep(500).then(() => false)]);
    expect(answered).toBe(false);
    third.cancel();
  });

  it('malformed messages over UDP count towards a ban: after it the source gets nothing, not even a 400; another source still gets its 400', async () => {
    const registry = new client.Registry();
    h = await harness({ metricsRegistry: registry });
    const bad = await rawSource('127.0.0.9');
    // The default guard bans at the 10th strike within a minute; well under 20 requests a second.
    for (let i = 0; i < 12; i++) {
      bad.sendMalformed(h.server.port);
      await sleep(10);
    }
    await until(() => bad.responses.length >= 9, 2000, '400s before the ban');
    await sleep(150);
    expect(bad.responses).toEqual(Array.from({ length: 9 }, () => 400));
    expect(h.server.abuse.isBanned('127.0.0.9')).toBe(true);
    expect(await metricValue(registry, 'switchboard_sip_abuse_bans_total')).toBe(1);
    // Banned: a well-formed request and more garbage both go unanswered.
    bad.send(h.server.port);
    bad.sendMalformed(h.server.port);
    await sleep(150);
    expect(bad.responses).toHaveLength(9);
    expect(h.server.ua.stats.transactions).toBe(0);

    const innocent = await rawSource('127.0.0.10');
    innocent.sendMalformed(h.server.port);
    innocent.send(h.server.port);
    await until(() => innocent.responses.length === 2, 2000, 'innocent source answered');
    expect(innocent.responses.sort()).toEqual([200, 400]);
    expect(h.server.abuse.isBanned('127.0.0.10')).toBe(false);
    // 10 from the banned source until its ban (the rest were dropped unread), 1 from the other.
    expect(await metricValue(registry, 'switchboard_sip_malformed_total')).toBe(11);
  });

  it('framing and parse failures over TCP count towards a ban; the banned source’s connection is closed and new ones refused without a byte', async () => {
    const registry = new client.Registry();
    h = await harness({ abuse: { maxStrikes: 4 }, metricsRegistry: registry });
    const port = h.server.port;
    // Three unparseable messages on one connection: each answered 400, the connection stays.
    const first = await tcpSource('127.0.0.12', port);
    for (let i = 1; i <= 3; i++) first.socket.write(options(port, '127.0.0.12', first.socket.localPort!, 'TCP', i, { cseq: `${i}x OPTIONS` }));
    await until(() => first.statuses().length === 3, 2000, 'three 400s');
    expect(first.statuses()).toEqual([400, 400, 400]);
    expect(first.closed).toBe(false);
    // A broken Content-Length loses framing: the 4th strike bans, so no 400 this time, and the connection is closed.
    const second = await tcpSource('127.0.0.12', port);
    second.socket.write(options(port, '127.0.0.12', second.socket.localPort!, 'TCP', 4, { contentLength: 'abc' }));
    await until(() => second.closed, 2000, 'connection closed after framing was lost');
    expect(second.received).toBe('');
    expect(h.server.abuse.isBanned('127.0.0.12')).toBe(true);
    expect(await metricValue(registry, 'switchboard_sip_abuse_bans_total')).toBe(1);
    // The connection still open from before the ban is closed on its next bytes, even a keep-alive ping.
    first.socket.write('\r\n\r\n');
    await until(() => first.closed, 2000, 'open connection of the banned source closed');
    expect(first.statuses()).toEqual([400, 400, 400]);
    expect(first.received.endsWith('\r\n\r\n')).toBe(true); // no pong after the last 400
    // A new connection is refused at once: closed without a byte, its request unanswered.
    const third = await tcpSource('127.0.0.12', port);
    third.socket.write(options(port, '127.0.0.12', third.socket.localPort!, 'TCP', 5, {}));
    await until(() => third.closed, 2000, 'new connection refused');
    expect(third.received).toBe('');
    await until(() => h!.server.ua.stats.connections === 0, 2000, 'no connection kept for the banned source');
    // Another source over TCP is unaffected.
    const other = await tcpSource('127.0.0.13', port);
    other.socket.write(options(port, '127.0.0.13', other.socket.localPort!, 'TCP', 1, {}));
    await until(() => other.statuses().length === 1, 2000, 'other source answered');
    expect(other.statuses()).toEqual([200]);
  });

  it('caps concurrent calls per trunk with 486 and a Reason header', async () => {
    h = await harness({ limits: { maxPerTrunk: 1 } });
    const trunk = await h.trunk();
    await h.assistant(trunk.phoneNumberId);
    const p = await phone('127.0.0.1');
    const first = await p.call(h.target('+14155550100'));
    const second = await p.dial(h.target('+14155550100'));
    const refused = await second.invite!.result.then(
      () => undefined,
      (e: { response?: Parameters<typeof header>[0] }) => e.response,
    );
    expect(refused && 'status' in refused ? refused.status : 0).toBe(486);
    expect(header(refused!, 'reason')).toContain('trunk concurrent call limit');
    await first.hangup();
    await until(() => h!.server.registry.size === 0);
    const statuses = ((await h.req('GET', '/user/calls')).body as Array<{ status: string; end_cause: string }>).map((c) => c.end_cause);
    expect(statuses.sort()).toEqual(['remote-hangup', 'trunk-call-limit']);
  });
});
