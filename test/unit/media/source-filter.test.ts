import { describe, expect, it } from 'vitest';
import { SourceFilter, type SourcePacket } from '../../../src/media/source-filter.ts';

const SDP = { address: '203.0.113.10', port: 40000 };
const NAT = { address: '198.51.100.7', port: 61234 };
const ATTACKER = { address: '192.0.2.66', port: 5004 };

function stream(from: { address: string; port: number }, ssrc: number, firstSeq: number, count: number): SourcePacket[] {
  return Array.from({ length: count }, (_, i) => ({ ...from, ssrc, sequenceNumber: (firstSeq + i) & 0xffff }));
}

describe('SourceFilter', () => {
  it('accepts the SDP address at once and latches to it', () => {
    const f = new SourceFilter({ expected: SDP, startMs: 0 });
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 10 }, 0)).toEqual({ accept: true, latchedNow: true });
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 11 }, 20)).toEqual({ accept: true, latchedNow: false });
    expect(f.latched).toEqual(SDP);
  });

  it('defeats an RTP bleed attempt mid-call, even a perfectly sequential one', () => {
    const f = new SourceFilter({ expected: SDP, startMs: 0 });
    for (const p of stream(SDP, 1, 100, 50)) f.check(p, 0);
    const attack = stream(ATTACKER, 0xbad, 0, 500);
    const verdicts = attack.map((p, i) => f.check(p, 1000 + i));
    expect(verdicts.every((v) => !v.accept)).toBe(true);
    expect(f.latched).toEqual(SDP);
    // The real caller keeps flowing.
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 150 }, 2000).accept).toBe(true);
    expect(f.counters).toMatchObject({ accepted: 51, dropped: 500, droppedForeign: 500, latches: 1 });
  });

  it('latches behind NAT after N sequential packets with one SSRC, dropping the probation packets', () => {
    const f = new SourceFilter({ expected: { address: '10.0.0.5', port: 4000 }, probationPackets: 4, startMs: 0 });
    const verdicts = stream(NAT, 7, 65534, 6).map((p, i) => f.check(p, i * 20));
    expect(verdicts.map((v) => v.accept)).toEqual([false, false, false, true, true, true]);
    expect(verdicts[3]).toEqual({ accept: true, latchedNow: true });
    expect(f.latched).toEqual(NAT);
    expect(f.counters.droppedProbation).toBe(3);
    // After the latch, the attacker gets nothing, however well-formed.
    expect(stream(ATTACKER, 7, 0, 20).some((p) => f.check(p, 500).accept)).toBe(false);
  });

  it('does not latch on non-sequential packets or SSRC hopping', () => {
    const f = new SourceFilter({ probationPackets: 3, startMs: 0 });
    const sprayed: SourcePacket[] = [
      { ...ATTACKER, ssrc: 1, sequenceNumber: 10 },
      { ...ATTACKER, ssrc: 1, sequenceNumber: 12 },
      { ...ATTACKER, ssrc: 2, sequenceNumber: 13 },
      { ...ATTACKER, ssrc: 3, sequenceNumber: 14 },
      { ...ATTACKER, ssrc: 3, sequenceNumber: 100 },
    ];
    expect(sprayed.some((p) => f.check(p, 10).accept)).toBe(false);
    expect(f.latched).toBeUndefined();
  });

  it('refuses to learn a source once the latch window has closed', () => {
    const f = new SourceFilter({ expected: SDP, latchWindowMs: 2000, startMs: 0 });
    const late = stream(NAT, 5, 0, 10).map((p) => f.check(p, 5000));
    expect(late.every((v) => !v.accept && v.reason === 'window-closed')).toBe(true);
    // The SDP address is still welcome: it is what signalling agreed.
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 1 }, 6000).accept).toBe(true);
  });

  it('lets the SDP address win back an early probation latch, but not after the window', () => {
    const f = new SourceFilter({ expected: SDP, probationPackets: 2, latchWindowMs: 3000, startMs: 0 });
    stream(ATTACKER, 9, 0, 2).forEach((p) => f.check(p, 10));
    expect(f.latched).toEqual(ATTACKER);
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 1 }, 100)).toEqual({ accept: true, latchedNow: true });
    expect(f.check({ ...ATTACKER, ssrc: 9, sequenceNumber: 2 }, 120).accept).toBe(false);

    const g = new SourceFilter({ expected: SDP, probationPackets: 2, latchWindowMs: 3000, startMs: 0 });
    stream(NAT, 9, 0, 2).forEach((p) => g.check(p, 10));
    expect(g.check({ ...SDP, ssrc: 1, sequenceNumber: 1 }, 10_000).accept).toBe(false);
  });

  it('keeps tracking the real source while a host sprays from many ports', () => {
    const f = new SourceFilter({ probationPackets: 5, maxCandidates: 4, startMs: 0 });
    let latchedAt = -1;
    for (let i = 0; i < 5; i++) {
      for (let k = 0; k < 10; k++) f.check({ address: ATTACKER.address, port: 1000 + i * 10 + k, ssrc: k, sequenceNumber: k }, i * 20);
      const v = f.check({ ...NAT, ssrc: 3, sequenceNumber: 500 + i }, i * 20);
      if (v.accept) latchedAt = i;
    }
    expect(latchedAt).toBe(4);
    expect(f.latched).toEqual(NAT);
  });

  it('keeps a source in probation while fewer hosts than table slots send strays between its packets', () => {
    const f = new SourceFilter({ probationPackets: 3, maxCandidates: 4, startMs: 0 });
    const verdicts = [];
    for (let i = 0; i < 3; i++) {
      for (let h = 0; h < 3; h++) f.check({ address: `192.0.2.${100 + i * 3 + h}`, port: 9, ssrc: h, sequenceNumber: h * 7 }, i * 20);
      verdicts.push(f.check({ ...NAT, ssrc: 3, sequenceNumber: 500 + i }, i * 20).accept);
    }
    // Strays (count 1) are evicted before a source with sequence behind it, oldest first.
    expect(verdicts).toEqual([false, false, true]);
  });

  it('matches IPv4-mapped IPv6 sources to SDP IPv4 addresses', () => {
    const f = new SourceFilter({ expected: SDP, startMs: 0 });
    expect(f.check({ address: `::ffff:${SDP.address}`, port: SDP.port, ssrc: 1, sequenceNumber: 1 }, 0).accept).toBe(true);
  });

  it('names the settled source once the latch window is over, as the socket reports it', () => {
    const f = new SourceFilter({ expected: SDP, startMs: 0 });
    const mapped = { address: `::ffff:${SDP.address}`, port: SDP.port };
    f.checkFrom(mapped, 1, 10, 0);
    expect(f.settledSource(3000)).toBeUndefined();
    f.checkFrom(mapped, 1, 11, 3001);
    // The native drain compares datagram addresses byte for byte: the socket's form, not the latch's.
    expect(f.settledSource(3001)).toEqual(mapped);
    expect(f.latched).toEqual(SDP);
    const plain = new SourceFilter({ expected: SDP, startMs: 0 });
    plain.checkFrom(SDP, 1, 10, 0);
    expect(plain.settledSource(3001)).toEqual(SDP);
  });

  it('checkFrom (the receive path: no object per packet) decides exactly as check', () => {
    const a = new SourceFilter({ expected: { address: '10.0.0.5', port: 4000 }, probationPackets: 3, startMs: 0 });
    const b = new SourceFilter({ expected: { address: '10.0.0.5', port: 4000 }, probationPackets: 3, startMs: 0 });
    // Strays, a NAT source through probation (its address spelled two ways, which the filter
    // must normalize afresh whenever it changes), then an attacker after the latch.
    const mapped = { address: `::FFFF:${NAT.address}`, port: NAT.port };
    const packets = [
      ...stream(ATTACKER, 9, 0, 2),
      ...stream(NAT, 7, 100, 1),
      ...stream(mapped, 7, 101, 1),
      ...stream(ATTACKER, 10, 2, 1),
      ...stream(NAT, 7, 102, 2),
      ...stream(mapped, 7, 104, 1),
      ...stream(ATTACKER, 9, 3, 2),
    ];
    const viaCheck = packets.map((p, i) => a.check(p, i * 20));
    const viaCheckFrom = packets.map((p, i) => b.checkFrom({ address: p.address, port: p.port }, p.ssrc, p.sequenceNumber, i * 20));
    expect(viaCheckFrom).toEqual(viaCheck);
    expect(viaCheck.map((v) => (v.accept ? (v.latchedNow ? 'L' : 'A') : v.reason[0]))).toEqual(['p', 'p', 'p', 'p', 'p', 'L', 'A', 'A', 'f', 'f']);
    expect(b.latched).toEqual(NAT);
    expect(b.counters).toEqual(a.counters);
  });

  it('treats a 0.0.0.0 (hold) SDP address as unknown', () => {
    const f = new SourceFilter({ expected: { address: '0.0.0.0', port: 4000 }, probationPackets: 2, startMs: 0 });
    expect(f.check({ address: '0.0.0.0', port: 4000, ssrc: 1, sequenceNumber: 1 }, 0).accept).toBe(false);
  });

  it('accepts RTCP only from the media source IP', () => {
    const f = new SourceFilter({ expected: SDP, startMs: 0 });
    expect(f.checkRtcp({ address: SDP.address, port: SDP.port + 1 })).toBe(true);
    expect(f.checkRtcp(ATTACKER)).toBe(false);
    const nat = new SourceFilter({ probationPackets: 2, startMs: 0 });
    expect(nat.checkRtcp(NAT)).toBe(false);
    stream(NAT, 1, 0, 2).forEach((p) => nat.check(p, 0));
    expect(nat.checkRtcp({ address: NAT.address, port: 61999 })).toBe(true);
  });

  it('relearns after a re-INVITE moves the media', () => {
    const f = new SourceFilter({ expected: SDP, startMs: 0 });
    f.check({ ...SDP, ssrc: 1, sequenceNumber: 1 }, 0);
    const moved = { address: '203.0.113.20', port: 50000 };
    expect(f.check({ ...moved, ssrc: 2, sequenceNumber: 1 }, 60_000).accept).toBe(false);
    f.updateExpected(moved, 60_000);
    expect(f.check({ ...moved, ssrc: 2, sequenceNumber: 2 }, 60_020)).toEqual({ accept: true, latchedNow: true });
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 2 }, 60_040).accept).toBe(false);
  });
});
