import { describe, expect, it } from 'vitest';
import { mediaAddressKind } from '../../../src/media/media-address.ts';
import { SourceFilter, type SourcePacket, type SourceVerdict } from '../../../src/media/source-filter.ts';

const SDP = { address: '203.0.113.10', port: 40000 };
const NAT = { address: '198.51.100.7', port: 61234 };
const ATTACKER = { address: '192.0.2.66', port: 5004 };
const PRIVATE_SDP = { address: '10.0.0.5', port: 4000 };

function stream(from: { address: string; port: number }, ssrc: number, firstSeq: number, count: number): SourcePacket[] {
  return Array.from({ length: count }, (_, i) => ({ ...from, ssrc, sequenceNumber: (firstSeq + i) & 0xffff }));
}

const letter = (v: SourceVerdict): string => (v.accept ? (v.latchedNow ? 'L' : 'A') : v.reason[0]!);

describe('SourceFilter: a concrete SDP address (routable or loopback)', () => {
  it('accepts the SDP address at once and locks to it', () => {
    const f = new SourceFilter({ expected: SDP });
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 10 })).toEqual({ accept: true, latchedNow: true });
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 11 })).toEqual({ accept: true, latchedNow: false });
    expect(f.latched).toEqual(SDP);
    expect(f.learns).toBe(false);
  });

  it('never learns another address, however long and sequential its run, before, during or after the caller', () => {
    const f = new SourceFilter({ expected: SDP });
    // The caller is quiet for a long time while an attacker sends a perfect stream first.
    const before = stream(ATTACKER, 0xbad, 0, 500).map((p) => f.check(p));
    expect(before.every((v) => !v.accept && v.reason === 'foreign')).toBe(true);
    expect(f.latched).toBeUndefined();
    // Then the caller starts, interleaved with more of the attacker's packets.
    const during: string[] = [];
    for (let i = 0; i < 20; i++) {
      during.push(letter(f.check({ ...SDP, ssrc: 1, sequenceNumber: 100 + i })));
      during.push(letter(f.check({ ...ATTACKER, ssrc: 0xbad, sequenceNumber: 500 + i })));
    }
    expect(during.join('')).toBe(`Lf${'Af'.repeat(19)}`);
    const after = stream(ATTACKER, 0xbad, 520, 500).map((p) => f.check(p));
    expect(after.every((v) => !v.accept)).toBe(true);
    expect(f.latched).toEqual(SDP);
    expect(f.counters).toMatchObject({ accepted: 20, dropped: 1020, droppedForeign: 1020, droppedProbation: 0, latches: 1 });
  });

  it('takes the SDP address from another port (symmetric RTP); that lock gives way to the SDP port only, once', () => {
    const f = new SourceFilter({ expected: SDP });
    const translated = { address: SDP.address, port: 50123 };
    expect(f.check({ ...translated, ssrc: 1, sequenceNumber: 1 })).toEqual({ accept: true, latchedNow: true });
    expect(f.latched).toEqual(translated);
    expect(f.final).toBe(false);
    // A third port of the same address is another source.
    expect(f.check({ address: SDP.address, port: 50999, ssrc: 1, sequenceNumber: 2 })).toEqual({ accept: false, reason: 'foreign' });
    // The SDP's exact transport address (say the peer's old port's stragglers came first) takes it, for good.
    expect(f.check({ ...SDP, ssrc: 2, sequenceNumber: 1 })).toEqual({ accept: true, latchedNow: true });
    expect(f.final).toBe(true);
    expect(f.check({ ...translated, ssrc: 1, sequenceNumber: 3 })).toEqual({ accept: false, reason: 'foreign' });
    expect(f.latched).toEqual(SDP);
  });

  it('treats a loopback SDP address as concrete: 127.0.0.3 is a stranger to a caller on 127.0.0.1', () => {
    const f = new SourceFilter({ expected: { address: '127.0.0.1', port: 4000 } });
    expect(f.learns).toBe(false);
    expect(stream({ address: '127.0.0.3', port: 4000 }, 9, 0, 50).some((p) => f.check(p).accept)).toBe(false);
    expect(f.check({ address: '127.0.0.1', port: 4000, ssrc: 1, sequenceNumber: 1 }).accept).toBe(true);
  });

  it('matches IPv4-mapped IPv6 sources to SDP IPv4 addresses', () => {
    const f = new SourceFilter({ expected: SDP });
    expect(f.check({ address: `::ffff:${SDP.address}`, port: SDP.port, ssrc: 1, sequenceNumber: 1 }).accept).toBe(true);
    expect(f.latched).toEqual(SDP);
  });
});

