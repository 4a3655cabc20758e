/**
 * Connected RTP sockets over loopback: the session connects its RTP socket to the far end once
 * the media lock is final (the SDP's exact transport address sent: then dgram no longer resolves
 * every datagram's address and the kernel drops strangers), a re-INVITE to another port or a
 * hold disconnects it, strangers stay refused, a lock learned elsewhere stays unconnected, and a
 * peer that stops listening puts it back on addressed sends. A socket bound to the wildcard
 * address is connected only where that keeps the peer's datagrams (connect-guard.ts). Time runs
 * on a ManualClock; the sockets are real.
 */
import dgram from 'node:dgram';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import { PortPool, type RtpPortPair } from '../../../src/media/port-pool.ts';
import { serializeRtp, type RtpPacket } from '../../../src/media/rtp-packet.ts';
import { RtpSession, type RtpSessionOptions } from '../../../src/media/rtp-session.ts';
import type { NegotiatedMedia } from '../../../src/media/sdp-negotiate.ts';
import type { TransportAddress } from '../../../src/media/source-filter.ts';
import { UdpSender } from '../../../src/media/udp-sender.ts';
import type { RtpSocket } from '../../../src/media/rtp-io/types.ts';
import { testRtpIo } from '../../support/rtp-io.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { RtpPeer, sleep } from '../../support/rtp-peer.ts';
import { BASE, HOST } from './rtp-session-setup.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function udp(address = HOST): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  s.on('error', () => undefined);
  s.bind(0, address);
  await once(s, 'listening');
  cleanups.push(() => new Promise<void>((resolve) => s.close(() => resolve())));
  return s;
}

let nextPort = BASE + 460;

/**
 * A socket for a UdpSender, on the test run's RTP I/O (the I/O thread; in-thread
 * dgram with SWITCHBOARD_RTP_THREAD=0). On an explicit port, as the pool binds them: Linux lets go of an
 * ephemeral port when the socket disconnects, and the I/O thread's socket reports the port it bound.
 */
async function rtpSocket(): Promise<RtpSocket> {
  let s: RtpSocket | undefined;
  for (let i = 0; i < 20 && !s; i++) {
    s = await testRtpIo.bind(HOST, nextPort);
    nextPort = nextPort >= BASE + 479 ? BASE + 460 : nextPort + 1;
  }
  if (!s) throw new Error('no free port for a test socket');
  s.on('error', () => undefined);
  cleanups.push(() => new Promise<void>((resolve) => s.close(() => resolve())));
  return s;
}

/** Resolves once `check()` holds (real time: datagrams cross loopback), or fails after 2 s. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await sleep(10);
  expect(check(), what).toBe(true);
}

/**
 * Moves the session's clock on in 200 ms steps (10 packets each), letting the loopback sockets
 * drain in between: one jump of seconds would burst more datagrams than a receive buffer holds.
 */
async function advance(clock: ManualClock, ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 200) {
    clock.advance(Math.min(200, left));
    await sleep(5);
  }
}

async function open(options: { poolHost?: string; publicAddress?: string; session?: Partial<RtpSessionOptions> } = {}) {
  const clock = new ManualClock(0);
  const pool = new PortPool({ host: options.poolHost ?? HOST, minPort: BASE + 400, maxPort: BASE + 439, io: testRtpIo });
  let pair: RtpPortPair | undefined;
  const allocate = pool.allocate.bind(pool);
  pool.allocate = async (signal) => (pair = await allocate(signal));
  const peer = await RtpPeer.open(HOST);
  const publicAddress = options.publicAddress ?? HOST;
  const session = new RtpSession({ pool, publicAddress, clock, rtpTimeoutMs: 0, ...options.session });
  const errors: Error[] = [];
  session.on('error', (e) => errors.push(e));
  const accepted: RtpPacket[] = [];
  session.tapInbound({ media: () => undefined, packet: (p) => accepted.push({ ...p }) }); // the packet object is reused: copy
  const local = await session.allocate();
  peer.connect({ address: publicAddress, port: local.rtpPort, rtcpPort: local.rtcpPort });
  session.start(peer.media(pcmu));
  cleanups.push(async () => {
    await session.close();
    await peer.close();
    expect(pool.inUse).toBe(0);
  });
  /** Where the session's RTP socket is connected to (undefined: not connected). */
  const connectedTo = (): TransportAddress | undefined => {
    try {
      const { address, port } = pair!.rtp.remoteAddress();
      return { address, port };
    } catch {
      return undefined;
    }
  };
  return { clock, session, peer, errors, accepted, connectedTo, local };
}

