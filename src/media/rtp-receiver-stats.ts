/**
 * Per-source receive statistics: RFC 3550 appendix A.1 (sequence validation and extended
 * sequence numbers), A.3 (expected / lost / fraction lost) and A.8 (interarrival jitter).
 *
 * Pure: the caller passes the arrival time of each packet in milliseconds from its own clock.
 */
import type { ReportBlock } from './rtcp.ts';
import { ntpMiddle } from './rtcp.ts';

const RTP_SEQ_MOD = 0x10000;

export interface ReceiverStatsOptions {
  /** RTP clock rate of the stream (8000 for PCMU/PCMA/G.722, 48000 for Opus). */
  clockRate: number;
  /** Sequential packets required before a new source is believed (A.1 MIN_SEQUENTIAL). */
  minSequential?: number;
  /** Forward jump still treated as in-sequence loss (A.1 MAX_DROPOUT). */
  maxDropout?: number;
  /** Backward distance still treated as reordering (A.1 MAX_MISORDER). */
  maxMisorder?: number;
}

export interface RtpPacketInfo {
  ssrc: number;
  sequenceNumber: number;
  timestamp: number;
}

/**
 * Outcome of one packet:
 * - `valid`: in sequence (or a small forward gap); counted.
 * - `reordered`: a duplicate, or an old sequence number within MAX_MISORDER; counted, as A.1 does.
 * - `probation`: new source not yet confirmed; not counted.
 * - `bad-seq`: a large jump; not counted unless the next packet confirms it (then `restart`).
 * - `restart`: the source restarted its sequence (confirmed jump or SSRC change after probation).
 */
export type SeqVerdict = 'valid' | 'reordered' | 'probation' | 'bad-seq' | 'restart';

export interface ReceiverSnapshot {
  ssrc: number | undefined;
  extendedHighestSeq: number;
  expected: number;
  received: number;
  /** May be negative when duplicates arrive (RFC 3550 §6.4.1). */
  cumulativeLost: number;
  /** Interarrival jitter in RTP timestamp units, as it goes into an RR. */
  jitter: number;
  jitterMs: number;
}

export class RtpReceiverStats {
  private readonly clockRate: number;
  private readonly minSequential: number;
  private readonly maxDropout: number;
  private readonly maxMisorder: number;

  private ssrc: number | undefined;
  private probation = 0;
  private maxSeq = 0;
  private cycles = 0;
  private baseSeq = 0;
  private badSeq = RTP_SEQ_MOD + 1;
  private received = 0;
  private expectedPrior = 0;
  private receivedPrior = 0;

  private jitter = 0;
  private lastArrivalMs: number | undefined;
  private lastTimestamp = 0;

  private lastSrMiddle = 0;
  private lastSrArrivalMs: number | undefined;

  constructor(options: ReceiverStatsOptions) {
    this.clockRate = options.clockRate;
    this.minSequential = options.minSequential ?? 2;
    this.maxDropout = options.maxDropout ?? 3000;
    this.maxMisorder = options.maxMisorder ?? 100;
  }

  update(packet: RtpPacketInfo, arrivalMs: number): SeqVerdict {
    if (packet.ssrc !== this.ssrc) {
      // A new SSRC is a new source: its sequence space and jitter history are unrelated.
      this.ssrc = packet.ssrc;
      this.initSeq(packet.sequenceNumber);
      this.maxSeq = (packet.sequenceNumber - 1) & 0xffff;
      this.probation = this.minSequential;
      this.lastArrivalMs = undefined;
      this.jitter = 0;
    }
    const verdict = this.updateSeq(packet.sequenceNumber);
    if (verdict === 'valid' || verdict === 'restart') this.updateJitter(packet.timestamp, arrivalMs);
    return verdict;
  }

  /** Record an SR from this source so the next RR can carry LSR/DLSR (RFC 3550 §6.4.1). */
  onSenderReport(ntpSeconds: number, ntpFraction: number, arrivalMs: number): void {
    this.lastSrMiddle = ntpMiddle(ntpSeconds, ntpFraction);
    this.lastSrArrivalMs = arrivalMs;
  }

