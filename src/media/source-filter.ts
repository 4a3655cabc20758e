/**
 * Which source a call leg takes media from (the media lock), decided per datagram before
 * anything is decoded.
 *
 * The rule, by what the remote SDP's c= address says (media-address.ts):
 * - a concrete address (routable, or loopback): media is accepted from that IP address only.
 *   The first packet from it locks the leg to its transport address (its port may differ from
 *   the SDP's, as with symmetric RTP through a port-translating router: the address is what the
 *   signalling vouches for). Everyone else is dropped, before, during and after the lock.
 * - a private or unroutable address (RFC 1918, CGNAT, link-local, unique-local, 0.0.0.0), a
 *   host name, no address at all, or a trunk configured to learn (`learn`): the peer is probably
 *   behind NAT. The SDP address, if it ever sends, locks at once as above; another source locks
 *   only after `probationPackets` consecutive sequence numbers with one SSRC from one transport
 *   address, and its probation packets are dropped.
 *
 * Once locked the leg takes media from exactly that transport address until a re-INVITE moves
 * the remote media (`updateExpected`); a re-INVITE to the hold address keeps the lock. One
 * exception, for the signalled address only: a lock to anything but the SDP's exact transport
 * address (another port of its address, or a learned NAT source) gives way to that transport
 * address when it sends, and that lock is final (`final`). So stragglers from a peer's old port
 * after a re-INVITE moved it, or a stranger that passed probation first, cannot keep the real
 * peer out. There is no time window: a source that spoke first, or sprays mid-call, never takes
 * a locked leg from the SDP's address, and a caller that starts late is still heard.
 *
 * Pure: the caller passes each datagram's source and header fields.
 */
import { isIP } from 'node:net';
import { isUnspecified, mediaAddressKind, normalizeAddress } from './media-address.ts';

export interface TransportAddress {
  address: string;
  port: number;
}

export interface SourceFilterOptions {
  /** RTP address from the remote SDP; undefined when unknown or on hold (0.0.0.0). */
  expected?: TransportAddress;
  /** Learn a source other than the SDP's even when its address is concrete (a trunk's `media_nat`). */
  learn?: boolean;
  /** Consecutive packets with one SSRC needed before locking to a non-SDP source. */
  probationPackets?: number;
  /**
   * Candidates tracked at once; bounded so a spray cannot grow memory. More distinct hosts than
   * this spraying between two of a real source's packets can stall its probation (not hijack).
   */
  maxCandidates?: number;
}

export interface SourcePacket extends TransportAddress {
  ssrc: number;
  sequenceNumber: number;
}

export type DropReason = 'foreign' | 'probation';

export type SourceVerdict = { accept: true; latchedNow: boolean } | { accept: false; reason: DropReason };

/**
 * Verdicts are immutable and few, so they are shared rather than built per packet (this runs for
 * every datagram of every call).
 */
const ACCEPTED: SourceVerdict = Object.freeze({ accept: true, latchedNow: false });
const LATCHED_NOW: SourceVerdict = Object.freeze({ accept: true, latchedNow: true });
const DROPPED: Readonly<Record<DropReason, SourceVerdict>> = Object.freeze({
  foreign: Object.freeze({ accept: false, reason: 'foreign' }),
  probation: Object.freeze({ accept: false, reason: 'probation' }),
});

export interface SourceFilterCounters {
  accepted: number;
  dropped: number;
  droppedForeign: number;
  droppedProbation: number;
  latches: number;
}

interface Candidate {
  ssrc: number;
  lastSeq: number;
  count: number;
}

export class SourceFilter {
  /** The SDP's address (normalized), when it is an IP literal that can send; port kept for RTCP. */
  private expected: TransportAddress | undefined;
  /** Whether a source other than the SDP address may be learned (NAT). */
  private learning: boolean;
  private readonly learnAlways: boolean;
  private readonly probationPackets: number;
  private readonly maxCandidates: number;
  private latchedTo: TransportAddress | undefined;
  /** Whether the lock is to the SDP's exact transport address: nothing but a re-INVITE moves it. */
  private latchedFinal = false;
  /** The latched source's address as the socket reported it (see lockedSource). */
  private latchedRaw = '';
  private readonly candidates = new Map<string, Candidate>();
  /**
   * The last source address seen and its normalized form: a peer sends from one address, and
   * normalizing builds a new string (toLowerCase copies even a lower-case one) for every packet.
   */
  private lastRawAddress = '';
  private lastAddress = '';
  private readonly stats: SourceFilterCounters = {
    accepted: 0,
    dropped: 0,
    droppedForeign: 0,
    droppedProbation: 0,
    latches: 0,
  };

  constructor(options: SourceFilterOptions = {}) {
    this.learnAlways = options.learn ?? false;
    this.probationPackets = Math.max(1, options.probationPackets ?? 4);
    this.maxCandidates = options.maxCandidates ?? 16;
    this.expected = normalizeTarget(options.expected);
    this.learning = this.mayLearn(options.expected);
  }

  get latched(): TransportAddress | undefined {
    return this.latchedTo ? { ...this.latchedTo } : undefined;
  }

  /** Whether a source other than the SDP address can be learned on this leg (NAT). */
  get learns(): boolean {
    return this.learning;
  }

  /** Locked to the SDP's exact transport address: only a re-INVITE moves the lock now. */
  get final(): boolean {
    return this.latchedFinal;
  }

  get counters(): Readonly<SourceFilterCounters> {
    return { ...this.stats };
  }

