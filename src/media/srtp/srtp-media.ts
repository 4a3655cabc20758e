/**
 * SRTP as an RtpSession uses it: built from the negotiated SDES keys, kept across a re-INVITE
 * that keeps them (the rollover counters and replay windows carry on), replaced when they change.
 * Outbound, each datagram is built with room for the tag and protected in place (the one buffer
 * per packet the plain path also makes); inbound, datagrams are unprotected in place.
 */
import type { NegotiatedSrtp } from '../sdp-negotiate.ts';
import { RTP_HEADER_LENGTH, writeRtpHeader } from '../rtp-packet.ts';
import type { CipherFactory } from './cipher.ts';
import { nodeCipherFactory } from './cipher-node.ts';
import { loadNativeCipherFactory } from './cipher-native.ts';
import { SrtpSession, type SrtpCounters } from './srtp-session.ts';
import { suiteByName } from './suites.ts';

/** What the outbound path hands the session per packet (rtp-session-outbound.ts's OutboundPacket). */
export interface OutboundRtp {
  payloadType: number;
  marker: boolean;
  timestamp: number;
  payload: Uint8Array;
  /** RTP_HEADER_LENGTH when `payload` starts with room for the header, else 0. */
  room: number;
}

let defaultFactory: CipherFactory | undefined;
let preferNative = true;

/** Native transforms where built (no allocation per packet), node:crypto otherwise. */
export function srtpCipherFactory(): CipherFactory {
  defaultFactory ??= (preferNative ? loadNativeCipherFactory() : undefined) ?? nodeCipherFactory;
  return defaultFactory;
}

/**
 * The composition root's SWITCHBOARD_RTP_NATIVE: false puts SRTP on node:crypto like the rest of
 * native/rtp-udp's work goes to TypeScript. Sessions already running keep their transforms.
 */
export function preferNativeSrtp(native: boolean): void {
  preferNative = native;
  defaultFactory = undefined;
}

export class SrtpMedia {
  private readonly session: SrtpSession;

  private constructor(
    private readonly keys: NegotiatedSrtp,
    factory: CipherFactory,
  ) {
    const suite = suiteByName(keys.suite);
    if (!suite) throw new Error(`unknown SRTP suite ${keys.suite}`);
    this.session = new SrtpSession(suite, keys.local, keys.remote, factory);
  }

  /** The SRTP for `negotiated`: `current` if its keys are the same, a new one if not, none for plain RTP. */
  static for(negotiated: NegotiatedSrtp | undefined, current: SrtpMedia | undefined, factory?: CipherFactory): SrtpMedia | undefined {
    if (!negotiated) return undefined;
    if (current && current.sameKeys(negotiated)) return current;
    return new SrtpMedia(negotiated, factory ?? srtpCipherFactory());
  }

  get suite(): string {
    return this.keys.suite;
  }

  get counters(): SrtpCounters {
    return this.session.counters;
  }

  /** The SRTP datagram for one outbound packet (a new buffer, handed to the socket). */
  protectRtp(packet: OutboundRtp, sequence: number, ssrc: number): Uint8Array {
    const payload = packet.room === RTP_HEADER_LENGTH ? packet.payload.subarray(RTP_HEADER_LENGTH) : packet.payload;
    const length = RTP_HEADER_LENGTH + payload.length;
    const datagram = Buffer.allocUnsafe(length + this.session.suite.rtpTagLength);
    writeRtpHeader(datagram, packet.payloadType, packet.marker, sequence, packet.timestamp, ssrc);
    datagram.set(payload, RTP_HEADER_LENGTH);
    const n = this.session.protectRtp(datagram, length);
    return n === datagram.length ? datagram : datagram.subarray(0, Math.max(0, n));
  }

  /** The SRTCP datagram for an RTCP compound packet. */
  protectRtcp(rtcp: Uint8Array): Uint8Array {
    const datagram = Buffer.allocUnsafe(rtcp.length + this.session.trailer);
    datagram.set(rtcp, 0);
    return datagram.subarray(0, Math.max(0, this.session.protectRtcp(datagram, rtcp.length)));
  }

  /** In place; the RTP length, or negative when the datagram is refused (and counted). */
  unprotectRtp(datagram: Uint8Array): number {
    return this.session.unprotectRtp(datagram, datagram.length);
  }

  unprotectRtcp(datagram: Uint8Array): number {
    return this.session.unprotectRtcp(datagram, datagram.length);
  }

  private sameKeys(other: NegotiatedSrtp): boolean {
    const k = this.keys;
    return (
      k.suite === other.suite &&
      Buffer.compare(k.local.key, other.local.key) === 0 &&
      Buffer.compare(k.local.salt, other.local.salt) === 0 &&
      Buffer.compare(k.remote.key, other.remote.key) === 0 &&
      Buffer.compare(k.remote.salt, other.remote.salt) === 0
    );
  }
}
