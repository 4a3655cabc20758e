/**
 * RTP I/O in its own thread (src/media/rtp-io/thread-io.ts) over loopback, with the event-loop
 * thread made busy on purpose:
 * - a session's packets leave at their due times (slot + SEND_LEAD_MS) although 4 ms busy loops
 *   keep delaying the media clock's passes, measured by a receiver whose arrival times the same
 *   thread stamps (the event-loop thread could not time them honestly while it is blocked);
 * - the thread wakes for the packets it holds (and the media clock's next phase), not every
 *   millisecond; a packet due before its next wake-up is sent at once;
 * - inbound datagrams reach the session stamped with when they arrived, not when the busy
 *   event-loop thread got round to them, from the right source (strangers still refused);
 * - inbound datagrams are taken in the media clock's passes while media runs, without a wake-up
 *   message each; with no media running, a wake-up brings them within INBOUND_WAKE_AFTER_MS;
 * - while media runs, native sockets are read by sweeps, not on each arrival: a far end that
 *   spreads its datagrams in time costs no wake-up each, and each keeps its kernel arrival stamp;
 * - a lost thread ends its sessions' media with `failed`, and the next bind starts a new one;
 * - its sockets are the native module's (native/rtp-udp) unless SWITCHBOARD_RTP_NATIVE=0; a
 *   port in use is refused, and a host name taken as a destination, as dgram does;
 * - a thread that ends leaves no descriptor of its own open.
 */
import dgram, { type RemoteInfo } from 'node:dgram';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import { PortPool } from '../../../src/media/port-pool.ts';
import { GRID_PHASE_MS, INBOUND_WAKE_AFTER_MS } from '../../../src/media/rtp-io/protocol.ts';
import { RtpIoThread } from '../../../src/media/rtp-io/thread-io.ts';
import type { RtpSocket } from '../../../src/media/rtp-io/types.ts';
import { serializeRtp, type RtpPacket } from '../../../src/media/rtp-packet.ts';
import { RtpSession } from '../../../src/media/rtp-session.ts';
import { SEND_LEAD_MS } from '../../../src/media/rtp-session-outbound.ts';
import { RtpPeer, sleep } from '../../support/rtp-peer.ts';
import { RTP_NATIVE } from '../../support/rtp-io.ts';
import { BASE, HOST } from './rtp-session-setup.ts';

const io = new RtpIoThread({ native: RTP_NATIVE });
const pool = new PortPool({ host: HOST, minPort: BASE + 500, maxPort: BASE + 559, io });
afterAll(() => io.close());

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Spin: a long task (or a GC pause) on the event-loop thread.
  }
}

/** Keeps blocking the event-loop thread for `blockMs` every `everyMs` until stopped. */
function keepBusy(blockMs: number, everyMs: number): () => void {
  const timer = setInterval(() => busy(blockMs), everyMs);
  return () => clearInterval(timer);
}