describe('SourceFilter: learning a source behind NAT', () => {
  it('learns after N consecutive sequence numbers with one SSRC from one source, dropping the probation packets', () => {
    const f = new SourceFilter({ expected: PRIVATE_SDP, probationPackets: 4 });
    expect(f.learns).toBe(true);
    const verdicts = stream(NAT, 7, 65534, 6).map((p) => f.check(p));
    expect(verdicts.map(letter).join('')).toBe('pppLAA');
    expect(f.latched).toEqual(NAT);
    expect(f.counters.droppedProbation).toBe(3);
    // Locked: the attacker gets nothing, however well-formed; only the SDP's exact transport
    // address could take the lock (a peer on our own network after all).
    expect(stream(ATTACKER, 7, 0, 20).some((p) => f.check(p).accept)).toBe(false);
    expect(f.final).toBe(false);
    expect(f.check({ address: PRIVATE_SDP.address, port: 4010, ssrc: 1, sequenceNumber: 1 }).accept).toBe(false);
    expect(f.check({ ...PRIVATE_SDP, ssrc: 1, sequenceNumber: 1 })).toEqual({ accept: true, latchedNow: true });
    expect(f.check({ ...NAT, ssrc: 7, sequenceNumber: 10 }).accept).toBe(false);
  });

  it('a stranger that passed probation first cannot keep the SDP transport address out', () => {
    const f = new SourceFilter({ expected: SDP, learn: true, probationPackets: 2 });
    stream(ATTACKER, 9, 0, 2).forEach((p) => f.check(p));
    expect(f.latched).toEqual(ATTACKER);
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 1 })).toEqual({ accept: true, latchedNow: true });
    expect(stream(ATTACKER, 9, 2, 10).some((p) => f.check(p).accept)).toBe(false);
  });

  it('locks at once to the private SDP address itself when it sends (a peer on our own network)', () => {
    const f = new SourceFilter({ expected: PRIVATE_SDP });
    expect(f.check({ address: PRIVATE_SDP.address, port: 4002, ssrc: 1, sequenceNumber: 1 })).toEqual({ accept: true, latchedNow: true });
    expect(f.final).toBe(false);
    expect(f.check({ ...PRIVATE_SDP, ssrc: 1, sequenceNumber: 2 })).toEqual({ accept: true, latchedNow: true });
    expect(f.final).toBe(true);
  });

  it('has no time window: a NAT caller that starts late is still learned', () => {
    const f = new SourceFilter({ expected: PRIVATE_SDP, probationPackets: 3 });
    // (No clock at all: nothing in the decision depends on time.)
    expect(stream(NAT, 5, 0, 3).map((p) => letter(f.check(p))).join('')).toBe('ppL');
  });

  it('does not learn from non-consecutive packets or SSRC hopping', () => {
    const f = new SourceFilter({ probationPackets: 3 });
    const sprayed: SourcePacket[] = [
      { ...ATTACKER, ssrc: 1, sequenceNumber: 10 },
      { ...ATTACKER, ssrc: 1, sequenceNumber: 12 },
      { ...ATTACKER, ssrc: 2, sequenceNumber: 13 },
      { ...ATTACKER, ssrc: 3, sequenceNumber: 14 },
      { ...ATTACKER, ssrc: 3, sequenceNumber: 100 },
      { ...ATTACKER, ssrc: 3, sequenceNumber: 100 },
    ];
    expect(sprayed.some((p) => f.check(p).accept)).toBe(false);
    expect(f.latched).toBeUndefined();
  });

  it.each([
    ['10.1.2.3'],
    ['172.20.0.9'],
    ['192.168.1.20'],
    ['100.72.0.1'],
    ['169.254.3.4'],
    ['fd00::5'],
    ['fe80::1'],
    ['0.0.0.0'],
    ['::'],
    ['pbx.example.com'],
  ])('learns where the SDP says %s (private, unroutable, unspecified or a name)', (address) => {
    const f = new SourceFilter({ expected: { address, port: 4000 }, probationPackets: 2 });
    expect(f.learns).toBe(true);
    expect(stream(NAT, 1, 0, 2).map((p) => letter(f.check(p))).join('')).toBe('pL');
  });

  it('learns behind a concrete SDP address only when configured to (a trunk whose SDP is public but wrong)', () => {
    const strict = new SourceFilter({ expected: SDP, probationPackets: 2 });
    expect(stream(NAT, 1, 0, 10).some((p) => strict.check(p).accept)).toBe(false);
    const learning = new SourceFilter({ expected: SDP, learn: true, probationPackets: 2 });
    expect(stream(NAT, 1, 0, 3).map((p) => letter(learning.check(p))).join('')).toBe('pLA');
    // The SDP address, had it sent first, would have locked at once.
    const sdpFirst = new SourceFilter({ expected: SDP, learn: true, probationPackets: 2 });
    expect(letter(sdpFirst.check({ ...SDP, ssrc: 2, sequenceNumber: 9 }))).toBe('L');
  });

  it('keeps tracking the real source while a host sprays from many ports', () => {
    const f = new SourceFilter({ probationPackets: 5, maxCandidates: 4 });
    let latchedAt = -1;
    for (let i = 0; i < 5; i++) {
      for (let k = 0; k < 10; k++) f.check({ address: ATTACKER.address, port: 1000 + i * 10 + k, ssrc: k, sequenceNumber: k });
      const v = f.check({ ...NAT, ssrc: 3, sequenceNumber: 500 + i });
      if (v.accept) latchedAt = i;
    }
    expect(latchedAt).toBe(4);
    expect(f.latched).toEqual(NAT);
  });

  it('keeps a source in probation while fewer hosts than table slots send strays between its packets', () => {
    const f = new SourceFilter({ probationPackets: 3, maxCandidates: 4 });
    const verdicts = [];
    for (let i = 0; i < 3; i++) {
      for (let h = 0; h < 3; h++) f.check({ address: `192.0.2.${100 + i * 3 + h}`, port: 9, ssrc: h, sequenceNumber: h * 7 });
      verdicts.push(f.check({ ...NAT, ssrc: 3, sequenceNumber: 500 + i }).accept);
    }
    // Strays (count 1) are evicted before a source with sequence behind it, oldest first.
    expect(verdicts).toEqual([false, false, true]);
  });
});

