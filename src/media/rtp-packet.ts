/**
 * RTP fixed header (RFC 3550 §5.1): parse and serialize.
 *
 * Parsing never throws: a datagram off the wire is untrusted input, and a malformed one must be
 * counted and dropped by the caller, not crash the receive loop.
 */

export interface RtpHeaderExtension {
  /** "defined by profile" field; 0xBEDE is RFC 8285 one-byte headers. */
  profile: number;
  /** Extension body, a multiple of 4 bytes long. */
  data: Uint8Array;
}

export interface RtpPacket {
  payloadType: number;
  /** 16-bit. */
  sequenceNumber: number;
  /** 32-bit, unsigned. */
  timestamp: number;
  /** 32-bit, unsigned. */
  ssrc: number;
  marker: boolean;
  csrcs: number[];
  extension?: RtpHeaderExtension;
  /**
   * Payload without padding. When parsed this is a view into the datagram (no copy): the Buffer
   * dgram hands us is fresh per message, so holding on to the view is safe.
   */
  payload: Uint8Array;
  /** Number of padding bytes (including the count byte) that followed the payload; 0 if none. */
  paddingLength: number;
}

export type RtpPacketInit = Omit<RtpPacket, 'csrcs' | 'paddingLength' | 'marker'> & {
  marker?: boolean;
  csrcs?: number[];
  paddingLength?: number;
};

export type RtpParseError =
  | 'too-short'
  | 'bad-version'
  | 'csrc-overflow'
  | 'extension-overflow'
  | 'bad-padding';

export type RtpParseResult = { ok: true; packet: RtpPacket } | { ok: false; error: RtpParseError };

export const RTP_HEADER_LENGTH = 12;

export function parseRtp(data: Uint8Array): RtpParseResult {
  if (data.length < RTP_HEADER_LENGTH) return { ok: false, error: 'too-short' };
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const b0 = data[0]!;
  const b1 = data[1]!;
  if (b0 >> 6 !== 2) return { ok: false, error: 'bad-version' };
  const hasPadding = (b0 & 0x20) !== 0;
  const hasExtension = (b0 & 0x10) !== 0;
  const csrcCount = b0 & 0x0f;

  let offset = RTP_HEADER_LENGTH;
  if (data.length < offset + csrcCount * 4) return { ok: false, error: 'csrc-overflow' };
  const csrcs: number[] = [];
  for (let i = 0; i < csrcCount; i++) {
    csrcs.push(view.getUint32(offset));
    offset += 4;
  }

  let extension: RtpHeaderExtension | undefined;
  if (hasExtension) {
    if (data.length < offset + 4) return { ok: false, error: 'extension-overflow' };
    const profile = view.getUint16(offset);
    const words = view.getUint16(offset + 2);
    offset += 4;
    if (data.length < offset + words * 4) return { ok: false, error: 'extension-overflow' };
    extension = { profile, data: data.subarray(offset, offset + words * 4) };
    offset += words * 4;
  }

  let end = data.length;
  let paddingLength = 0;
  if (hasPadding) {
    // The last octet counts the padding including itself, so 0 is invalid (RFC 3550 §5.1).
    paddingLength = data[data.length - 1]!;
    if (paddingLength === 0 || offset + paddingLength > data.length) return { ok: false, error: 'bad-padding' };
    end -= paddingLength;
  }

  return {
    ok: true,
    packet: {
      payloadType: b1 & 0x7f,
      marker: (b1 & 0x80) !== 0,
      sequenceNumber: view.getUint16(2),
      timestamp: view.getUint32(4),
      ssrc: view.getUint32(8),
      csrcs,
      ...(extension ? { extension } : {}),
      payload: data.subarray(offset, end),
      paddingLength,
    },
  };
}

export function serializeRtp(packet: RtpPacketInit): Uint8Array {
  const csrcs = packet.csrcs ?? [];
  if (csrcs.length > 15) throw new RangeError('RTP allows at most 15 CSRCs');
  const ext = packet.extension;
  if (ext && ext.data.length % 4 !== 0) throw new RangeError('RTP header extension must be a multiple of 4 bytes');
  const paddingLength = packet.paddingLength ?? 0;
  if (paddingLength < 0 || paddingLength > 255) throw new RangeError('RTP padding must be 0..255 bytes');

  const extLength = ext ? 4 + ext.data.length : 0;
  const headerLength = RTP_HEADER_LENGTH + csrcs.length * 4 + extLength;
  const out = new Uint8Array(headerLength + packet.payload.length + paddingLength);
  const view = new DataView(out.buffer);

  out[0] = 0x80 | (paddingLength > 0 ? 0x20 : 0) | (ext ? 0x10 : 0) | csrcs.length;
  out[1] = (packet.marker ? 0x80 : 0) | (packet.payloadType & 0x7f);
  view.setUint16(2, packet.sequenceNumber & 0xffff);
  view.setUint32(4, packet.timestamp >>> 0);
  view.setUint32(8, packet.ssrc >>> 0);
  let offset = RTP_HEADER_LENGTH;
  for (const csrc of csrcs) {
    view.setUint32(offset, csrc >>> 0);
    offset += 4;
  }
  if (ext) {
    view.setUint16(offset, ext.profile & 0xffff);
    view.setUint16(offset + 2, ext.data.length / 4);
    out.set(ext.data, offset + 4);
    offset += extLength;
  }
  out.set(packet.payload, offset);
  if (paddingLength > 0) out[out.length - 1] = paddingLength;
  return out;
}

/**
 * RFC 5761 §4 demultiplexing for rtcp-mux: RTCP packet types 192..223 land in the range RTP
 * payload types 64..95 would occupy, which no dynamic or static audio PT uses.
 */
export function looksLikeRtcp(data: Uint8Array): boolean {
  if (data.length < 2 || data[0]! >> 6 !== 2) return false;
  const pt = data[1]!;
  return pt >= 192 && pt <= 223;
}

/** Signed distance from `a` to `b` in 16-bit sequence space (-32768..32767). */
export function seqDelta(a: number, b: number): number {
  return (((b - a) & 0xffff) << 16) >> 16;
}

/** Signed distance from `a` to `b` in 32-bit timestamp space. */
export function timestampDelta(a: number, b: number): number {
  return (b - a) | 0;
}
