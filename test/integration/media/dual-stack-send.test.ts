/**
 * An RTP socket bound to `::` (SIP_HOST=:: makes the pool bind there) sends to a peer whose SDP
 * names an IPv4 address before that peer has sent anything: addressed sends and a connected
 * socket go to the v4-mapped address (a plain IPv4 one fails with EINVAL on an IPv6 socket).
 * On the test run's RTP I/O (the I/O thread, native or not; in-thread dgram with SWITCHBOARD_RTP_THREAD=0).
 */
import dgram from 'node:dgram';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { UdpSender } from '../../../src/media/udp-sender.ts';
import type { RtpSocket } from '../../../src/media/rtp-io/types.ts';
import { testRtpIo } from '../../support/rtp-io.ts';
import { BASE } from './rtp-session-setup.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function dualStackSocket(): Promise<RtpSocket> {
  for (let port = BASE + 620; port < BASE + 640; port += 2) {
    const s = await testRtpIo.bind('::', port);
    if (!s) continue;
    s.on('error', () => undefined);
    cleanups.push(() => new Promise<void>((resolve) => s.close(() => resolve())));
    return s;
  }
  throw new Error('no free port for a test socket');
}

async function ipv4Peer(): Promise<{ port: number; got: Buffer[] }> {
  const s = dgram.createSocket('udp4');
  const got: Buffer[] = [];
  s.on('message', (m) => got.push(m));
  s.bind(0, '127.0.0.1');
  await once(s, 'listening');
  cleanups.push(() => new Promise<void>((resolve) => s.close(() => resolve())));
  return { port: s.address().port, got };
}

async function until(check: () => boolean): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > 2000) throw new Error('datagrams did not arrive within 2 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('a dual-stack RTP socket', () => {
  it.each([
    ['addressed', false],
    ['connected', true],
  ] as const)('reaches an IPv4 peer it has not heard from (%s sends)', async (_how, pin) => {
    const socket = await dualStackSocket();
    expect(socket.address().family).toBe('IPv6');
    const peer = await ipv4Peer();
    const sender = new UdpSender(socket);
    cleanups.push(() => sender.close());
    sender.aim({ address: '127.0.0.1', port: peer.port }, pin);
    for (let i = 0; i < 5; i++) {
      sender.send(Buffer.from([0x80, 0, 0, i]), performance.now());
      await new Promise((r) => setTimeout(r, 20));
    }
    await until(() => peer.got.length >= 3);
    expect(peer.got[0]![0]).toBe(0x80);
  });
});