  /**
   * The locked source, as the socket reported it (a dual-stack socket says ::ffff:a.b.c.d where
   * the lock holds a.b.c.d): while it holds, exactly its packets are accepted, so whoever takes
   * just those, byte for byte (the native drain, native/rtp-udp/fast_drain.c), and hands the rest
   * here filters as this does. A lock that moves says so (`latchedNow`).
   */
  lockedSource(): TransportAddress | undefined {
    const latched = this.latchedTo;
    return latched ? { address: this.latchedRaw, port: latched.port } : undefined;
  }

  /** Packets from the settled source accepted elsewhere (the native drain), for the counters. */
  countAccepted(packets: number): void {
    this.stats.accepted += packets;
  }

  check(packet: SourcePacket): SourceVerdict {
    return this.checkFrom(packet, packet.ssrc, packet.sequenceNumber);
  }

  /**
   * check() for the receive path: the datagram's source and the packet's fields as they are, so
   * no object is built per packet. The result is shared; `from` is not kept.
   */
  checkFrom(from: TransportAddress, ssrc: number, sequenceNumber: number): SourceVerdict {
    if (from.address !== this.lastRawAddress) {
      this.lastRawAddress = from.address;
      this.lastAddress = normalizeAddress(from.address);
    }
    const address = this.lastAddress;
    const port = from.port;
    const latched = this.latchedTo;
    const expected = this.expected;
    if (latched) {
      if (port === latched.port && address === latched.address) return this.accept(false);
      // The SDP's exact transport address takes a lock that is not on it yet.
      if (!this.latchedFinal && expected && port === expected.port && address === expected.address) {
        this.latch(address, port, from.address, true);
        return this.accept(true);
      }
      return this.drop('foreign');
    }

    // The SDP address is as trusted as the signalling that carried it: its first packet locks,
    // from whichever port it sends.
    if (expected && address === expected.address) {
      this.latch(address, port, from.address, port === expected.port);
      return this.accept(true);
    }
    if (!this.learning) return this.drop('foreign');

    const key = `${address}|${port}`;
    const candidate = this.candidates.get(key);
    if (candidate && candidate.ssrc === ssrc && sequenceNumber === ((candidate.lastSeq + 1) & 0xffff)) {
      candidate.count++;
      candidate.lastSeq = sequenceNumber;
    } else if (candidate) {
      candidate.ssrc = ssrc;
      candidate.lastSeq = sequenceNumber;
      candidate.count = 1;
    } else {
      this.admitCandidate(key, address, { ssrc, lastSeq: sequenceNumber, count: 1 });
    }
    if ((this.candidates.get(key)?.count ?? 0) >= this.probationPackets) {
      this.latch(address, port, from.address, false);
      return this.accept(true);
    }
    return this.drop('probation');
  }

  /**
   * RTCP is accepted from the media source's IP on any port: with NAT the RTCP mapping rarely
   * keeps RTP port + 1, and with rtcp-mux it shares the RTP port. Before any lock, only the
   * SDP address is believed.
   */
  checkRtcp(from: TransportAddress): boolean {
    const address = normalizeAddress(from.address);
    const anchor = this.latchedTo ?? this.expected;
    return anchor !== undefined && anchor.address === address;
  }

  /**
   * A re-INVITE moved the remote media: forget the lock and decide afresh from the new SDP.
   * Moved to the hold address (c=0.0.0.0: "do not send to me", nobody sends from there), a held
   * lock stays: a hold must not open the leg to whoever sprays meanwhile.
   */
  updateExpected(expected: TransportAddress | undefined): void {
    if (this.latchedTo && expected !== undefined && isUnspecified(expected.address)) return;
    this.expected = normalizeTarget(expected);
    this.learning = this.mayLearn(expected);
    this.latchedTo = undefined;
    this.latchedFinal = false;
    this.latchedRaw = '';
    this.candidates.clear();
  }

  private mayLearn(expected: TransportAddress | undefined): boolean {
    if (this.learnAlways || !expected || expected.port === 0) return true;
    return mediaAddressKind(expected.address) !== 'concrete';
  }

  private latch(address: string, port: number, raw: string, final: boolean): void {
    this.latchedTo = { address, port };
    this.latchedFinal = final;
    this.latchedRaw = raw;
    this.candidates.clear();
    this.stats.latches++;
  }

  private admitCandidate(key: string, address: string, candidate: Candidate): void {
    // One slot per host: a sprayer cycling through source ports only ever replaces itself, so it
    // cannot churn a real source out of the table mid-probation.
    const prefix = `${address}|`;
    for (const k of this.candidates.keys()) if (k.startsWith(prefix)) this.candidates.delete(k);
    if (this.candidates.size >= this.maxCandidates) {
      // Evict the least promising candidate, so one-off spray packets cannot push out a real
      // source that is partway through its probation.
      let worstKey: string | undefined;
      let worstCount = Infinity;
      for (const [k, c] of this.candidates) {
        if (c.count < worstCount) {
          worstCount = c.count;
          worstKey = k;
        }
      }
      if (worstKey !== undefined) this.candidates.delete(worstKey);
    }
    this.candidates.set(key, candidate);
  }

  private accept(latchedNow: boolean): SourceVerdict {
    this.stats.accepted++;
    return latchedNow ? LATCHED_NOW : ACCEPTED;
  }

  private drop(reason: DropReason): SourceVerdict {
    this.stats.dropped++;
    if (reason === 'foreign') this.stats.droppedForeign++;
    else this.stats.droppedProbation++;
    return DROPPED[reason];
  }
}

/** The SDP target as datagram sources are compared to it: IP literals that can send, normalized. */
function normalizeTarget(target: TransportAddress | undefined): TransportAddress | undefined {
  if (!target || target.port === 0) return undefined;
  const address = normalizeAddress(target.address);
  if (isIP(address) === 0 || isUnspecified(address)) return undefined;
  return { address, port: target.port };
}