describe('SourceFilter: re-INVITEs, RTCP and the receive path', () => {
  it('names the locked source as the socket reports it (the native drain compares bytes)', () => {
    const f = new SourceFilter({ expected: SDP });
    const mapped = { address: `::ffff:${SDP.address}`, port: SDP.port };
    expect(f.lockedSource()).toBeUndefined();
    f.checkFrom(mapped, 1, 10);
    expect(f.lockedSource()).toEqual(mapped);
    expect(f.latched).toEqual(SDP);
    const plain = new SourceFilter({ expected: SDP });
    plain.checkFrom(SDP, 1, 10);
    expect(plain.lockedSource()).toEqual(SDP);
  });

  it('checkFrom (the receive path: no object per packet) decides exactly as check', () => {
    const a = new SourceFilter({ expected: PRIVATE_SDP, probationPackets: 3 });
    const b = new SourceFilter({ expected: PRIVATE_SDP, probationPackets: 3 });
    // Strays, a NAT source through probation (its address spelled two ways, which the filter
    // must normalize afresh whenever it changes), then an attacker after the lock.
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
    const viaCheck = packets.map((p) => a.check(p));
    const viaCheckFrom = packets.map((p) => b.checkFrom({ address: p.address, port: p.port }, p.ssrc, p.sequenceNumber));
    expect(viaCheckFrom).toEqual(viaCheck);
    expect(viaCheck.map(letter)).toEqual(['p', 'p', 'p', 'p', 'p', 'L', 'A', 'A', 'f', 'f']);
    expect(b.latched).toEqual(NAT);
    expect(b.counters).toEqual(a.counters);
  });

  it('accepts RTCP only from the media source IP', () => {
    const f = new SourceFilter({ expected: SDP });
    expect(f.checkRtcp({ address: SDP.address, port: SDP.port + 1 })).toBe(true);
    expect(f.checkRtcp(ATTACKER)).toBe(false);
    const nat = new SourceFilter({ probationPackets: 2 });
    expect(nat.checkRtcp(NAT)).toBe(false);
    stream(NAT, 1, 0, 2).forEach((p) => nat.check(p));
    expect(nat.checkRtcp({ address: NAT.address, port: 61999 })).toBe(true);
  });

  it('moves the lock only on a re-INVITE that moves the media', () => {
    const f = new SourceFilter({ expected: SDP });
    f.check({ ...SDP, ssrc: 1, sequenceNumber: 1 });
    const moved = { address: '203.0.113.20', port: 50000 };
    expect(f.check({ ...moved, ssrc: 2, sequenceNumber: 1 }).accept).toBe(false);
    f.updateExpected(moved);
    expect(f.check({ ...moved, ssrc: 2, sequenceNumber: 2 })).toEqual({ accept: true, latchedNow: true });
    expect(f.check({ ...SDP, ssrc: 1, sequenceNumber: 2 }).accept).toBe(false);
  });

  it('keeps the lock through a hold re-INVITE (c=0.0.0.0): a hold does not open the leg to strangers', () => {
    const f = new SourceFilter({ expected: SDP, probationPackets: 2 });
    f.check({ ...SDP, ssrc: 1, sequenceNumber: 1 });
    f.updateExpected({ address: '0.0.0.0', port: SDP.port });
    expect(f.learns).toBe(false);
    expect(stream(ATTACKER, 9, 0, 20).some((p) => f.check(p).accept)).toBe(false);
    expect(f.latched).toEqual(SDP);
    // Off hold, the same address: locked again on its first packet.
    f.updateExpected(SDP);
    expect(letter(f.check({ ...SDP, ssrc: 1, sequenceNumber: 2 }))).toBe('L');
  });
});

