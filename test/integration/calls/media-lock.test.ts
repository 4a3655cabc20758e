/**
 * The media lock over whole calls (real SIP and RTP over loopback, the `echo` number: what the
 * caller hears back is exactly what the engine heard):
 * - an attacker on another loopback address who sprays RTP at the call's port before, during and
 *   after the caller's first packets, while the caller stays quiet past the old 3 s learning
 *   window, receives nothing and injects nothing;
 * - a caller keeps being heard for the whole call when the address the engine advertises is not
 *   the source address of the route back to the caller (RTP bound to the wildcard address,
 *   127.0.0.2 advertised, the caller on 127.0.0.1).
 */
import dgram from 'node:dgram';
import { once } from 'node:events';
import client from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { registerRtpFilterMetric } from '../../../src/media/media-metrics.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { serializeRtp } from '../../../src/media/rtp-packet.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { sleep, toneShare } from '../../support/test-phone-rtp.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
const phones: TestPhone[] = [];
const sockets: dgram.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  for (const p of phones.splice(0)) await p.close();
  await h?.close();
  h = undefined;
});

async function phone(host = '127.0.0.1'): Promise<TestPhone> {
  const p = await TestPhone.create({ host });
  phones.push(p);
  return p;
}

/** A stranger sending a perfect PCMU stream (one SSRC, consecutive sequence numbers) of a 1 kHz tone every 20 ms. */
async function attacker(host: string, to: { address: string; port: number }) {
  const socket = dgram.createSocket('udp4');
  socket.on('error', () => undefined);
  socket.bind(0, host);
  await once(socket, 'listening');
  sockets.push(socket);
  let received = 0;
  socket.on('message', () => received++);
  let seq = 1000;
  let n = 0;
  const timer = setInterval(() => {
    const pcm = new Int16Array(160);
    for (let i = 0; i < 160; i++, n++) pcm[i] = Math.round(12_000 * Math.sin((2 * Math.PI * 1000 * n) / 8000));
    socket.send(serializeRtp({ payloadType: 0, sequenceNumber: seq++ & 0xffff, timestamp: (n - 160) >>> 0, ssrc: 0xbad0bad, payload: ulaw.encode(pcm) }), to.port, to.address);
  }, 20);
  return {
    get received() {
      return received;
    },
    get sent() {
      return seq - 1000;
    },
    stop: () => clearInterval(timer),
  };
}

describe('media lock on calls', () => {
  it('an attacker on another loopback address, sending before, during and after the caller, receives nothing and injects nothing', async () => {
    h = await harness();
    await h.trunk();
    const p = await phone('127.0.0.1');
    const call = await p.call(h.target('echo'));
    const target = call.rtp.remoteTarget!;
    expect(target).toBeDefined();
    // The caller is quiet (sends nothing) for 3.5 s while the attacker sprays: the old filter
    // learned the attacker after four packets and, the caller being quiet for its 3 s window,
    // kept it for the rest of the call.
    const attack = await attacker('127.0.0.3', target);
    await sleep(3500);
    // The caller talks (400 Hz) for 2 s, the attacker still spraying; then silence, attacker on.
    const heardBefore = call.heard.length;
    call.rtp.playTone(400, 2000);
    await sleep(3000);
    attack.stop();
    await sleep(200);
    const heard = call.heard.slice(heardBefore);

    expect(attack.sent).toBeGreaterThan(150);
    expect(attack.received).toBe(0);
    // What the engine heard (echoed back): the caller's tone, and never the attacker's.
    expect(toneShare(call.heard, 1000, 300)).toBe(0);
    // 400 ms of echo delay and jitter buffer, then 1.5 s of the caller's tone.
    expect(toneShare(heard.slice(3200, 3200 + 12_000), 400)).toBeGreaterThan(0.8);
    const session = h.server.registry.list()[0]!;
    // Dropped before decoding and counted: at least the 3.5 s before the caller's first packet
    // (once the caller's lock is final the socket is connected, and the kernel drops the rest unseen).
    const dropped = session.media.stats().droppedByFilter;
    expect(dropped).toBeGreaterThan(100);
    const metrics = new client.Registry();
    registerRtpFilterMetric(metrics, () => h!.server.registry.rtpPacketsFiltered);
    expect(await metrics.getSingleMetricAsString('switchboard_rtp_foreign_packets_total')).toContain(`switchboard_rtp_foreign_packets_total ${dropped}`);
    expect(await call.hangup()).toBe(200);
    await until(() => h!.server.registry.size === 0, 3000, 'call ended');
    // The ended call's count stays on /metrics.
    expect(h.server.registry.rtpPacketsFiltered).toBeGreaterThanOrEqual(dropped);
  }, 20_000);

  it('the echo keeps coming past 3.5 s when the advertised address is not the route back to the caller', async () => {
    // RTP bound to the wildcard address, 127.0.0.2 advertised (SIP listens there too), the caller
    // on 127.0.0.1: the route back to the caller leaves from 127.0.0.1. A connect() of the RTP
    // socket to the caller would pin it to 127.0.0.1, and the caller's datagrams, sent to
    // 127.0.0.2, would stop reaching it (3 s into the call, when the old code connected).
    h = await harness({}, 10, { sipHost: '127.0.0.2', rtpHost: '0.0.0.0' });
    await h.trunk();
    const p = await phone('127.0.0.1');
    const call = await p.call(h.target('echo'));
    expect(call.rtp.remoteTarget?.address).toBe('127.0.0.2');
    call.rtp.playTone(400, 8000);
    const startedAt = performance.now();
    const at = async (ms: number): Promise<number> => {
      await sleep(Math.max(0, ms - (performance.now() - startedAt)));
      return call.heard.length;
    };
    const early = await at(1000);
    const lateStart = await at(4000);
    const lateEnd = await at(7500);
    // Heard before the old latch window closed, and well after it.
    expect(toneShare(call.heard.slice(early - 4000, early), 400)).toBeGreaterThan(0.8);
    expect(lateEnd - lateStart).toBeGreaterThan(20_000);
    expect(toneShare(call.heard.slice(lateStart, lateEnd), 400)).toBeGreaterThan(0.8);
    expect(await call.hangup()).toBe(200);
    await until(() => h!.server.registry.size === 0, 3000, 'call ended');
  }, 20_000);
});

describe("a trunk's media_nat", () => {
  /** A call to the echo number from a phone whose SDP says 127.0.0.1 but whose media leaves from 127.0.0.4. */
  async function natCall(mediaNat: boolean): Promise<number[]> {
    h = await harness();
    await h.trunk({ media_nat: mediaNat });
    const p = await TestPhone.create({ host: '127.0.0.1', mediaHost: '127.0.0.4' });
    phones.push(p);
    const call = await p.call(h.target('echo'));
    call.rtp.playTone(400, 1500);
    await sleep(1800);
    const heard = call.heard.slice();
    expect(await call.hangup()).toBe(200);
    await until(() => h!.server.registry.size === 0, 3000, 'call ended');
    await h.close();
    h = undefined;
    return heard;
  }

  it('off (the default), media from an address the SDP does not name is refused; on, that source is learned and answered', async () => {
    const strict = await natCall(false);
    expect(toneShare(strict, 400)).toBe(0);
    const learning = await natCall(true);
    expect(toneShare(learning.slice(3200, 3200 + 8000), 400)).toBeGreaterThan(0.8);
  }, 20_000);
});
