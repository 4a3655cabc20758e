import { describe, expect, it } from 'vitest';
import { rms } from '../../../src/audio/frame.ts';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import { PortPool } from '../../../src/media/port-pool.ts';
import { RtpSession } from '../../../src/media/rtp-session.ts';
import { RtpPeer, sine, sleep } from '../../support/rtp-peer.ts';
import { BASE, HOST, openPair } from './rtp-session-setup.ts';

/** Handles that would betray a leak: sockets and timers. */
function handles(): { udp: number; timers: number } {
  const info = process.getActiveResourcesInfo();
  return { udp: info.filter((r) => r === 'UDPWrap').length, timers: info.filter((r) => r === 'Timeout').length };
}

describe('RtpSession lifecycle', () => {
  it('delivers silence frames at 20 ms while nothing arrives, and ends inbound on close', async () => {
    const pair = await openPair(pcmu);
    await sleep(300);
    const n = pair.frames.length;
    expect(n).toBeGreaterThanOrEqual(13);
    expect(n).toBeLessThanOrEqual(17);
    expect(pair.frames.every((f) => f.frame.samples.length === 320 && rms(f.frame.samples) === 0)).toBe(true);
    expect(pair.session.stats().silenceFramesDelivered).toBe(pair.session.stats().framesDelivered);
    await pair.session.close();
    await pair.done; // the for-await loop ended by itself
    const after = pair.frames.length;
    await sleep(60);
    expect(pair.frames.length).toBe(after);
    await pair.close();
  });

  it('drops the oldest frames for a reader that stalls, keeping memory bounded', async () => {
    const pool = new PortPool({ host: HOST, minPort: BASE + 200, maxPort: BASE + 219 });
    const peer = await RtpPeer.open(HOST);
    const session = new RtpSession({ pool, publicAddress: HOST, inboundQueueFrames: 5 });
    const local = await session.allocate();
    peer.connect({ address: HOST, port: local.rtpPort, rtcpPort: local.rtcpPort });
    session.start(peer.media(pcmu));
    await peer.sendPcm(sine(440, 300), { codec: pcmu });
    const it = session.inbound[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done).toBe(false);
    expect(session.stats().inboundQueueDropped).toBeGreaterThan(8);
    // What is left is the newest audio: the tail of the tone or the silence after it.
    await session.close();
    let rest = 0;
    while (!(await it.next()).done) rest++;
    expect(rest).toBeLessThanOrEqual(4);
    await peer.close();
    expect(pool.inUse).toBe(0);
  });

  it('close() is idempotent, releases the ports, and works before start() or mid-allocation', async () => {
    const pool = new PortPool({ host: HOST, minPort: BASE + 220, maxPort: BASE + 239 });
    const a = new RtpSession({ pool, publicAddress: HOST });
    const ports = await a.allocate();
    expect(ports.rtpPort % 2).toBe(0);
    expect(ports.address).toBe(HOST);
    expect(pool.inUse).toBe(2);
    await Promise.all([a.close(), a.close()]);
    await a.close();
    expect(pool.inUse).toBe(0);
    expect(() => a.start(({} as never))).toThrow();

    const b = new RtpSession({ pool, publicAddress: HOST });
    const allocating = b.allocate();
    const closing = b.close();
    await expect(allocating).rejects.toThrow(/closed/);
    await closing;
    expect(pool.inUse).toBe(0);

    const c = new RtpSession({ pool, publicAddress: HOST });
    await c.close();
    expect(pool.inUse).toBe(0);
  });

  it('50 sessions with media opened and closed leak no ports, sockets or timers', async () => {
    const pool = new PortPool({ host: HOST, minPort: BASE + 240, maxPort: BASE + 399 });
    const peer = await RtpPeer.open(HOST);
    await sleep(20);
    const before = handles();
    const sessions: RtpSession[] = [];
    for (let i = 0; i < 50; i++) {
      const s = new RtpSession({ pool, publicAddress: HOST, rtcpIntervalMs: 50 });
      const local = await s.allocate();
      s.start(peer.media(pcmu));
      s.on('dtmf', () => undefined);
      // Exercise every path that owns something: a reader, queued audio, inbound packets.
      void (async () => {
        for await (const _ of s.inbound);
      })();
      s.outbound.write({ samples: sine(440, 20), sampleRate: 16_000 });
      peer.connect({ address: HOST, port: local.rtpPort, rtcpPort: local.rtcpPort });
      peer.sendPacket(0, 0, new Uint8Array(160));
      sessions.push(s);
    }
    expect(pool.inUse).toBe(100);
    await sleep(150);
    expect(sessions.every((s) => s.stats().packetsSent > 0)).toBe(true);
    await Promise.all(sessions.map((s) => s.close()));
    await sleep(30);
    expect(pool.inUse).toBe(0);
    const after = handles();
    expect(after.udp).toBe(before.udp);
    expect(after.timers).toBeLessThanOrEqual(before.timers);
    expect(sessions.every((s) => s.listenerCount('dtmf') === 0)).toBe(true);
    await peer.close();
  });
});
