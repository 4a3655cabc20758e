import { describe, expect, it } from 'vitest';
import {
  buildBye,
  buildReport,
  msToNtp,
  ntpMiddle,
  parseRtcp,
  roundTripMs,
  rtcpIntervalMs,
  serializeRtcp,
  type RtcpPacket,
} from '../../../src/media/rtcp.ts';
import { RtpReceiverStats } from '../../../src/media/rtp-receiver-stats.ts';

const block = {
  ssrc: 0xaabbccdd,
  fractionLost: 25,
  cumulativeLost: -3,
  extendedHighestSeq: 0x1_0005,
  jitter: 80,
  lastSr: 0x12345678,
  delaySinceLastSr: 65536,
};

describe('RTCP', () => {
  it('round-trips a compound SR + SDES + BYE', () => {
    const packets: RtcpPacket[] = [
      {
        type: 'sr',
        ssrc: 1,
        sender: { ntpSeconds: 0xe0000000, ntpFraction: 0x80000000, rtpTimestamp: 0xfffffff0, packetCount: 500, octetCount: 80000 },
        reports: [block],
      },
      { type: 'sdes', chunks: [{ ssrc: 1, items: [{ type: 'cname', text: 'switchboard@example' }, { type: 'tool', text: 'sb' }] }] },
      { type: 'bye', ssrcs: [1], reason: 'call ended' },
    ];
    const bytes = serializeRtcp(packets);
    expect(bytes.length % 4).toBe(0);
    expect(parseRtcp(bytes)).toEqual({ ok: true, packets });
  });

  it('round-trips an RR with several blocks and SDES chunks of every padding length', () => {
    for (const cname of ['a', 'ab', 'abc', 'abcd', 'abcde']) {
      const packets: RtcpPacket[] = [
        { type: 'rr', ssrc: 7, reports: [block, { ...block, ssrc: 9, cumulativeLost: 0x7fffff }] },
        { type: 'sdes', chunks: [{ ssrc: 7, items: [{ type: 'cname', text: cname }] }, { ssrc: 8, items: [] }] },
      ];
      expect(parseRtcp(serializeRtcp(packets))).toEqual({ ok: true, packets });
    }
  });

  it('parses a captured receiver report with an empty body and keeps unknown types raw', () => {
    // RR with RC=0 from ssrc 0x01020304, then an APP packet (PT 204) "name" + 4 bytes.
    const bytes = Uint8Array.from(Buffer.from('80c90001010203048' + '0cc0003' + '01020304' + '6e616d65' + '00000001', 'hex'));
    const result = parseRtcp(bytes);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.packets[0]).toEqual({ type: 'rr', ssrc: 0x01020304, reports: [] });
    expect(result.packets[1]).toMatchObject({ type: 'other', packetType: 204, count: 0 });
  });

  it('rejects malformed compounds', () => {
    const good = serializeRtcp([{ type: 'rr', ssrc: 7, reports: [block] }]);
    expect(parseRtcp(good.subarray(0, good.length - 4)).ok).toBe(false); // length overflow
    const badVersion = good.slice();
    badVersion[0] = 0x41;
    expect(parseRtcp(badVersion).ok).toBe(false);
    const claimsTwoBlocks = good.slice();
    claimsTwoBlocks[0] = 0x82;
    expect(parseRtcp(claimsTwoBlocks).ok).toBe(false);
    expect(parseRtcp(Uint8Array.of(0x80, 0xc9)).ok).toBe(false);
    // SDES chunk without its null terminator.
    expect(parseRtcp(Uint8Array.from(Buffer.from('81ca000200000007010161', 'hex').subarray(0, 12))).ok).toBe(false);
  });

  it('honours padding on the last packet only', () => {
    const rr = serializeRtcp([{ type: 'rr', ssrc: 7, reports: [] }]);
    const padded = new Uint8Array(rr.length + 4);
    padded.set(rr);
    padded[0] = 0xa0;
    padded[3] = 2; // length now 3 words: header, ssrc, padding word
    padded[padded.length - 1] = 4;
    expect(parseRtcp(padded)).toEqual({ ok: true, packets: [{ type: 'rr', ssrc: 7, reports: [] }] });
    const notLast = new Uint8Array(padded.length + rr.length);
    notLast.set(padded);
    notLast.set(rr, padded.length);
    expect(parseRtcp(notLast).ok).toBe(false);
  });

  it('builds SR while sending and RR while only listening, always with CNAME', () => {
    const sender = { ssrc: 42, packetCount: 10, octetCount: 1600, rtpTimestamp: 1600 };
    const sr = buildReport({ nowMs: 1_700_000_000_000, cname: 'c', sender, sentSinceLastReport: true, reports: [] });
    expect(sr.map((p) => p.type)).toEqual(['sr', 'sdes']);
    const rr = buildReport({ nowMs: 1_700_000_000_000, cname: 'c', sender, sentSinceLastReport: false, reports: [block] });
    expect(rr.map((p) => p.type)).toEqual(['rr', 'sdes']);
    expect(buildBye(rr, 42, 'bye').map((p) => p.type)).toEqual(['rr', 'sdes', 'bye']);
  });

  it('computes the round trip from our SR through the peer RR (LSR/DLSR)', () => {
    const t0 = 1_700_000_000_000;
    const ours = buildReport({
      nowMs: t0,
      cname: 'us',
      sender: { ssrc: 1, packetCount: 50, octetCount: 8000, rtpTimestamp: 8000 },
      sentSinceLastReport: true,
      reports: [],
    });
    // The peer gets our SR 40 ms later and answers 250 ms after that; its RR takes 60 ms back.
    const peerStats = new RtpReceiverStats({ clockRate: 8000 });
    for (let i = 0; i < 5; i++) peerStats.update({ ssrc: 1, sequenceNumber: i, timestamp: i * 160 }, t0 + i * 20);
    const received = parseRtcp(serializeRtcp(ours));
    if (!received.ok || received.packets[0]?.type !== 'sr') throw new Error('no SR');
    const sr = received.packets[0];
    peerStats.onSenderReport(sr.sender.ntpSeconds, sr.sender.ntpFraction, t0 + 40);
    const rb = peerStats.reportBlock(t0 + 290)!;
    expect(rb.lastSr).toBe(ntpMiddle(msToNtp(t0).seconds, msToNtp(t0).fraction));
    const reply = parseRtcp(serializeRtcp([{ type: 'rr', ssrc: 2, reports: [rb] }]));
    if (!reply.ok || reply.packets[0]?.type !== 'rr') throw new Error('no RR');
    const rtt = roundTripMs(reply.packets[0].reports[0]!, t0 + 350);
    expect(rtt).toBeDefined();
    expect(Math.abs(rtt! - 100)).toBeLessThan(1);
  });

  it('gives no round trip without an SR or with an impossible one', () => {
    expect(roundTripMs({ lastSr: 0, delaySinceLastSr: 0 }, 1_700_000_000_000)).toBeUndefined();
    const now = msToNtp(1_700_000_000_000);
    expect(roundTripMs({ lastSr: ntpMiddle(now.seconds, now.fraction), delaySinceLastSr: 65536 }, 1_700_000_000_000)).toBeUndefined();
  });
});

describe('rtcpIntervalMs', () => {
  it('randomises around the RFC 3550 minimum', () => {
    expect(rtcpIntervalMs(() => 0)).toBeCloseTo(2500 / (Math.E - 1.5), 6);
    expect(rtcpIntervalMs(() => 0.999999)).toBeLessThan((5000 * 1.5) / (Math.E - 1.5));
    expect(rtcpIntervalMs(() => 0.5, true)).toBeCloseTo(2500 / (Math.E - 1.5), 6);
  });
});
