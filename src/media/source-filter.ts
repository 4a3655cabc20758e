/**
 * Strict RTP source learning for one call leg.
 *
 * Media is accepted from exactly one transport address. That address is either the one the
 * remote SDP announced, or (symmetric RTP, for callers behind NAT whose SDP carries a private
 * address) one we learned from the first packets, but only early in the call and only after
 * `probationPackets` in-sequence packets with one SSRC from it. Once latched, everything else is
 * dropped: the "RTP bleed" attack, where a stranger sprays packets at our port mid-call hoping
 * the engine re-learns the source, must not redirect or inject audio.
 *
 * Pure: the caller passes the packet's source and the current time.
 */

export interface TransportAddress {
  address: string;
  port: number;
}

export interface SourceFilterOptions {
  /** RTP address from the remote SDP; undefined when unknown or on hold (0.0.0.0). */
  expected?: TransportAddress;
  /** In-sequence packets with one SSRC needed before latching to a non-SDP address. */
  probationPackets?: number;
  /** After start (or a re-INVITE), how long latching to a non-SDP address stays possible. */
  latchWindowMs?: number;
  /**
   * Candidates tracked at once; bounded so a spray cannot grow memory. More distinct hosts than
   * this spraying between two of a real source's packets can stall its probation (not hijack).
   */
  maxCandidates?: number;
  startMs: number;
}

export interface SourcePacket extends TransportAddress {
  ssrc: number;
  sequenceNumber: number;
}

export type DropReason = 'foreign' | 'probation' | 'window-closed';

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
  'window-closed': Object.freeze({ accept: false, reason: 'window-closed' }),
});

export interface SourceFilterCounters {
  accepted: number;
  dropped: number;
  droppedForeign: number;
  droppedProbation: number;
  droppedWindowClosed: number;
  latches: number;
}

interface Candidate {
  ssrc: number;
  lastSeq: number;
  count: number;
}

export class SourceFilter {
  private expected: TransportAddress | undefined;
  private readonly probationPackets: number;
  private readonly latchWindowMs: number;
  private readonly maxCandidates: number;
  private windowStartMs: number;
  private latchedTo: TransportAddress | undefined;
  /** True when the latch came from probation, not the SDP; the SDP address may still win it back. */
  private latchedByProbation = false;
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
    droppedWindowClosed: 0,
    latches: 0,
  };

  constructor(options: SourceFilterOptions) {
    this.expected = normalizeTarget(options.expected);
    this.probationPackets = options.probationPackets ?? 4;
    this.latchWindowMs = options.latchWindowMs ?? 3000;
    this.maxCandidates = options.maxCandidates ?? 16;
    this.windowStartMs = options.startMs;
  }

  get latched(): TransportAddress | undefined {
    return this.latchedTo ? { ...this.latchedTo } : undefined;
  }

  get counters(): Readonly<SourceFilterCounters> {
    return { ...this.stats };
  }

  /**
   * The latched source once nothing can move the latch any more (the latch window is over): from
   * then on exactly its packets are accepted, so whoever checks just that (the native drain,
   * native/rtp-udp/fast_drain.c) filters as this does. Its address as the socket last reported it
   * (a dual-stack socket says ::ffff:a.b.c.d where the latch holds a.b.c.d), since that checker
   * compares the datagrams' addresses byte for byte.
   */
  settledSource(nowMs: number): TransportAddress | undefined {
    const latched = this.latchedTo;
    if (!latched || nowMs - this.windowStartMs <= this.latchWindowMs) return undefined;
    return { address: this.lastAddress === latched.address ? this.lastRawAddress : latched.address, port: latched.port };
  }

  /** Packets from the settled source accepted elsewhere (the native drain), for the counters. */
  countAccepted(packets: number): void {
    this.stats.accepted += packets;
  }

  check(packet: SourcePacket, nowMs: number): SourceVerdict {
    return this.checkFrom(packet, packet.ssrc, packet.sequenceNumber, nowMs);
  }

  /**
   * check() for the receive path: the datagram's source and the packet's fields as they are, so
   * no object is built per packet. The result is shared; `from` is not kept.
   */
  checkFrom(from: TransportAddress, ssrc: number, sequenceNumber: number, nowMs: number): SourceVerdict {
    if (from.address !== this.lastRawAddress) {
      this.lastRawAddress = from.address;
      this.lastAddress = normalizeAddress(from.address);
    }
    const address = this.lastAddress;
    const port = from.port;
    const inWindow = nowMs - this.windowStartMs <= this.latchWindowMs;

    if (this.latchedTo && same(address, port, this.latchedTo)) return this.accept(false);

    // The SDP address is as trusted as the signalling that carried it, so it may take the latch
    // on its first packet, and reclaim a probation latch while the window is open.
    if (this.expected && same(address, port, this.expected) && (!this.latchedTo || (this.latchedByProbation && inWindow))) {
      this.latch({ address, port }, false);
      return this.accept(true);
    }

    if (this.latchedTo) return this.drop('foreign');
    if (!inWindow) return this.drop('window-closed');

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
    const current = this.candidates.get(key);
    if (current && current.count >= this.probationPackets) {
      this.latch({ address, port }, true);
      return this.accept(true);
    }
    return this.drop('probation');
  }

  /**
   * RTCP is accepted from the media source's IP on any port: with NAT the RTCP mapping rarely
   * keeps RTP port + 1, and with rtcp-mux it shares the RTP port. Before any latch, only the
   * SDP address is believed.
   */
  checkRtcp(from: TransportAddress): boolean {
    const address = normalizeAddress(from.address);
    const anchor = this.latchedTo ?? this.expected;
    return anchor !== undefined && anchor.address === address;
  }

  /** A re-INVITE moved the remote media: forget the latch and reopen the learning window. */
  updateExpected(expected: TransportAddress | undefined, nowMs: number): void {
    this.expected = normalizeTarget(expected);
    this.latchedTo = undefined;
    this.latchedByProbation = false;
    this.candidates.clear();
    this.windowStartMs = nowMs;
  }

  private latch(to: TransportAddress, byProbation: boolean): void {
    this.latchedTo = to;
    this.latchedByProbation = byProbation;
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
    else if (reason === 'probation') this.stats.droppedProbation++;
    else this.stats.droppedWindowClosed++;
    return DROPPED[reason];
  }
}

/** dgram reports IPv4 peers on dual-stack sockets as ::ffff:a.b.c.d; SDP says a.b.c.d. */
function normalizeAddress(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice(7) : lower;
}

function normalizeTarget(target: TransportAddress | undefined): TransportAddress | undefined {
  if (!target || target.port === 0) return undefined;
  const address = normalizeAddress(target.address);
  // c=IN IP4 0.0.0.0 is the old-style hold: nobody will send from there.
  if (address === '0.0.0.0' || address === '::') return undefined;
  return { address, port: target.port };
}

function same(address: string, port: number, b: TransportAddress): boolean {
  return port === b.port && address === b.address;
}
