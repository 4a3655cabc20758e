/**
 * RTP fixed header (RFC 3550 §5.1): parse and serialize.
 *
 * Parsing never throws: a datagram off the wire is untrusted input, and a malformed one must be
 * counted and dropped by the caller, not crash the receive loop.
 *
 * Both directions run once per packet per call (thousands of times a second in a busy process),
 * so they read and write the header bytes directly: no DataView, no CSRC array for the usual
 * packet without CSRCs, one Buffer per datagram sent (`rtpDatagram`), taken from Node's pool.
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
  /** Parsed packets without CSRCs (nearly all) share one frozen empty array. */
  csrcs: readonly number[];
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
  csrcs?: readonly number[];
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

const NO_CSRCS: readonly number[] = Object.freeze([]);

export function parseRtp(data: Uint8Array): RtpParseResult {
  const packet: RtpPacket = { payloadType: 0, marker: false, sequenceNumber: 0, timestamp: 0, ssrc: 0, csrcs: NO_CSRCS, payload: NO_PAYLOAD, paddingLength: 0 };
  const error = parseInto(data, packet, false);
  return error === undefined ? { ok: true, packet } : { ok: false, error };
}

/**
 * parseRtp() into a packet object the caller reuses datagram after datagram (a receive loop):
 * no result or packet object per datagram. Returns the error, or undefined with every field of
 * `packet` overwritten (`extension` set to undefined when there is none); on an error `packet`
 * is left as it was. The payload is a new view into `data` each time, as with parseRtp(), so it
 * may be kept; the packet object may not (it is the next datagram's).
 */
export function parseRtpInto(data: Uint8Array, packet: RtpPacket): RtpParseError | undefined {
  return parseInto(data, packet, true);
}

const NO_PAYLOAD = new Uint8Array(0);

function parseInto(data: Uint8Array, packet: RtpPacket, reused: boolean): RtpParseError | undefined {
  const length = data.length;
  if (length < RTP_HEADER_LENGTH) return 'too-short';
  const b0 = data[0]!;
  const b1 = data[1]!;
  if (b0 >> 6 !== 2) return 'bad-version';
  const csrcCount = b0 & 0x0f;

  let offset = RTP_HEADER_LENGTH;
  if (length < offset + csrcCount * 4) return 'csrc-overflow';
  let csrcs = NO_CSRCS;
  if (csrcCount > 0) {
    const list: number[] = [];
    for (let i = 0; i < csrcCount; i++, offset += 4) list.push(readUint32(data, offset));
    csrcs = list;
  }

  let extension: RtpHeaderExtension | undefined;
  if ((b0 & 0x10) !== 0) {
    if (length < offset + 4) return 'extension-overflow';
    const profile = (data[offset]! << 8) | data[offset + 1]!;
    const words = (data[offset + 2]! << 8) | data[offset + 3]!;
    offset += 4;
    if (length < offset + words * 4) return 'extension-overflow';
    extension = { profile, data: data.subarray(offset, offset + words * 4) };
    offset += words * 4;
  }

  let end = length;
  let paddingLength = 0;
  if ((b0 & 0x20) !== 0) {
    // The last octet counts the padding including itself, so 0 is invalid (RFC 3550 §5.1).
    paddingLength = data[length - 1]!;
    if (paddingLength === 0 || offset + paddingLength > length) return 'bad-padding';
    end -= paddingLength;
  }

  packet.payloadType = b1 & 0x7f;
  packet.marker = (b1 & 0x80) !== 0;
  packet.sequenceNumber = (data[2]! << 8) | data[3]!;
  packet.timestamp = readUint32(data, 4);
  packet.ssrc = readUint32(data, 8);
  packet.csrcs = csrcs;
  packet.payload = data.subarray(offset, end);
  packet.paddingLength = paddingLength;
  // A new packet gets `extension` only when present (the common packet keeps one shape); a
  // reused one always has it, so it must be cleared.
  if (extension) packet.extension = extension;
  else if (reused) packet.extension = undefined;
  return undefined;
}

