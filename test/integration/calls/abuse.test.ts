import dgram from 'node:dgram';
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
  });
  await new Promise<void>((r) => socket.bind(0, host, r));
  cleanups.push(() => socket.close());
  let n = 0;
  const send = (port: number, userAgent = 'probe/1.0') => {
    n++;
    const text = [
      `OPTIONS sip:100@127.0.0.1:${port} SIP/2.0`,
      `Via: SIP/2.0/UDP ${host}:${socket.address().port};branch=z9hG4bK-raw${n}-${Date.now()}`,
      'Max-Forwards: 70',
      `From: <sip:probe@${host}>;tag=t${n}`,
      `To: <sip:100@127.0.0.1>`,
      `Call-ID: raw-${n}-${Date.now()}@${host}`,
      `CSeq: ${n} OPTIONS`,
      `User-Agent: ${userAgent}`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    socket.send(text, port, '127.0.0.1');
  };
  return { send, responses };
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

  it('bans after repeated refusals (strikes)', async () => {
    h = await harness({ abuse: { maxStrikes: 3 } });
    await h.trunk();
    const p = await phone('127.0.0.8');
    for (let i = 0; i < 3; i++) expect((await (await p.dial(h.target('+14155550100'))).outcome).status).toBe(403);
    expect(h.server.abuse.isBanned('127.0.0.8')).toBe(true);
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
