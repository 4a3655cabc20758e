/**
 * One call's SRTP: our master key protects what we send, theirs unprotects what arrives (SDES
 * gives each direction its own key, RFC 4568 §6.1). Works in place on the caller's buffers:
 * nothing here allocates per packet (the cipher may, see cipher-node.ts).
 *
 * Inbound, per SSRC: the index estimate (ROC, RFC 3711 §3.3.1) and the replay window (§3.3.2)
 * move only after a packet authenticated, so forged or replayed packets change nothing. A
 * packet that fails is refused with a reason and counted; it must not be decoded.
 */
import type { CipherFactory, SrtpCipher } from './cipher.ts';
import { nodeCipherFactory } from './cipher-node.ts';
import { deriveSessionKeys } from './kdf.ts';
import { PacketIndexEstimator } from './packet-index.ts';
import { ReplayWindow } from './replay-window.ts';
import type { SrtpSuite } from './suites.ts';

export interface MasterKey {
  key: Uint8Array;
  salt: Uint8Array;
}

/** Why an inbound packet was refused (negative results of the unprotect methods). */
export const SRTP_MALFORMED = -1;
export const SRTP_AUTH_FAILED = -2;
export const SRTP_REPLAYED = -3;

export interface SrtpCounters {
  /** SRTP and SRTCP packets that failed authentication. */
  authFailed: number;
  /** Of those, SRTCP (a peer that sends some RTCP in the clear shows up here alone). */
  rtcpAuthFailed: number;
  replayed: number;
  malformed: number;
}

/** SSRCs we keep inbound state for; each costs a few words and only an authentic packet adds one. */
const MAX_INBOUND_STREAMS = 16;
const SRTCP_INDEX_MASK = 0x7fff_ffff;

interface InboundStream {
  index: PacketIndexEstimator;
  replay: ReplayWindow;
  rtcpReplay: ReplayWindow;
}

export class SrtpSession {
  readonly suite: SrtpSuite;
  readonly counters: SrtpCounters = { authFailed: 0, rtcpAuthFailed: 0, replayed: 0, malformed: 0 };
  private readonly txRtp: SrtpCipher;
  private readonly txRtcp: SrtpCipher;
  private readonly rxRtp: SrtpCipher;
  private readonly rxRtcp: SrtpCipher;
  private readonly outbound = new Map<number, PacketIndexEstimator>();
  private readonly inbound = new Map<number, InboundStream>();
  private srtcpIndex = 0;

  constructor(suite: SrtpSuite, local: MasterKey, remote: MasterKey, factory: CipherFactory = nodeCipherFactory) {
    this.suite = suite;
    const tx = deriveSessionKeys(suite, local.key, local.salt);
    const rx = deriveSessionKeys(suite, remote.key, remote.salt);
    this.txRtp = factory.create(suite, tx.rtp);
    this.txRtcp = factory.create(suite, tx.rtcp);
    this.rxRtp = factory.create(suite, rx.rtp);
    this.rxRtcp = factory.create(suite, rx.rtcp);
  }

  /** Bytes a protected packet may add: `buf` passed to protect must have this room after `length`. */
  get trailer(): number {
    return Math.max(this.suite.rtpTagLength, this.suite.rtcpTagLength + 4);
  }

  /** Protects the RTP packet buf[0, length) in place; returns the SRTP length (or SRTP_MALFORMED). */
  protectRtp(buf: Uint8Array, length: number): number {
    const headerLength = rtpHeaderLength(buf, length);
    if (headerLength < 0) return SRTP_MALFORMED;
    const ssrc = readU32(buf, 8);
    let stream = this.outbound.get(ssrc);
    if (!stream) {
      if (this.outbound.size >= MAX_INBOUND_STREAMS) this.outbound.clear();
      stream = new PacketIndexEstimator();
      this.outbound.set(ssrc, stream);
    }
    const index = stream.estimate((buf[2]! << 8) | buf[3]!);
    if (index < 0) return SRTP_MALFORMED;
    stream.commit(index);
    return this.txRtp.protectRtp(buf, length, headerLength, ssrc, index);
  }