const payload = new Uint8Array(160).fill(0x55);

describe('RtpSession over a connected socket', () => {
  it('connects once the SDP transport address sends, moves with a re-INVITE, disconnects on hold; strangers stay refused', async () => {
    const { clock, session, peer, errors, accepted, connectedTo, local } = await open();
    const stranger = await udp('127.0.0.3');
    const strangerSends = (n: number, seq: number): void => {
      for (let i = 0; i < n; i++) stranger.send(serializeRtp({ payloadType: 0, sequenceNumber: seq + i, timestamp: 0, ssrc: 0xbad, payload }), local.rtpPort, HOST);
    };

    // A stranger first: refused, counted, nothing locked, nothing connected.
    strangerSends(3, 100);
    await until(() => session.stats().droppedByFilter === 3, 'the stranger refused');
    expect(accepted).toHaveLength(0);
    expect(connectedTo()).toBeUndefined();

    // The peer's first packet locks and connects (its port is the SDP's: the lock is final).
    for (let i = 0; i < 3; i++) peer.sendPacket(0, 160 * i, payload);
    await until(() => accepted.length === 3, 'the peer heard');
    await until(() => connectedTo() !== undefined, 'connected on the lock');
    expect(connectedTo()).toEqual({ address: HOST, port: peer.rtpPort });

    // Sending goes on over the connected socket: one packet per slot, sequence unbroken.
    await advance(clock, 400);
    await until(() => peer.received.length >= 20, 'the packets of 400 ms');
    const seqs = peer.received.map((p) => p.sequenceNumber);
    expect(seqs).toEqual(seqs.map((_, i) => (seqs[0]! + i) & 0xffff));
    const before = peer.received.length;
    clock.advance(100);
    await until(() => peer.received.length === before + 5, 'five more over the connected socket');
    expect(peer.received.map((p) => (p.sequenceNumber - seqs[0]!) & 0xffff)).toEqual(peer.received.map((_, i) => i));

    // The peer is still heard; a stranger is not (dropped unseen now, by the kernel: the counter stays).
    strangerSends(5, 200);
    for (let i = 3; i < 6; i++) peer.sendPacket(0, 160 * i, payload);
    await until(() => accepted.length === 6, 'the peer still heard');
    await sleep(30);
    expect(accepted.every((p) => p.ssrc === peer.ssrc)).toBe(true);
    expect(session.stats().droppedByFilter).toBe(3);

    // A re-INVITE to another port: disconnected at once, addressed sends go to the new port.
    const moved = await RtpPeer.open(HOST);
    cleanups.push(() => moved.close());
    moved.connect({ address: HOST, port: local.rtpPort, rtcpPort: local.rtcpPort });
    session.update(moved.media(pcmu));
    expect(connectedTo()).toBeUndefined();
    await sleep(20); // what left before the re-INVITE has arrived
    const oldCount = peer.received.length;
    clock.advance(60);
    await until(() => moved.received.length >= 3, 'packets at the new port');
    expect(peer.received.length).toBe(oldCount);
    // A straggler from the old port (same address) comes first: taken for now, unconnected,
    // until the new SDP port sends, which takes the lock for good.
    peer.sendPacket(0, 160 * 7, payload);
    await until(() => accepted.length === 7, 'the straggler');
    await sleep(20);
    expect(connectedTo()).toBeUndefined();
    moved.sendPacket(0, 0, payload);
    await until(() => accepted.some((p) => p.ssrc === moved.ssrc), 'the new address heard');
    await until(() => connectedTo()?.port === moved.rtpPort, 'connected to the new port');
    peer.sendPacket(0, 160 * 8, payload);
    moved.sendPacket(0, 160, payload);
    await until(() => accepted.filter((p) => p.ssrc === moved.ssrc).length === 2, 'the new address still heard');
    await sleep(20);
    expect(accepted.filter((p) => p.ssrc === peer.ssrc)).toHaveLength(7);
    await sleep(20);
    const movedCount = moved.received.length;
    clock.advance(40);
    await until(() => moved.received.length === movedCount + 2, 'two more at the new port');

    // Hold (c=0.0.0.0): not sending, not connected; the lock holds (strangers stay out).
    const held: NegotiatedMedia = { ...moved.media(pcmu), remote: { address: '0.0.0.0', port: moved.rtpPort, rtcpPort: moved.rtcpPort } };
    session.update(held);
    expect(connectedTo()).toBeUndefined();
    await sleep(20);
    const heldCount = moved.received.length;
    await advance(clock, 400);
    const dropped = session.stats().droppedByFilter;
    strangerSends(4, 300);
    await until(() => session.stats().droppedByFilter === dropped + 4, 'strangers refused on hold');
    expect(moved.received.length).toBe(heldCount);
    expect(connectedTo()).toBeUndefined();

    // Off hold: addressed sends at once, connected again on the peer's first packet.
    session.update(moved.media(pcmu));
    clock.advance(40);
    await until(() => moved.received.length > heldCount, 'sending again off hold');
    expect(connectedTo()).toBeUndefined();
    moved.sendPacket(0, 320, payload);
    await until(() => connectedTo()?.port === moved.rtpPort, 'connected again off hold');
    expect(errors).toEqual([]);
  });

  it('a source on another port of the SDP address is answered there, unconnected, until the SDP port itself sends', async () => {
    const { clock, session, peer, accepted, connectedTo, local } = await open();
    // The SDP says `peer`, but media comes from (and must go back to) another port, as through a
    // port-translating router.
    const nat = await udp();
    const natGot: Buffer[] = [];
    nat.on('message', (m) => natGot.push(m));
    for (let i = 0; i < 4; i++) nat.send(serializeRtp({ payloadType: 0, sequenceNumber: 50 + i, timestamp: 160 * i, ssrc: 0xcafe, payload }), local.rtpPort, HOST);
    await until(() => accepted.length === 4, 'the other port taken at once (same address)');
    clock.advance(20);
    await until(() => natGot.length >= 1, 'our packets at that port');
    await advance(clock, 400);
    expect(connectedTo()).toBeUndefined();
    // The SDP transport address takes the lock and is connected to.
    peer.sendPacket(0, 0, payload);
    await until(() => connectedTo()?.port === peer.rtpPort, 'connected to the SDP port');
    nat.send(serializeRtp({ payloadType: 0, sequenceNumber: 54, timestamp: 640, ssrc: 0xcafe, payload }), local.rtpPort, HOST);
    await sleep(30);
    expect(accepted.filter((p) => p.ssrc === 0xcafe)).toHaveLength(4);
    expect(accepted.filter((p) => p.ssrc === peer.ssrc)).toHaveLength(1);
    // Every packet we sent so far went to the port that sent to us; from now on, to the SDP port.
    expect(natGot.length).toBe(session.stats().packetsSent);
    const natCount = natGot.length;
    clock.advance(40);
    await until(() => peer.received.length === 2, 'two at the SDP port');
    expect(natGot.length).toBe(natCount);
  });

  it('a trunk that learns (media_nat): a source on another address passes probation and is answered there', async () => {
    const { clock, session, accepted, connectedTo, local } = await open({ session: { learnSource: true } });
    const nat = await udp('127.0.0.3');
    const natGot: Buffer[] = [];
    nat.on('message', (m) => natGot.push(m));
    for (let i = 0; i < 6; i++) nat.send(serializeRtp({ payloadType: 0, sequenceNumber: 50 + i, timestamp: 160 * i, ssrc: 0xcafe, payload }), local.rtpPort, HOST);
    // Four in sequence to pass probation (those are dropped), then the rest heard.
    await until(() => accepted.length === 3, 'learned after probation');
    expect(session.stats().droppedByFilter).toBe(3);
    clock.advance(40);
    await until(() => natGot.length >= 2, 'our packets at the learned source');
    expect(connectedTo()).toBeUndefined();
  });

  it('bound to the wildcard address, connects only where the route back leaves from the advertised address', async () => {
    // Advertised 127.0.0.2, caller on 127.0.0.1: a connect() would pin the socket to 127.0.0.1,
    // and the caller's datagrams to 127.0.0.2 would no longer reach it.
    const apart = await open({ poolHost: '0.0.0.0', publicAddress: '127.0.0.2' });
    for (let i = 0; i < 3; i++) apart.peer.sendPacket(0, 160 * i, payload);
    await until(() => apart.accepted.length === 3, 'the caller heard');
    // Well past the old 3 s latch window, after which the socket used to be connected.
    await advance(apart.clock, 4000);
    await sleep(50);
    expect(apart.connectedTo()).toBeUndefined();
    for (let i = 3; i < 6; i++) apart.peer.sendPacket(0, 160 * i, payload);
    await until(() => apart.accepted.length === 6, 'the caller still heard');
    apart.clock.advance(40);
    await until(() => apart.peer.received.length >= 2, 'our packets at the caller');

    // Advertised 127.0.0.1, the route's own source: connected, as before.
    const same = await open({ poolHost: '0.0.0.0', publicAddress: '127.0.0.1' });
    same.peer.sendPacket(0, 0, payload);
    await until(() => same.connectedTo() !== undefined, 'connected where it keeps the media');
    for (let i = 1; i < 4; i++) same.peer.sendPacket(0, 160 * i, payload);
    await until(() => same.accepted.length === 4, 'the caller heard over the connected socket');
  });

  it('a peer that stops listening puts the socket back on addressed sends, with no error per datagram', async () => {
    const { clock, peer, errors, connectedTo } = await open();
    peer.sendPacket(0, 0, payload);
    await until(() => connectedTo() !== undefined, 'connected');
    await new Promise<void>((resolve) => peer.rtp.close(() => resolve()));
    // ICMP port unreachable comes back; a connected socket reports it (ECONNREFUSED).
    for (let i = 0; i < 10 && connectedTo() !== undefined; i++) {
      clock.advance(20);
      await sleep(10);
    }
    expect(connectedTo()).toBeUndefined();
    await advance(clock, 600);
    await sleep(30);
    // Addressed sends ignore ICMP, and that peer is not connected to again.
    expect(connectedTo()).toBeUndefined();
    expect(errors).toEqual([]);
  });
});

