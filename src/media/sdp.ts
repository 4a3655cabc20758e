/**
 * SDP as the media layer sees it: parsed once (via sdp-transform) into a small normalised model
 * with static payload types resolved, connection addresses inherited from the session level and
 * direction defaulted, so the offer/answer rules in sdp-negotiate.ts stay simple and pure.
 */
import { parse } from 'sdp-transform';

export type MediaDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export interface SdpFormat {
  payloadType: number;
  /** Encoding name as written ('PCMU', 'opus', 'telephone-event'). */
  name: string;
  clockRate: number;
  channels: number;
  fmtp?: string;
}

export interface SdpMedia {
  /** Position among the m= lines: the answer must keep the same order. */
  index: number;
  type: string;
  port: number;
  protocol: string;
  /** The m= line's format list verbatim (echoed when the stream is rejected). */
  formatList: string;
  /** Formats in the offerer's preference order; dynamic types without rtpmap are left out. */
  formats: SdpFormat[];
  /** Media-level c= if present, else the session-level one. */
  address?: string;
  rtcpPort?: number;
  direction: MediaDirection;
  ptimeMs?: number;
  maxptimeMs?: number;
  /** a=crypto values (RFC 4568) as written, in order; parsed by srtp/sdes.ts. */
  cryptos: string[];
}

export interface SdpOrigin {
  username: string;
  /** Kept as text: session ids routinely exceed 2^53. */
  sessionId: string;
  sessionVersion: string;
  address: string;
}

export interface ParsedSdp {
  origin: SdpOrigin;
  media: SdpMedia[];
}

/** SIP status the failure maps to: 488 Not Acceptable Here, or 400 for unreadable SDP. */
export type SdpFailureCode = 'MALFORMED_SDP' | 'NO_AUDIO_STREAM' | 'NO_COMMON_CODEC' | 'STREAM_REJECTED' | 'SRTP_NOT_ACCEPTABLE';

export class SdpNegotiationError extends Error {
  /** The SIP response to send (RFC 3261 §21.4.26 for 488). */
  readonly sipStatus: 400 | 488;
  /** SIP Warning code (RFC 3261 §20.43): 304 media type, 305 media format not available. */
  readonly warningCode: 304 | 305 | 399;

  constructor(
    readonly code: SdpFailureCode,
    message: string,
  ) {
    super(message);
    this.name = 'SdpNegotiationError';
    this.sipStatus = code === 'MALFORMED_SDP' ? 400 : 488;
    this.warningCode = code === 'NO_COMMON_CODEC' ? 305 : code === 'NO_AUDIO_STREAM' ? 304 : 399;
  }
}

/** RFC 3551 static audio payload types that may appear without an rtpmap line. */
const STATIC_PAYLOAD_TYPES: ReadonlyMap<number, Omit<SdpFormat, 'payloadType'>> = new Map([
  [0, { name: 'PCMU', clockRate: 8000, channels: 1 }],
  [3, { name: 'GSM', clockRate: 8000, channels: 1 }],
  [4, { name: 'G723', clockRate: 8000, channels: 1 }],
  [8, { name: 'PCMA', clockRate: 8000, channels: 1 }],
  [9, { name: 'G722', clockRate: 8000, channels: 1 }],
  [18, { name: 'G729', clockRate: 8000, channels: 1 }],
]);

const DIRECTIONS: readonly string[] = ['sendrecv', 'sendonly', 'recvonly', 'inactive'];