  /** Checks and decrypts buf[0, length) in place; the RTP length, or a negative SRTP_* reason. */
  unprotectRtp(buf: Uint8Array, length: number): number {
    const headerLength = rtpHeaderLength(buf, length - this.suite.rtpTagLength);
    if (headerLength < 0) return this.refuse(SRTP_MALFORMED);
    const ssrc = readU32(buf, 8);
    const stream = this.inbound.get(ssrc);
    const seq = (buf[2]! << 8) | buf[3]!;
    const index = stream ? stream.index.estimate(seq) : seq;
    if (index < 0) return this.refuse(SRTP_REPLAYED);
    if (stream && stream.replay.check(index) !== 'ok') return this.refuse(SRTP_REPLAYED);
    const plain = this.rxRtp.unprotectRtp(buf, length, headerLength, ssrc, index);
    if (plain < 0) return this.refuse(SRTP_AUTH_FAILED);
    const s = stream ?? this.addInbound(ssrc);
    s.index.commit(index);
    s.replay.accept(index);
    return plain;
  }

  /** Protects the (compound) RTCP packet buf[0, length) in place; returns the SRTCP length. */
  protectRtcp(buf: Uint8Array, length: number): number {
    if (length < 8) return SRTP_MALFORMED;
    const index = this.srtcpIndex;
    this.srtcpIndex = (this.srtcpIndex + 1) & SRTCP_INDEX_MASK;
    return this.txRtcp.protectRtcp(buf, length, readU32(buf, 4), index);
  }

  /** Checks and decrypts an SRTCP packet in place; the RTCP length, or a negative SRTP_* reason. */
  unprotectRtcp(buf: Uint8Array, length: number): number {
    const tag = this.suite.rtcpTagLength;
    if (length < 8 + 4 + tag) return this.refuse(SRTP_MALFORMED);
    const at = this.suite.aead ? length - 4 : length - tag - 4;
    const word = readU32(buf, at);
    const encrypted = word >= 0x8000_0000;
    const index = word & SRTCP_INDEX_MASK;
    const ssrc = readU32(buf, 4);
    const stream = this.inbound.get(ssrc);
    if (stream && stream.rtcpReplay.check(index) !== 'ok') return this.refuse(SRTP_REPLAYED);
    const plain = this.rxRtcp.unprotectRtcp(buf, length, ssrc, index, encrypted);
    if (plain < 0) {
      this.counters.rtcpAuthFailed++;
      return this.refuse(SRTP_AUTH_FAILED);
    }
    (stream ?? this.addInbound(ssrc)).rtcpReplay.accept(index);
    return plain;
  }

  private addInbound(ssrc: number): InboundStream {
    // Only authentic packets get here; a peer cycling SSRCs starts over rather than grows us.
    if (this.inbound.size >= MAX_INBOUND_STREAMS) this.inbound.clear();
    const stream = { index: new PacketIndexEstimator(), replay: new ReplayWindow(), rtcpReplay: new ReplayWindow() };
    this.inbound.set(ssrc, stream);
    return stream;
  }

  private refuse(reason: number): number {
    if (reason === SRTP_AUTH_FAILED) this.counters.authFailed++;
    else if (reason === SRTP_REPLAYED) this.counters.replayed++;
    else this.counters.malformed++;
    return reason;
  }
}

/** RTP header length with CSRCs and extension (what SRTP leaves in the clear), or -1. */
export function rtpHeaderLength(buf: Uint8Array, length: number): number {
  if (length < 12 || buf[0]! >> 6 !== 2) return -1;
  let n = 12 + (buf[0]! & 0x0f) * 4;
  if (buf[0]! & 0x10) {
    if (n + 4 > length) return -1;
    n += 4 + ((buf[n + 2]! << 8) | buf[n + 3]!) * 4;
  }
  return n > length ? -1 : n;
}

function readU32(buf: Uint8Array, at: number): number {
  return ((buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!) >>> 0;
}