  snapshot(): ReceiverSnapshot {
    const extendedMax = this.cycles + this.maxSeq;
    const expected = this.ssrc === undefined || this.received === 0 ? 0 : extendedMax - this.baseSeq + 1;
    return {
      ssrc: this.ssrc,
      extendedHighestSeq: extendedMax,
      expected,
      received: this.received,
      cumulativeLost: expected - this.received,
      jitter: Math.floor(this.jitter),
      jitterMs: (this.jitter * 1000) / this.clockRate,
    };
  }

  /**
   * A report block for an RR/SR. Consumes the interval counters (A.3), so call it once per
   * report actually sent; undefined until a source has been confirmed.
   */
  reportBlock(nowMs: number): ReportBlock | undefined {
    if (this.ssrc === undefined || this.received === 0) return undefined;
    const snap = this.snapshot();
    const expectedInterval = snap.expected - this.expectedPrior;
    const receivedInterval = this.received - this.receivedPrior;
    this.expectedPrior = snap.expected;
    this.receivedPrior = this.received;
    const lostInterval = expectedInterval - receivedInterval;
    const fractionLost =
      expectedInterval === 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval * 256) / expectedInterval);
    // The RR field is 24-bit signed; clamp rather than wrap (A.3).
    const cumulativeLost = Math.max(-0x800000, Math.min(0x7fffff, snap.cumulativeLost));
    const dlsr =
      this.lastSrArrivalMs === undefined ? 0 : Math.max(0, Math.round(((nowMs - this.lastSrArrivalMs) * 65536) / 1000));
    return {
      ssrc: this.ssrc,
      fractionLost: Math.min(255, fractionLost),
      cumulativeLost,
      extendedHighestSeq: snap.extendedHighestSeq >>> 0,
      jitter: snap.jitter >>> 0,
      lastSr: this.lastSrArrivalMs === undefined ? 0 : this.lastSrMiddle,
      delaySinceLastSr: dlsr >>> 0,
    };
  }

  private initSeq(seq: number): void {
    this.baseSeq = seq;
    this.maxSeq = seq;
    this.badSeq = RTP_SEQ_MOD + 1;
    this.cycles = 0;
    this.received = 0;
    this.receivedPrior = 0;
    this.expectedPrior = 0;
  }

  private updateSeq(seq: number): SeqVerdict {
    const udelta = (seq - this.maxSeq) & 0xffff;
    if (this.probation > 0) {
      if (seq === ((this.maxSeq + 1) & 0xffff)) {
        this.probation--;
        this.maxSeq = seq;
        if (this.probation === 0) {
          this.initSeq(seq);
          this.received++;
          return 'restart';
        }
      } else {
        this.probation = this.minSequential - 1;
        this.maxSeq = seq;
      }
      return 'probation';
    }
    if (udelta === 0) {
      // A duplicate of the highest: A.1 counts it like any other, but it says nothing about timing.
      this.received++;
      return 'reordered';
    } else if (udelta < this.maxDropout) {
      if (seq < this.maxSeq) this.cycles += RTP_SEQ_MOD;
      this.maxSeq = seq;
    } else if (udelta <= RTP_SEQ_MOD - this.maxMisorder) {
      if (seq !== this.badSeq) {
        // One wild packet could be a stray or an attack; believe the jump only when the
        // next packet continues from it.
        this.badSeq = (seq + 1) & 0xffff;
        return 'bad-seq';
      }
      this.initSeq(seq);
      this.lastArrivalMs = undefined;
      this.received++;
      return 'restart';
    } else {
      this.received++;
      return 'reordered';
    }
    this.received++;
    return 'valid';
  }

  private updateJitter(timestamp: number, arrivalMs: number): void {
    if (this.lastArrivalMs !== undefined) {
      // D(i-1,i) from A.8, computed as a difference of differences so neither the 32-bit
      // timestamp wrap nor the size of the wall clock matters.
      const arrivalDelta = ((arrivalMs - this.lastArrivalMs) * this.clockRate) / 1000;
      const tsDelta = (timestamp - this.lastTimestamp) | 0;
      const d = Math.abs(arrivalDelta - tsDelta);
      this.jitter += (d - this.jitter) / 16;
    }
    this.lastArrivalMs = arrivalMs;
    this.lastTimestamp = timestamp;
  }
}