export function parseSdp(text: string): ParsedSdp {
  if (!/^v=0\s*$/m.test(text)) throw new SdpNegotiationError('MALFORMED_SDP', 'SDP has no v=0 line');
  const origin = parseOrigin(text);
  const session = parse(text);
  const cryptos = cryptoLinesByMedia(text);
  const sessionAddress = session.connection?.ip;
  const sessionDirection = asDirection(session.direction) ?? 'sendrecv';
  const media = (session.media ?? []).map((m, index): SdpMedia => {
    if (!Number.isInteger(m.port) || m.port < 0 || m.port > 65535) {
      throw new SdpNegotiationError('MALFORMED_SDP', `m= line ${index} has an invalid port`);
    }
    const formatList = String(m.payloads ?? '').trim();
    const fmtp = new Map((m.fmtp ?? []).map((f) => [f.payload, f.config]));
    const rtpmap = new Map((m.rtp ?? []).map((r) => [r.payload, r]));
    const formats: SdpFormat[] = [];
    for (const token of formatList.split(/\s+/)) {
      const pt = Number(token);
      if (!/^\d+$/.test(token) || pt > 127) continue;
      const mapped = rtpmap.get(pt);
      const known = mapped
        ? { name: mapped.codec, clockRate: mapped.rate ?? 8000, channels: Number(mapped.encoding ?? 1) || 1 }
        : STATIC_PAYLOAD_TYPES.get(pt);
      if (!known) continue;
      const config = fmtp.get(pt);
      formats.push({ payloadType: pt, ...known, ...(config !== undefined ? { fmtp: config } : {}) });
    }
    const address = m.connection?.ip ?? sessionAddress;
    return {
      index,
      type: m.type,
      port: m.port,
      protocol: m.protocol,
      formatList,
      formats,
      ...(address !== undefined ? { address } : {}),
      ...(m.rtcp?.port !== undefined ? { rtcpPort: m.rtcp.port } : {}),
      direction: asDirection(m.direction) ?? sessionDirection,
      ...(m.ptime !== undefined ? { ptimeMs: Number(m.ptime) } : {}),
      ...(m.maxptime !== undefined ? { maxptimeMs: Number(m.maxptime) } : {}),
      cryptos: cryptos[index] ?? [],
    };
  });
  return { origin, media };
}

/**
 * The raw a=crypto values of each m= section: sdp-transform keeps only the first session
 * parameter of a line, and a parameter it dropped could be one that makes the key unusable.
 */
function cryptoLinesByMedia(text: string): string[][] {
  const out: string[][] = [];
  let current: string[] | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('m=')) {
      current = [];
      out.push(current);
    } else if (current && line.startsWith('a=crypto:')) {
      current.push(line.slice('a=crypto:'.length).trim());
    }
  }
  return out;
}

function parseOrigin(text: string): SdpOrigin {
  const line = /^o=(\S+) (\S+) (\S+) IN IP[46] (\S+)\s*$/m.exec(text);
  if (!line) throw new SdpNegotiationError('MALFORMED_SDP', 'SDP has no valid o= line');
  return { username: line[1]!, sessionId: line[2]!, sessionVersion: line[3]!, address: line[4]! };
}

function asDirection(value: string | undefined): MediaDirection | undefined {
  return value !== undefined && DIRECTIONS.includes(value) ? (value as MediaDirection) : undefined;
}

/** What the other side's direction means for us: their sendonly is our recvonly. */
export function mirrorDirection(direction: MediaDirection): MediaDirection {
  if (direction === 'sendonly') return 'recvonly';
  if (direction === 'recvonly') return 'sendonly';
  return direction;
}

/** The directions both allow (we may further restrict, e.g. to hold the call ourselves). */
export function intersectDirections(a: MediaDirection, b: MediaDirection): MediaDirection {
  const send = canSend(a) && canSend(b);
  const recv = canReceive(a) && canReceive(b);
  return send ? (recv ? 'sendrecv' : 'sendonly') : recv ? 'recvonly' : 'inactive';
}

export function canSend(direction: MediaDirection): boolean {
  return direction === 'sendrecv' || direction === 'sendonly';
}

export function canReceive(direction: MediaDirection): boolean {
  return direction === 'sendrecv' || direction === 'recvonly';
}

/** RFC 2543 hold: a connection address that means "do not send to me". */
export function isHoldAddress(address: string | undefined): boolean {
  return address === '0.0.0.0' || address === '::';
}

/** c=/o= address family token for an address. */
export function addressType(address: string): 'IP4' | 'IP6' {
  return address.includes(':') ? 'IP6' : 'IP4';
}

/** The audio codecs an SDP offers, in its preference order (no telephone-event; at most 8); [] when unreadable. */
export function offeredCodecNames(sdp: string | undefined): string[] {
  if (!sdp) return [];
  try {
    const audio = parseSdp(sdp).media.find((m) => m.type === 'audio');
    return (audio?.formats ?? []).map((f) => f.name).filter((n) => n.toLowerCase() !== 'telephone-event').slice(0, 8);
  } catch {
    return [];
  }
}