describe('UdpSender', () => {
  it('holds the datagrams sent while it connects and sends them, in order, once connected', async () => {
    const a = await rtpSocket();
    const b = await udp();
    const c = await udp();
    const got: Array<[string, number]> = [];
    b.on('message', (m) => got.push([m.toString(), 1]));
    c.on('message', (m) => got.push([m.toString(), 2]));
    const errors: Error[] = [];
    a.on('error', (e) => errors.push(e));
    const sender = new UdpSender(a);
    const bAddr = { address: HOST, port: b.address().port };
    const cAddr = { address: HOST, port: c.address().port };

    sender.aim(bAddr, false);
    sender.send(Buffer.from('0'), performance.now());
    sender.aim(bAddr, true);
    sender.send(Buffer.from('1'), performance.now());
    sender.send(Buffer.from('2'), performance.now());
    await until(() => got.length === 3, 'three datagrams');
    expect(sender.connectedTo).toEqual(bAddr);
    expect(got).toEqual([
      ['0', 1],
      ['1', 1],
      ['2', 1],
    ]);

    // Re-aimed while a connect is under way: what waited follows the new aim.
    sender.aim(cAddr, true);
    expect(sender.connectedTo).toBeUndefined();
    sender.send(Buffer.from('3'), performance.now());
    sender.aim(bAddr, true);
    sender.send(Buffer.from('4'), performance.now());
    await until(() => got.length === 5, 'two more');
    expect(got.slice(3)).toEqual([
      ['3', 1],
      ['4', 1],
    ]);
    expect(sender.connectedTo).toEqual(bAddr);

    // Unpinned: addressed sends, and the socket takes datagrams from anyone again.
    sender.aim(cAddr, false);
    expect(sender.connectedTo).toBeUndefined();
    sender.send(Buffer.from('5'), performance.now());
    await until(() => got.length === 6, 'an addressed one');
    expect(got[5]).toEqual(['5', 2]);
    const toA: string[] = [];
    a.on('message', (m) => toA.push(m.toString()));
    c.send('hello', a.address().port, HOST);
    await until(() => toA.length === 1, 'a datagram from another socket');

    sender.close();
    expect(errors).toEqual([]);
  });

  it('a connect that fails leaves addressed sends; closed while connecting, the socket is left unconnected', async () => {
    const a = await rtpSocket();
    const b = await udp();
    const sender = new UdpSender(a);
    // dgram refuses port 0 at once: no throw out of aim(), no connection, no retry.
    expect(() => sender.aim({ address: HOST, port: 0 }, true)).not.toThrow();
    expect(sender.connectedTo).toBeUndefined();
    sender.close();

    const closing = new UdpSender(a);
    closing.aim({ address: HOST, port: b.address().port }, true);
    closing.close();
    await sleep(20);
    expect(() => a.remoteAddress()).toThrow();
  });
});