export function serializeRtp(packet: RtpPacketInit): Uint8Array {
  const csrcs = packet.csrcs ?? NO_CSRCS;
  if (csrcs.length > 15) throw new RangeError('RTP allows at most 15 CSRCs');
  const ext = packet.extension;
  if (ext && ext.data.length % 4 !== 0) throw new RangeError('RTP header extension must be a multiple of 4 bytes');
  const paddingLength = packet.paddingLength ?? 0;
  if (paddingLength < 0 || paddingLength > 255) throw new RangeError('RTP padding must be 0..255 bytes');

  const extLength = ext ? 4 + ext.data.length : 0;
  const headerLength = RTP_HEADER_LENGTH + csrcs.length * 4 + extLength;
  const out = Buffer.allocUnsafe(headerLength + packet.payload.length + paddingLength);
  const b0 = 0x80 | (paddingLength > 0 ? 0x20 : 0) | (ext ? 0x10 : 0) | csrcs.length;
  writeFixedHeader(out, b0, packet.marker ?? false, packet.payloadType, packet.sequenceNumber, packet.timestamp, packet.ssrc);
  let offset = RTP_HEADER_LENGTH;
  for (const csrc of csrcs) {
    writeUint32(out, offset, csrc);
    offset += 4;
  }
  if (ext) {
    const words = ext.data.length / 4;
    out[offset] = (ext.profile >>> 8) & 0xff;
    out[offset + 1] = ext.profile & 0xff;
    out[offset + 2] = (words >>> 8) & 0xff;
    out[offset + 3] = words & 0xff;
    out.set(ext.data, offset + 4);
    offset += extLength;
  }
  out.set(packet.payload, offset);
  if (paddingLength > 0) {
    // allocUnsafe: every byte is written, the padding's included (zeros, then the count).
    out.fill(0, offset + packet.payload.length);
    out[out.length - 1] = paddingLength;
  }
  return out;
}

/**
 * One outbound datagram as the send path makes it: the fixed header (no CSRCs, extension or
 * padding) from the fields as they are, and the payload after it, written once into one Buffer.
 * The Buffer is new each time (a slice of Node's pool, not an ArrayBuffer of its own) because
 * dgram keeps a reference to it until the datagram has left.
 */
export function rtpDatagram(payloadType: number, marker: boolean, sequenceNumber: number, timestamp: number, ssrc: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(RTP_HEADER_LENGTH + payload.length);
  writeFixedHeader(out, 0x80, marker, payloadType, sequenceNumber, timestamp, ssrc);
  out.set(payload, RTP_HEADER_LENGTH);
  return out;
}

/**
 * rtpDatagram() for a payload already in place: writes the same fixed header into the first
 * RTP_HEADER_LENGTH bytes of `datagram`, whose payload follows them.
 */
export function writeRtpHeader(datagram: Uint8Array, payloadType: number, marker: boolean, sequenceNumber: number, timestamp: number, ssrc: number): void {
  writeFixedHeader(datagram, 0x80, marker, payloadType, sequenceNumber, timestamp, ssrc);
}

function writeFixedHeader(out: Uint8Array, b0: number, marker: boolean, payloadType: number, sequenceNumber: number, timestamp: number, ssrc: number): void {
  out[0] = b0;
  out[1] = (marker ? 0x80 : 0) | (payloadType & 0x7f);
  out[2] = (sequenceNumber >>> 8) & 0xff;
  out[3] = sequenceNumber & 0xff;
  writeUint32(out, 4, timestamp);
  writeUint32(out, 8, ssrc);
}

function writeUint32(out: Uint8Array, at: number, value: number): void {
  out[at] = (value >>> 24) & 0xff;
  out[at + 1] = (value >>> 16) & 0xff;
  out[at + 2] = (value >>> 8) & 0xff;
  out[at + 3] = value & 0xff;
}

function readUint32(data: Uint8Array, at: number): number {
  return ((data[at]! << 24) | (data[at + 1]! << 16) | (data[at + 2]! << 8) | data[at + 3]!) >>> 0;
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
