/**
 * RFC 3263 over real sockets: NAPTR, SRV and A answered by a DNS stand-in on loopback (asked by
 * Node's own resolver), and the UA failing over from one place to the next (§4.3).
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Dialog } from '../../../src/sip/dialog.ts';
import { dnsAt } from '../../../src/sip/locate.ts';
import { header } from '../../../src/sip/message.ts';
import { digestCredentials } from '../../../src/sip/user-agent-auth.ts';
import { InviteFailedError } from '../../../src/sip/user-agent-outgoing-invite.ts';
import { UserAgent } from '../../../src/sip/user-agent.ts';
import { DnsStandIn, type Zone } from '../../support/dns-stand-in.ts';
import { TestRegistrar } from '../../support/test-registrar.ts';
import { ANSWER, FAST_TIMERS, OFFER, once } from './ua-pair.ts';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function dnsServer(zone: Zone): Promise<DnsStandIn> {
  const dns = await DnsStandIn.start(zone);
  closers.push(() => dns.close());
  return dns;
}

async function ua(userName: string, dns?: DnsStandIn): Promise<UserAgent> {
  const agent = await UserAgent.create({ host: '127.0.0.1', port: 0, timers: FAST_TIMERS, userName, ...(dns ? { dns: dnsAt([dns.server]) } : {}) });
  closers.push(() => agent.close());
  return agent;
}

/** A TCP port on loopback that refuses connections (bound, then closed). */
async function refusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('RFC 3263 over the wire', () => {
  it('NAPTR → SRV → A through a real resolver; a name nobody knows is an error', async () => {
    const dns = await dnsServer({
      naptr: { 'carrier.test': [{ order: 10, preference: 10, flags: 's', service: 'SIP+D2T', regexp: '', replacement: '_sip._tcp.carrier.test' }] },
      srv: { '_sip._tcp.carrier.test': [{ priority: 10, weight: 5, port: 5070, target: 'edge1.carrier.test' }] },
      a: { 'edge1.carrier.test': ['127.0.0.9'] },
    });
    const alice = await ua('alice', dns);
    expect(await alice.locateUri('sip:+14155550100@carrier.test')).toEqual([{ transport: 'tcp', address: '127.0.0.9', port: 5070 }]);
    expect(dns.queries).toEqual([
      { name: 'carrier.test', type: 'NAPTR' },
      { name: '_sip._tcp.carrier.test', type: 'SRV' },
      { name: 'edge1.carrier.test', type: 'A' },
    ]);
    await expect(alice.locateUri('sip:a@nobody.test')).rejects.toThrow(/no SIP server found for nobody.test/);
  });

  it('an INVITE answered 503 by the first SRV target goes on to the second, in a new transaction', async () => {
    const first = await ua('first');
    const second = await ua('second');
    const dns = await dnsServer({
      srv: {
        '_sip._udp.trunk.test': [
          { priority: 10, weight: 0, port: first.port, target: 'a.trunk.test' },
          { priority: 20, weight: 0, port: second.port, target: 'b.trunk.test' },
        ],
      },
      a: { 'a.trunk.test': ['127.0.0.1'], 'b.trunk.test': ['127.0.0.1'] },
    });
    const alice = await ua('alice', dns);
    const branches: string[] = [];
    first.onInvite = (inc) => {
      branches.push(header(inc.request, 'via') ?? '');
      inc.reject(503, 'Service Unavailable');
    };
    const answered = once<Dialog>((cb) => {
      second.onInvite = (inc) => {
        branches.push(header(inc.request, 'via') ?? '');
        cb(inc.accept(ANSWER));
      };
    });
    const call = alice.invite('sip:+14155550199@trunk.test', OFFER);
    const dialog = await call.result;
    const theirs = await answered;
    expect(dialog.callId).toBe(theirs.callId);
    expect(dialog.remoteSdp).toBe(ANSWER);
    expect(branches).toHaveLength(2);
    expect(branches[0]).not.toBe(branches[1]);
    expect(await dialog.bye()).toMatchObject({ status: 200 });
  });

  it('a refused TCP connection and a UDP timeout each move the INVITE on; the last failure stands', async () => {
    const closedPort = await refusedPort();
    const live = await ua('live');
    const dns = await dnsServer({
      naptr: { 'tcp.test': [{ order: 1, preference: 1, flags: 's', service: 'SIP+D2T', regexp: '', replacement: '_sip._tcp.tcp.test' }] },
      srv: {
        '_sip._tcp.tcp.test': [
          { priority: 1, weight: 0, port: closedPort, target: 'down.tcp.test' },
          { priority: 2, weight: 0, port: live.port, target: 'up.tcp.test' },
        ],
        // Nothing listens on the first (a UDP port of the refused TCP one); the second declines.
        '_sip._udp.udp.test': [
          { priority: 1, weight: 0, port: closedPort, target: 'down.udp.test' },
          { priority: 2, weight: 0, port: live.port, target: 'up.udp.test' },
        ],
      },
      a: { 'down.tcp.test': ['127.0.0.1'], 'up.tcp.test': ['127.0.0.1'], 'down.udp.test': ['127.0.0.1'], 'up.udp.test': ['127.0.0.1'] },
    });
    const alice = await ua('alice', dns);
    let invites = 0;
    live.onInvite = (inc) => {
      invites++;
      if (invites === 1) inc.accept(ANSWER);
      else inc.reject(486, 'Busy Here');
    };
    const dialog = await alice.invite('sip:bob@tcp.test', OFFER).result;
    expect(dialog.remoteSdp).toBe(ANSWER);
    await dialog.bye();

    // UDP: Timer B (64 × T1 = 3.2 s with the test timers) on the first, then the second's 486.
    const started = Date.now();
    const err = await alice.invite('sip:bob@udp.test', OFFER).result.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(InviteFailedError);
    expect((err as InviteFailedError).status).toBe(486);
    expect(Date.now() - started).toBeGreaterThanOrEqual(64 * FAST_TIMERS.t1Ms - 50);
    expect(invites).toBe(2);
  });

  it('a CANCEL wanted stops the failover', async () => {
    const first = await ua('first');
    const second = await ua('second');
    const dns = await dnsServer({
      srv: { '_sip._udp.c.test': [{ priority: 1, weight: 0, port: first.port, target: 'x.c.test' }, { priority: 2, weight: 0, port: second.port, target: 'x.c.test' }] },
      a: { 'x.c.test': ['127.0.0.1'] },
    });
    const alice = await ua('alice', dns);
    let secondAsked = 0;
    second.onInvite = () => secondAsked++;
    const call = alice.invite('sip:bob@c.test', OFFER);
    first.onInvite = (inc) => {
      // The caller gives up just as the first place answers 503.
      call.cancel();
      inc.reject(503);
    };
    const err = await call.result.then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ status: 503 });
    await new Promise((r) => setTimeout(r, 200));
    expect(secondAsked).toBe(0);
  });

  it('REGISTER fails over from a registrar answering 503, and answers the challenge where it came from', async () => {
    const down = await TestRegistrar.start('127.0.0.1', 'alice', 's3cret');
    const up = await TestRegistrar.start('127.0.0.1', 'alice', 's3cret');
    closers.push(() => down.close(), () => up.close());
    down.failWith = 503;
    const port = (r: TestRegistrar) => Number(r.address.split(':')[1]);
    const dns = await dnsServer({
      srv: { '_sip._udp.provider.test': [{ priority: 1, weight: 0, port: port(down), target: 'r.provider.test' }, { priority: 2, weight: 0, port: port(up), target: 'r.provider.test' }] },
      a: { 'r.provider.test': ['127.0.0.1'] },
    });
    const alice = await ua('alice', dns);
    const { registration, result } = alice.register({ registrar: 'sip:provider.test', aor: 'sip:alice@provider.test', credentials: digestCredentials('alice', 's3cret'), expiresSec: 60 });
    closers.push(() => registration.close());
    expect((await result).status).toBe(200);
    expect(down.registers).toHaveLength(1);
    expect(up.registers).toHaveLength(2); // challenged, then answered
    expect(up.accepted).toBe(1);
  });
});
