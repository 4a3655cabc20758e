import dgram from 'node:dgram';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { PortPool as BasePool, PortsExhaustedError, type PortPoolOptions, type RtpPortPair } from '../../../src/media/port-pool.ts';
import { testRtpIo } from '../../support/rtp-io.ts';

/** The pool over the test run's RTP I/O (the I/O thread; in-thread dgram with SWITCHBOARD_RTP_THREAD=0). */
class PortPool extends BasePool {
  constructor(options: PortPoolOptions) {
    super({ io: testRtpIo, ...options });
  }
}

const HOST = '127.0.0.1';
/** A 1000-port block per test process, so parallel runs on one machine rarely collide. */
const BASE = 20_000 + (process.pid % 40) * 1000;

async function bindForeign(port: number): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  s.bind(port, HOST);
  await once(s, 'listening');
  return s;
}

describe('PortPool (UDP over loopback)', () => {
  it('hands out bound even/odd pairs that carry packets, and releases them without leaks', async () => {
    const pool = new PortPool({ host: HOST, minPort: BASE, maxPort: BASE + 19 });
    expect(pool.capacity).toBe(10);
    const pairs: RtpPortPair[] = [];
    for (let i = 0; i < 4; i++) pairs.push(await pool.allocate());
    expect(pool.inUse).toBe(8);
    for (const p of pairs) {
      expect(p.rtpPort % 2).toBe(0);
      expect(p.rtcpPort).toBe(p.rtpPort + 1);
      expect(p.rtp.address().port).toBe(p.rtpPort);
      expect(p.rtcp.address().port).toBe(p.rtcpPort);
    }
    expect(new Set(pairs.map((p) => p.rtpPort)).size).toBe(4);

    const [a, b] = pairs as [RtpPortPair, RtpPortPair];
    const got = once(b.rtp, 'message');
    a.rtp.send(Uint8Array.of(0x80, 0, 0, 1), b.rtpPort, HOST);
    const [msg, rinfo] = (await got) as [Buffer, dgram.RemoteInfo, number?];
    expect([...msg]).toEqual([0x80, 0, 0, 1]);
    expect(rinfo.port).toBe(a.rtpPort);

    await Promise.all(pairs.map((p) => p.release()));
    await pairs[0]!.release(); // idempotent
    expect(pool.inUse).toBe(0);
    // The ports really are free again: anyone can bind them.
    const probe = await bindForeign(pairs[0]!.rtpPort);
    probe.close();
  });

  it('skips ports something else holds (either the RTP or the RTCP half)', async () => {
    const min = BASE + 200;
    const squatters = [await bindForeign(min), await bindForeign(min + 3)];
    try {
      const pool = new PortPool({ host: HOST, minPort: min, maxPort: min + 7 });
      const pair = await pool.allocate();
      const next = await pool.allocate();
      expect([pair.rtpPort, next.rtpPort].sort()).toEqual([min + 4, min + 6]);
      await expect(pool.allocate()).rejects.toBeInstanceOf(PortsExhaustedError);
      expect(pool.inUse).toBe(4);
      await pair.release();
      await next.release();
      expect(pool.inUse).toBe(0);
    } finally {
      for (const s of squatters) s.close();
    }
  });

  it('gives concurrent callers distinct pairs and does not hand out the pair just released', async () => {
    const min = BASE + 400;
    const pool = new PortPool({ host: HOST, minPort: min, maxPort: min + 19 });
    const pairs = await Promise.all(Array.from({ length: 10 }, () => pool.allocate()));
    expect(new Set(pairs.map((p) => p.rtpPort)).size).toBe(10);
    await expect(pool.allocate()).rejects.toMatchObject({ code: 'RTP_PORTS_EXHAUSTED', status: 503, retryable: true });
    await Promise.all(pairs.map((p) => p.release()));

    const first = await pool.allocate();
    await first.release();
    const second = await pool.allocate();
    expect(second.rtpPort).not.toBe(first.rtpPort);
    await second.release();
    expect(pool.inUse).toBe(0);
  });

  it('draws each pair at random: consecutive calls do not get neighbouring ports, nor a pair just released', async () => {
    const min = BASE + 820;
    const pool = new PortPool({ host: HOST, minPort: min, maxPort: min + 179 });
    expect(pool.capacity).toBe(90);
    const ports: number[] = [];
    for (let i = 0; i < 100; i++) {
      const pair = await pool.allocate();
      ports.push(pair.rtpPort);
      await pair.release();
    }
    // In order, every one of the 99 steps would be +2. At random from ~45 usable pairs, a step is
    // +2 with probability at most about 1/45: 2.2 expected at most, more than 12 about once in a million runs.
    const sequential = ports.slice(1).filter((p, i) => p === ports[i]! + 2).length;
    expect(sequential).toBeLessThanOrEqual(12);
    expect(new Set(ports).size).toBeGreaterThan(40);
    // A released pair waits while 45 others are free: no port comes back within 45 calls.
    for (let i = 0; i < ports.length; i++) expect(ports.slice(i + 1, i + 46)).not.toContain(ports[i]);
    expect(pool.inUse).toBe(0);
  });

  it('survives many allocate/release cycles with no leaked ports', async () => {
    const min = BASE + 600;
    const pool = new PortPool({ host: HOST, minPort: min, maxPort: min + 9 });
    for (let i = 0; i < 60; i++) {
      const pair = await pool.allocate();
      await pair.release();
    }
    expect(pool.inUse).toBe(0);
  });

  it('honours an aborted signal', async () => {
    const pool = new PortPool({ host: HOST, minPort: BASE + 800, maxPort: BASE + 809 });
    await expect(pool.allocate(AbortSignal.abort())).rejects.toThrow();
    expect(pool.inUse).toBe(0);
  });

  it('rejects a range without a pair', () => {
    expect(() => new PortPool({ host: HOST, minPort: 5001, maxPort: 5002 })).toThrow(RangeError);
    expect(() => new PortPool({ host: HOST, minPort: 5000, maxPort: 4000 })).toThrow(RangeError);
  });
});