describe('mediaAddressKind', () => {
  it.each([
    ['203.0.113.10', 'concrete'],
    ['8.8.8.8', 'concrete'],
    ['127.0.0.1', 'concrete'],
    ['127.0.0.3', 'concrete'],
    ['::1', 'concrete'],
    ['2001:db8::1', 'concrete'],
    ['172.32.0.1', 'concrete'],
    ['100.128.0.1', 'concrete'],
    ['10.0.0.1', 'nat-hint'],
    ['172.16.0.1', 'nat-hint'],
    ['172.31.255.255', 'nat-hint'],
    ['192.168.0.1', 'nat-hint'],
    ['100.64.0.1', 'nat-hint'],
    ['100.127.255.255', 'nat-hint'],
    ['169.254.1.1', 'nat-hint'],
    ['0.0.0.0', 'nat-hint'],
    ['::', 'nat-hint'],
    ['fc00::1', 'nat-hint'],
    ['fdab::1', 'nat-hint'],
    ['fe80::1', 'nat-hint'],
    ['::ffff:192.168.1.1', 'nat-hint'],
    ['::ffff:203.0.113.10', 'concrete'],
    ['pbx.example.com', 'unknown'],
  ] as const)('%s is %s', (address, kind) => {
    expect(mediaAddressKind(address)).toBe(kind);
  });
});
