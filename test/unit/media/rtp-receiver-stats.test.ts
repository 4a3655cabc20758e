import { describe, expect, it } from 'vitest';
import { NativeReceiverStats, type ReceiverStatsLike } from '../../../src/media/native-inbound.ts';
import { RtpReceiverStats, type ReceiverStatsOptions, type SeqVerdict } from '../../../src/media/rtp-receiver-stats.ts';
import { msToNtp, ntpMiddle } from '../../../src/media/rtcp.ts';

const SSRC = 0x1234;

function feed(stats: ReceiverStatsLike, seqs: number[], ssrc = SSRC, startMs = 0): SeqVerdict[] {
  return seqs.map((seq, i) => stats.update({ ssrc, sequenceNumber: seq & 0xffff, timestamp: (seq * 160) >>> 0 }, startMs + i * 20));
}

function range(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

/**
 * Every case runs on the TypeScript statistics and on their C port (native/rtp-udp/rtp_inbound.c).
 * The native module is always built in CI: where it is missing, NativeReceiverStats's constructor
 * throws and the native cases fail rather than skip.
 */
const IMPLEMENTATIONS: [string, new (options: ReceiverStatsOptions) => ReceiverStatsLike][] = [
  ['TypeScript', RtpReceiverStats],
  ['native', NativeReceiverStats],
];

describe.each(IMPLEMENTATIONS)('RtpReceiverStats (RFC 3550 A.1/A.3/A.8) (%s)', (_name, Stats) => {
  it('holds a new source on probation until MIN_SEQUENTIAL packets are in sequence', () => {
    const stats = new Stats({ clockRate: 8000 });
    expect(feed(stats, [1000, 1001, 1002])).toEqual(['probation', 'restart', 'valid']);
    expect(stats.snapshot()).toMatchObject({ expected: 2, received: 2, cumulativeLost: 0, extendedHighestSeq: 1002 });
  });

  it('restarts probation when the first packets are not sequential', () => {
    const stats = new Stats({ clockRate: 8000, minSequential: 3 });
    expect(feed(stats, [10, 50, 51, 52, 53])).toEqual(['probation', 'probation', 'probation', 'restart', 'valid']);
  });

  it('extends sequence numbers across the 65535 wrap', () => {
    const stats = new Stats({ clockRate: 8000 });
    const verdicts = feed(stats, range(65530, 12));
    expect(verdicts.slice(2).every((v) => v === 'valid')).toBe(true);
    const snap = stats.snapshot();
    expect(snap.extendedHighestSeq).toBe(65536 + 5);
    expect(snap.expected).toBe(11);
    expect(snap.received).toBe(11);
    expect(stats.reportBlock(1000)?.extendedHighestSeq).toBe(65541);
  });

  it('counts reordered and duplicate packets without advancing the highest sequence', () => {
    const stats = new Stats({ clockRate: 8000 });
    const verdicts = feed(stats, [1, 2, 3, 5, 4, 6, 6, 7]);
    expect(verdicts).toEqual(['probation', 'restart', 'valid', 'valid', 'reordered', 'valid', 'reordered', 'valid']);
    const snap = stats.snapshot();
    expect(snap.extendedHighestSeq).toBe(7);
    expect(snap.expected).toBe(6);
    // The duplicate counts as received, so loss goes negative as RFC 3550 allows.
    expect(snap.received).toBe(7);
    expect(snap.cumulativeLost).toBe(-1);
  });

  it('reports cumulative and interval loss (fraction lost) per report', () => {
    const stats = new Stats({ clockRate: 8000 });
    // Seq 0 is spent on probation, so 1..101 is expected and 10, 20, .., 100 are lost.
    const first = range(0, 102).filter((s) => s === 0 || s % 10 !== 0);
    feed(stats, first);
    const rb1 = stats.reportBlock(3000)!;
    expect(rb1.cumulativeLost).toBe(10);
    expect(rb1.fractionLost).toBe(Math.floor((10 * 256) / 101));
    feed(stats, range(102, 50));
    const rb2 = stats.reportBlock(4000)!;
    expect(rb2.fractionLost).toBe(0);
    expect(rb2.cumulativeLost).toBe(10);
  });

  it('ignores one wild jump but restarts when the next packet follows it', () => {
    const stats = new Stats({ clockRate: 8000 });
    feed(stats, range(100, 10));
    expect(stats.update({ ssrc: SSRC, sequenceNumber: 40000, timestamp: 0 }, 500)).toBe('bad-seq');
    expect(stats.update({ ssrc: SSRC, sequenceNumber: 110, timestamp: 110 * 160 }, 520)).toBe('valid');
    expect(stats.update({ ssrc: SSRC, sequenceNumber: 20000, timestamp: 0 }, 540)).toBe('bad-seq');
    expect(stats.update({ ssrc: SSRC, sequenceNumber: 20001, timestamp: 160 }, 560)).toBe('restart');
    expect(stats.snapshot()).toMatchObject({ extendedHighestSeq: 20001, expected: 1, received: 1 });
  });

  it('treats an SSRC change as a new source', () => {
    const stats = new Stats({ clockRate: 8000 });
    feed(stats, range(100, 10));
    expect(feed(stats, [5000, 5001, 5002], 0x9999, 300)).toEqual(['probation', 'restart', 'valid']);
    expect(stats.snapshot()).toMatchObject({ ssrc: 0x9999, expected: 2, received: 2 });
  });

  it('computes zero jitter for perfectly paced packets and the A.8 estimate otherwise', () => {
    const steady = new Stats({ clockRate: 8000 });
    feed(steady, range(0, 200));
    expect(steady.snapshot().jitter).toBe(0);

    // Every other packet 10 ms late: each transit difference is 80 ticks, and J converges to 80.
    const jittery = new Stats({ clockRate: 8000 });
    for (let i = 0; i < 500; i++) {
      jittery.update({ ssrc: SSRC, sequenceNumber: i, timestamp: i * 160 }, i * 20 + (i % 2 === 1 ? 10 : 0));
    }
    expect(jittery.snapshot().jitter).toBeGreaterThanOrEqual(79);
    expect(jittery.snapshot().jitter).toBeLessThanOrEqual(80);
    expect(jittery.snapshot().jitterMs).toBeCloseTo(10, 0);
  });

  it('handles the 32-bit timestamp wrap in the jitter estimate', () => {
    const stats = new Stats({ clockRate: 8000 });
    const base = 0xffffff00;
    for (let i = 0; i < 50; i++) stats.update({ ssrc: SSRC, sequenceNumber: i, timestamp: (base + i * 160) >>> 0 }, i * 20);
    expect(stats.snapshot().jitter).toBe(0);
  });

  it('fills LSR and DLSR from the last sender report', () => {
    const stats = new Stats({ clockRate: 8000 });
    feed(stats, range(0, 10));
    expect(stats.reportBlock(100)).toMatchObject({ lastSr: 0, delaySinceLastSr: 0 });
    const ntp = msToNtp(1_700_000_000_000);
    stats.onSenderReport(ntp.seconds, ntp.fraction, 5000);
    const rb = stats.reportBlock(5500)!;
    expect(rb.lastSr).toBe(ntpMiddle(ntp.seconds, ntp.fraction));
    expect(rb.delaySinceLastSr).toBe(32768); // 0.5 s in 1/65536 s
  });
});