async function receiver(): Promise<{ socket: RtpSocket; port: number; arrivals: Array<{ ts: number; atMs: number }> }> {
  for (let port = BASE + 560; port < BASE + 580; port += 2) {
    const socket = await io.bind(HOST, port);
    if (!socket) continue;
    const arrivals: Array<{ ts: number; atMs: number }> = [];
    socket.on('message', (msg: Buffer, _rinfo: RemoteInfo, atMs?: number) => arrivals.push({ ts: msg.readUInt32BE(4), atMs: atMs! }));
    return { socket, port, arrivals };
  }
  throw new Error('no port for the receiver');
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('RTP I/O thread', () => {
  // Timing on a shared 2-core box: CI runs this file beside 18 others, and once (of several runs)
  // the median came out at 1.05 ms. A second try holds the same bound.
  it('sends each packet at its due time while the event-loop thread keeps stalling for 4 ms', { retry: 2 }, async () => {
    const rx = await receiver();
    const peer = await RtpPeer.open(HOST);
    const session = new RtpSession({ pool, publicAddress: HOST, rtpTimeoutMs: 0 });
    await session.allocate();
    session.start({ ...peer.media(pcmu), remote: { address: HOST, port: rx.port, rtcpPort: rx.port + 1 } });
    await sleep(300);
    const stop = keepBusy(4, 13);
    const from = rx.arrivals.length;
    await sleep(2000);
    stop();
    const window = rx.arrivals.slice(from);
    await session.close();
    await peer.close();
    await new Promise<void>((resolve) => rx.socket.close(() => resolve()));

    // Interval error against 20 ms × the timestamp step, as bench/calls.ts's probe measures it.
    const errors: number[] = [];
    for (let i = 1; i < window.length; i++) {
      const steps = ((window[i]!.ts - window[i - 1]!.ts) >>> 0) / 160;
      errors.push(Math.abs(window[i]!.atMs - window[i - 1]!.atMs - steps * 20));
    }
    expect(window.length).toBeGreaterThan(85);
    // In-thread, a pass the busy loop delays sends late: on a loaded 2-core box the median error
    // was 1.4-1.8 ms (p90 3.8-4.3). Here the thread's 1 ms ticks are the main error (median
    // 0.26-0.47 ms); the tail depends on the box (a pass late by more than the lead, the thread
    // waiting for a CPU), so only the median is held to it.
    expect(percentile(errors, 50)).toBeLessThan(1);
  });

  it('wakes for the packets it holds, not on a 1 ms tick; a packet due before its next wake-up goes at once', async () => {
    const rx = await receiver();
    const tx = await io.bind(HOST, BASE + 590);
    const other = await io.bind(HOST, BASE + 592);
    if (!tx || !other) throw new Error('no port for the senders');
    const payload = new Uint8Array(172).fill(0x7f);
    const packet = (ts: number): Uint8Array => {
      const p = payload.slice();
      new DataView(p.buffer).setUint32(4, ts);
      return p;
    };
    try {
      // One stream on a 20 ms grid, handed over a phase (SEND_LEAD_MS) ahead as a session does.
      const t0 = performance.now() + 20;
      const before = (await io.wakeUps())!;
      for (let k = 0; k < 50; k++) {
        const due = t0 + 20 * k;
        await sleep(Math.max(0, due - SEND_LEAD_MS - performance.now()));
        tx.sendAt(packet(160 * k), due, rx.port, HOST);
      }
      await sleep(40);
      const after = (await io.wakeUps())!;
      const onGrid = rx.arrivals.filter((a) => a.ts < 160 * 50);
      expect(onGrid).toHaveLength(50);
      const errors = onGrid.map((a) => Math.abs(a.atMs - (t0 + 20 * (a.ts / 160))));
      expect(percentile(errors, 50)).toBeLessThan(1);
      // A second of one stream, where ticking every millisecond was 1,000 wake-ups: one per
      // packet (its phase again, 20 ms on), with native sockets one per media pass before it (a
      // sweep), and one per datagram the receiver took (no media runs to drain them: a wake-up
      // message each, INBOUND_WAKE_AFTER_MS on); a few more for a timer that fired early. No wake-up messages:
      // each packet was due when the timer was armed for anyway.
      expect(after.timer - before.timer).toBeLessThan(180);
      expect(after.message - before.message).toBeLessThanOrEqual(1);

      // A packet due in half a second is queued; one due now (another socket: one socket's
      // packets keep their order) must not wait for the timer armed for it.
      tx.sendAt(packet(900_000), performance.now() + 500, rx.port, HOST);
      await sleep(30);
      const sentAt = performance.now();
      other.send(packet(800_000), rx.port, HOST);
      for (let i = 0; i < 20 && !rx.arrivals.some((a) => a.ts === 800_000); i++) await sleep(5);
      const now = rx.arrivals.find((a) => a.ts === 800_000);
      expect(now).toBeDefined();
      // Waiting for the timer would be about 470 ms; a thread waiting for one of a loaded 2-core
      // box's CPUs takes a few (3.8 ms once in CI's dgram run, beside other test files).
      expect(now!.atMs - sentAt).toBeLessThan(15);
      expect(rx.arrivals.some((a) => a.ts === 900_000)).toBe(false);
      await sleep(520);
      expect(rx.arrivals.some((a) => a.ts === 900_000)).toBe(true);

      // One socket's packets leave in the order they were handed over: one due now, handed over
      // after one due in 100 ms, waits for it rather than going out of the ring at once.
      tx.sendAt(packet(700_000), performance.now() + 100, rx.port, HOST);
      tx.sendAt(packet(600_000), performance.now(), rx.port, HOST);
      await sleep(30);
      expect(rx.arrivals.some((a) => a.ts === 600_000)).toBe(false);
      await sleep(130);
      expect(rx.arrivals.filter((a) => a.ts === 700_000 || a.ts === 600_000).map((a) => a.ts)).toEqual([700_000, 600_000]);
    } finally {
      await new Promise<void>((resolve) => tx.close(() => resolve()));
      await new Promise<void>((resolve) => other.close(() => resolve()));
      await new Promise<void>((resolve) => rx.socket.close(() => resolve()));
    }
  });

  it('stamps inbound datagrams when they arrive, however late the event-loop thread takes them, from the right source', async () => {
    const session = new RtpSession({ pool, publicAddress: HOST, rtpTimeoutMs: 0 });
    const local = await session.allocate();
    // Connected senders: their send() leaves at once (an addressed dgram send waits for the
    // event loop, which the test is about to block).
    const sender = async (): Promise<dgram.Socket> => {
      const s = dgram.createSocket('udp4');
      s.bind(0, HOST);
      await once(s, 'listening');
      s.connect(local.rtpPort, HOST);
      await once(s, 'connect');
      return s;
    };
    const peer = await sender();
    const stranger = await sender();
    const peerPort = peer.address().port;
    const seen: Array<{ seq: number; ssrc: number; atMs: number }> = [];
    session.tapInbound({ media: () => undefined, packet: (p: RtpPacket, atMs) => seen.push({ seq: p.sequenceNumber, ssrc: p.ssrc, atMs }) });
    const latched: string[] = [];
    session.on('sourceLatched', (s) => latched.push(`${s.address}:${s.port}`));
    const media = await RtpPeer.open(HOST);
    session.start({ ...media.media(pcmu), remote: { address: HOST, port: peerPort, rtcpPort: peerPort + 1 } });
    try {
      const payload = new Uint8Array(160).fill(0xff);
      // Each send between two readings of the clock: a thread descheduled around the send (a
      // loaded CI machine) widens the window instead of reading as a late stamp.
      const sentFrom: number[] = [];
      const sentBy: number[] = [];
      for (let i = 0; i < 10; i++) {
        sentFrom.push(performance.now());
        peer.send(serializeRtp({ payloadType: 0, sequenceNumber: 100 + i, timestamp: 160 * i, ssrc: 0x1234, marker: false, payload }));
        sentBy.push(performance.now());
        stranger.send(serializeRtp({ payloadType: 0, sequenceNumber: 500 + i, timestamp: 0, ssrc: 0xbad, marker: false, payload }));
        // The event-loop thread is busy right after each send: delivery waits, the stamp must not.
        busy(15);
      }
      for (let i = 0; i < 50 && seen.length < 10; i++) await sleep(10);
      expect(seen.map((s) => [s.ssrc, s.seq])).toEqual(Array.from({ length: 10 }, (_, i) => [0x1234, 100 + i]));
      // Loopback takes microseconds; a stamp taken at the drain would be 15-150 ms late.
      expect(Math.min(...seen.map((s, i) => s.atMs - sentFrom[i]!))).toBeGreaterThanOrEqual(0);
      expect(Math.max(...seen.map((s, i) => s.atMs - sentBy[i]!))).toBeLessThan(5);
      expect(latched).toEqual([`${HOST}:${peerPort}`]);
      expect(session.stats().droppedByFilter).toBe(10);
      expect(session.stats().ioDroppedInbound).toBe(0);
    } finally {
      await session.close();
      await media.close();
      peer.close();
      stranger.close();
    }
  });

  it('takes inbound datagrams in the media passes while media runs, and wakes the event loop for them only when none runs', async () => {
    const connected = async (port: number): Promise<dgram.Socket> => {
      const s = dgram.createSocket('udp4');
      s.bind(0, HOST);
      await once(s, 'listening');
      s.connect(port, HOST);
      await once(s, 'connect');
      return s;
    };
    const payload = new Uint8Array(160).fill(0xff);
    const rtp = (i: number): Uint8Array => serializeRtp({ payloadType: 0, sequenceNumber: i, timestamp: 160 * i, ssrc: 0x77, marker: false, payload });

    // Four sessions over the media clock's phases, so a pass comes every 10 ms.
    const peers = await Promise.all(Array.from({ length: 4 }, () => RtpPeer.open(HOST)));
    const sessions = peers.map(() => new RtpSession({ pool, publicAddress: HOST, rtpTimeoutMs: 0 }));
    const locals = await Promise.all(sessions.map((s) => s.allocate()));
    const sender = await connected(locals[0]!.rtpPort);
    const senderPort = sender.address().port;
    sessions.forEach((s, i) => s.start({ ...peers[i]!.media(pcmu), ...(i === 0 ? { remote: { address: HOST, port: senderPort, rtcpPort: senderPort + 1 } } : {}) }));
    const seen: number[] = [];
    sessions[0]!.tapInbound({ media: () => undefined, packet: (p: RtpPacket) => seen.push(p.sequenceNumber) });
    try {
      await sleep(60);
      const before = io.counters.inboundWakeUps;
      for (let i = 0; i < 50; i++) {
        sender.send(rtp(i));
        await sleep(20);
      }
      await sleep(40);
      expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => i));
      // One message per datagram before; now only a pass late by more than INBOUND_WAKE_AFTER_MS earns one.
      expect(io.counters.inboundWakeUps - before).toBeLessThanOrEqual(5);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
      await Promise.all(peers.map((p) => p.close()));
      sender.close();
    }

    // No media running: a bare socket's datagrams come with a wake-up, soon after they arrived.
    const bare = await receiver();
    const late: number[] = [];
    bare.socket.on('message', (_msg: Buffer, _rinfo: RemoteInfo, atMs?: number) => late.push(performance.now() - atMs!));
    const poke = await connected(bare.port);
    try {
      const before = io.counters.inboundWakeUps;
      for (let i = 0; i < 5; i++) {
        poke.send(rtp(i));
        await sleep(30);
      }
      expect(late).toHaveLength(5);
      expect(io.counters.inboundWakeUps - before).toBe(5);
      // Left in the ring that long (the worker's timer is armed for it), then taken at once.
      expect(Math.min(...late)).toBeGreaterThanOrEqual(INBOUND_WAKE_AFTER_MS - 1);
      expect(Math.max(...late)).toBeLessThan(INBOUND_WAKE_AFTER_MS + 15);
    } finally {
      poke.close();
      bare.socket.close();
    }
  });

  it('while media runs, reads datagrams spread in time without a wake-up each, stamped with when they came', async () => {
    const payload = new Uint8Array(160).fill(0xff);
    // Four sessions sending: the grid has packets in every phase, as under load.
    const peers = await Promise.all(Array.from({ length: 4 }, () => RtpPeer.open(HOST)));
    const sessions = peers.map(() => new RtpSession({ pool, publicAddress: HOST, rtpTimeoutMs: 0 }));
    const locals = await Promise.all(sessions.map((s) => s.allocate()));
    const far = dgram.createSocket('udp4');
    far.bind(0, HOST);
    await once(far, 'listening');
    far.connect(locals[0]!.rtpPort, HOST);
    await once(far, 'connect');
    const farPort = far.address().port;
    sessions.forEach((s, i) => s.start({ ...peers[i]!.media(pcmu), ...(i === 0 ? { remote: { address: HOST, port: farPort, rtcpPort: farPort + 1 } } : {}) }));
    const seen = new Map<number, number>();
    sessions[0]!.tapInbound({ media: () => undefined, packet: (p: RtpPacket, atMs) => seen.set(p.sequenceNumber, atMs) });
    try {
      await sleep(100);
      const before = (await io.wakeUps())!;
      // A far end whose datagrams come at any time, not in step with our grid (a trunk's, 7 ms
      // apart here): with reads on every arrival, each would wake the thread.
      const sentAt = new Map<number, number>();
      for (let i = 0; i < 100; i++) {
        sentAt.set(i, performance.now());
        far.send(serializeRtp({ payloadType: 0, sequenceNumber: i, timestamp: 160 * i, ssrc: 0x99, marker: false, payload }));
        await sleep(7);
      }
      await sleep(40);
      const after = (await io.wakeUps())!;
      expect([...seen.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      // Stamped on arrival (the kernel's stamp with native sockets; the worker's read with dgram).
      // Never before the send, but for the time bases' conversion: the kernel stamps on the wall
      // clock, which native/rtp-udp turns into the monotonic one by an offset it reads to within
      // 25 µs (realtime_minus_hr_ms), and this thread's time base is met to within a few µs more
      // (hrOriginMs); the dgram worker stamps on its own thread's clock, met the same way. A
      // loopback datagram can arrive within that of its send (CI saw −7 µs native, −12 µs dgram).
      const lags = [...seen].map(([seq, atMs]) => atMs - sentAt.get(seq)!);
      expect(Math.min(...lags)).toBeGreaterThanOrEqual(-0.05);
      expect(percentile(lags, 50)).toBeLessThan(io.native ? 0.5 : 2);
      if (io.native) {
        // Read by the sweeps of wake-ups the thread has for its sends and the media passes: one
        // every GRID_PHASE_MS, each finding this socket with one datagram or two waiting.
        expect(after.polledReads - before.polledReads).toBeLessThanOrEqual(2);
        expect(after.sweptReads - before.sweptReads).toBeGreaterThanOrEqual(0.9 * Math.min(100, (100 * 7) / GRID_PHASE_MS));
      }
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
      await Promise.all(peers.map((p) => p.close()));
      far.close();
    }
  });

  it('binds through the native module unless told not to, and refuses a port in use as dgram does', async () => {
    const first = await io.bind(HOST, 0);
    expect(first).toBeDefined();
    // CI builds native/rtp-udp: a missing build would quietly fall back to dgram, so say it here.
    expect(io.native).toBe(RTP_NATIVE);
    const port = first!.address().port;
    expect(await io.bind(HOST, port)).toBeUndefined();
    const plain = dgram.createSocket('udp4');
    const refused = await new Promise<NodeJS.ErrnoException>((resolve) => {
      plain.once('error', resolve);
      plain.bind(port, HOST);
    });
    expect(refused.code).toBe('EADDRINUSE');
    plain.close();
    await new Promise<void>((resolve) => first!.close(resolve));
    // Closed for real: the port is free again at once.
    const again = await io.bind(HOST, port);
    expect(again?.address().port).toBe(port);
    // Addressed to a host name, as dgram takes one (natively: once resolved).
    const rx = await receiver();
    for (let i = 0; i < 10; i++) {
      again!.send(Buffer.from([0x80, 0, 0, i, 0, 0, 0, i]), rx.port, 'localhost');
      await sleep(20);
    }
    await sleep(20);
    expect(rx.arrivals.length).toBeGreaterThanOrEqual(5);
    await new Promise<void>((resolve) => again!.close(resolve));
    await new Promise<void>((resolve) => rx.socket.close(resolve));
  });


  it('reports each datagram source as dgram does: dotted quads, v4-mapped on a dual-stack socket, IPv6', async () => {
    const sources = async (host: string): Promise<string[]> => {
      const socket = (await io.bind(host, 0))!;
      const seen: string[] = [];
      socket.on('message', (_msg: Buffer, rinfo: RemoteInfo) => seen.push(rinfo.address));
      const port = socket.address().port;
      // Every digit count of a byte, and a 0.
      const from = host === '::1' ? ['::1'] : ['127.0.0.1', '127.10.200.3', '127.255.99.0'];
      for (const address of from) {
        const s = dgram.createSocket(address.includes(':') ? 'udp6' : 'udp4');
        s.bind(0, address);
        await once(s, 'listening');
        s.send(Buffer.from([0x80, 0, 0, 1, 0, 0, 0, 1]), port, host === '::' ? '127.0.0.1' : host);
        for (let i = 0; i < 50 && seen.length < from.indexOf(address) + 1; i++) await sleep(5);
        s.close();
      }
      await new Promise<void>((resolve) => socket.close(resolve));
      return seen;
    };
    expect(await sources(HOST)).toEqual(['127.0.0.1', '127.10.200.3', '127.255.99.0']);
    expect(await sources('::')).toEqual(['::ffff:127.0.0.1', '::ffff:127.10.200.3', '::ffff:127.255.99.0']);
    expect(await sources('::1')).toEqual(['::1']);
  });
  it('a packet handed over after a disconnect goes where it is addressed, whenever the thread wakes', async () => {
    // The disconnect travels in the packets' own ring, so no wake-up of the thread (its timer,
    // busy here with a packet due every millisecond on another socket) can take the packet
    // behind it while the socket is still connected, where it would be dropped.
    const a = await receiver();
    const b = await receiver();
    const tx = (await io.bind(HOST, 0))!;
    const background = (await io.bind(HOST, 0))!;
    const ticking = setInterval(() => {
      const now = performance.now();
      for (let i = 1; i <= 5; i++) background.sendAt(Buffer.from([0x80, 0, 0, 0, 0, 0, 0, 0]), now + i, a.port, HOST);
    }, 5);
    try {
      const rounds = 300;
      for (let i = 0; i < rounds; i++) {
        await new Promise<void>((resolve, reject) => tx.connect(a.port, HOST, (e) => (e ? reject(e) : resolve())));
        tx.disconnect();
        tx.sendAt(Buffer.from([0x80, 0, 0, 0, i >>> 24, (i >>> 16) & 255, (i >>> 8) & 255, i & 255]), performance.now(), b.port, HOST);
        if (i % 10 === 9) await sleep(1);
      }
      await sleep(50);
      expect(b.arrivals.map((x) => x.ts)).toEqual(Array.from({ length: rounds }, (_, i) => i));
    } finally {
      clearInterval(ticking);
      await Promise.all([tx, background, a.socket, b.socket].map((s) => new Promise<void>((resolve) => s.close(resolve))));
    }
  });

  it('a lost thread fails its sessions cleanly; the next bind starts a new thread', async () => {
    const peer = await RtpPeer.open(HOST);
    const session = new RtpSession({ pool, publicAddress: HOST, rtpTimeoutMs: 0 });
    const local = await session.allocate();
    peer.connect({ address: HOST, port: local.rtpPort, rtcpPort: local.rtcpPort });
    session.start(peer.media(pcmu));
    const failed: Error[] = [];
    const errors: Error[] = [];
    session.on('failed', (e) => failed.push(e));
    session.on('error', (e) => errors.push(e));
    await sleep(100);
    const starts = io.starts;
    await io.close();
    expect(failed).toHaveLength(1);
    expect(errors).toHaveLength(1);
    // The session keeps running until its owner ends it; its sends go nowhere, nothing throws.
    await sleep(60);
    await session.close();
    expect(pool.inUse).toBe(0);

    const again = new RtpSession({ pool, publicAddress: HOST, rtpTimeoutMs: 0 });
    const ports = await again.allocate();
    expect(io.starts).toBe(starts + 1);
    peer.connect({ address: HOST, port: ports.rtpPort, rtcpPort: ports.rtcpPort });
    again.start(peer.media(pcmu));
    await sleep(150);
    expect(peer.received.length).toBeGreaterThan(3);
    await again.close();
    await peer.close();
    expect(pool.inUse).toBe(0);
  });

  it('a shared thread ends when the last engine holding it closes, not the first', async () => {
    const shared = new RtpIoThread();
    const a = shared.retain();
    const b = shared.retain();
    const socket = await a.bind(HOST, BASE + 590);
    expect(socket).toBeDefined();
    const closed: string[] = [];
    socket!.on('error', () => undefined);
    socket!.on('close', () => closed.push('socket'));
    await b.close();
    await b.close(); // idempotent: does not count twice
    await sleep(20);
    expect(closed).toEqual([]);
    expect(shared.openSockets).toBe(1);
    await a.close();
    expect(closed).toEqual(['socket']);
    expect(shared.openSockets).toBe(0);
  });

  it('a thread that ends leaves no descriptor open, its sockets closed or not', async () => {
    const open = (): number => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 4; i++) {
      const thread = new RtpIoThread({ native: RTP_NATIVE });
      const socket = await thread.bind(HOST, BASE + 590);
      expect(socket).toBeDefined();
      socket!.on('error', () => undefined);
      await thread.close();
    }
    await sleep(50);
    expect(open()).toBeLessThanOrEqual(before);
  });
});
