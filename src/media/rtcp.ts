/**
 * RTCP (RFC 3550 §6): SR, RR, SDES, BYE in compound packets; builders for our own reports and
 * round-trip time from LSR/DLSR.
 *
 * Parsing never throws and rejects the whole compound packet if any part is malformed
 * (RFC 3550 §A.2 validity checks): a half-understood report is worse than none.
 */

export interface ReportBlock {
  ssrc: number;
  /** Fraction lost since the previous report, as an 8-bit fixed point (lost/expected * 256). */
  fractionLost: number;
  /** 24-bit signed. */
  cumulativeLost: number;
  extendedHighestSeq: number;
  /** In RTP timestamp units. */
  jitter: number;
  /** Middle 32 bits of the NTP timestamp of the last SR received from this source; 0 if none. */
  lastSr: number;
  /** Delay since that SR, in 1/65536 s. */
  delaySinceLastSr: number;
}

export interface SenderInfo {
  ntpSeconds: number;
  ntpFraction: number;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
}

export type SdesItemType = 'cname' | 'name' | 'email' | 'phone' | 'loc' | 'tool' | 'note';
export interface SdesChunk {
  ssrc: number;
  items: Array<{ type: SdesItemType | number; text: string }>;
}

export type RtcpPacket =
  | { type: 'sr'; ssrc: number; sender: SenderInfo; reports: ReportBlock[] }
  | { type: 'rr'; ssrc: number; reports: ReportBlock[] }
  | { type: 'sdes'; chunks: SdesChunk[] }
  | { type: 'bye'; ssrcs: number[]; reason?: string }
  /** APP, XR, feedback and anything else: kept raw so a relay could pass it on. */
  | { type: 'other'; packetType: number; count: number; body: Uint8Array };

export type RtcpParseResult = { ok: true; packets: RtcpPacket[] } | { ok: false; error: string };

const PT_SR = 200;
const PT_RR = 201;
const PT_SDES = 202;
const PT_BYE = 203;
const SDES_TYPES: SdesItemType[] = ['cname', 'name', 'email', 'phone', 'loc', 'tool', 'note'];
/** Seconds from 1900-01-01 (NTP era 0) to 1970-01-01. */
const NTP_UNIX_OFFSET = 2_208_988_800;

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

export function parseRtcp(data: Uint8Array): RtcpParseResult {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const packets: RtcpPacket[] = [];
  let offset = 0;
  if (data.length < 4) return { ok: false, error: 'too-short' };
  while (offset < data.length) {
    if (data.length - offset < 4) return { ok: false, error: 'truncated-header' };
    const b0 = data[offset]!;
    if (b0 >> 6 !== 2) return { ok: false, error: 'bad-version' };
    const count = b0 & 0x1f;
    const packetType = data[offset + 1]!;
    const length = (view.getUint16(offset + 2) + 1) * 4;
    if (offset + length > data.length) return { ok: false, error: 'length-overflow' };
    let end = offset + length;
    if (b0 & 0x20) {
      // Only the last packet of a compound may be padded (RFC 3550 §6.4.1).
      if (end !== data.length) return { ok: false, error: 'padding-not-last' };
      const pad = data[end - 1]!;
      if (pad === 0 || pad > length - 4) return { ok: false, error: 'bad-padding' };
      end -= pad;
    }
    const body = data.subarray(offset + 4, end);
    const parsed = parseOne(packetType, count, body);
    if (!parsed) return { ok: false, error: `malformed-${packetType}` };
    packets.push(parsed);
    offset += length;
  }
  return { ok: true, packets };
}

function parseOne(packetType: number, count: number, body: Uint8Array): RtcpPacket | undefined {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  switch (packetType) {
    case PT_SR: {
      if (body.length < 24 + count * 24) return undefined;
      const sender: SenderInfo = {
        ntpSeconds: view.getUint32(4),
        ntpFraction: view.getUint32(8),
        rtpTimestamp: view.getUint32(12),
        packetCount: view.getUint32(16),
        octetCount: view.getUint32(20),
      };
      return { type: 'sr', ssrc: view.getUint32(0), sender, reports: readBlocks(view, 24, count) };
    }
    case PT_RR:
      if (body.length < 4 + count * 24) return undefined;
      return { type: 'rr', ssrc: view.getUint32(0), reports: readBlocks(view, 4, count) };
    case PT_SDES:
      return parseSdes(body, view, count);
    case PT_BYE: {
      if (body.length < count * 4) return undefined;
      const ssrcs: number[] = [];
      for (let i = 0; i < count; i++) ssrcs.push(view.getUint32(i * 4));
      const at = count * 4;
      if (body.length > at) {
        const len = body[at]!;
        if (at + 1 + len > body.length) return undefined;
        return { type: 'bye', ssrcs, reason: textDecoder.decode(body.subarray(at + 1, at + 1 + len)) };
      }
      return { type: 'bye', ssrcs };
    }
    default:
      return { type: 'other', packetType, count, body };
  }
}

function readBlocks(view: DataView, start: number, count: number): ReportBlock[] {
  const blocks: ReportBlock[] = [];
  for (let i = 0; i < count; i++) {
    const o = start + i * 24;
    const word = view.getUint32(o + 4);
    blocks.push({
      ssrc: view.getUint32(o),
      fractionLost: word >>> 24,
      cumulativeLost: ((word & 0xffffff) << 8) >> 8,
      extendedHighestSeq: view.getUint32(o + 8),
      jitter: view.getUint32(o + 12),
      lastSr: view.getUint32(o + 16),
      delaySinceLastSr: view.getUint32(o + 20),
    });
  }
  return blocks;
}

function parseSdes(body: Uint8Array, view: DataView, count: number): RtcpPacket | undefined {
  const chunks: SdesChunk[] = [];
  let o = 0;
  for (let c = 0; c < count; c++) {
    if (o + 4 > body.length) return undefined;
    const chunk: SdesChunk = { ssrc: view.getUint32(o), items: [] };
    o += 4;
    for (;;) {
      if (o >= body.length) return undefined;
      const itemType = body[o]!;
      if (itemType === 0) {
        // The null item ends the chunk; the chunk is then padded to a 32-bit boundary.
        o = (o + 4) & ~3;
        break;
      }
      if (o + 2 > body.length) return undefined;
      const len = body[o + 1]!;
      if (o + 2 + len > body.length) return undefined;
      const text = textDecoder.decode(body.subarray(o + 2, o + 2 + len));
      chunk.items.push({ type: SDES_TYPES[itemType - 1] ?? itemType, text });
      o += 2 + len;
    }
    chunks.push(chunk);
  }
  return { type: 'sdes', chunks };
}

/** Serializes a compound RTCP packet. RFC 3550 wants it to start with an SR or RR and carry a CNAME. */
export function serializeRtcp(packets: RtcpPacket[]): Uint8Array {
  const parts = packets.map(serializeOne);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function serializeOne(packet: RtcpPacket): Uint8Array {
  switch (packet.type) {
    case 'sr': {
      const body = new Uint8Array(24 + packet.reports.length * 24);
      const view = new DataView(body.buffer);
      view.setUint32(0, packet.ssrc >>> 0);
      view.setUint32(4, packet.sender.ntpSeconds >>> 0);
      view.setUint32(8, packet.sender.ntpFraction >>> 0);
      view.setUint32(12, packet.sender.rtpTimestamp >>> 0);
      view.setUint32(16, packet.sender.packetCount >>> 0);
      view.setUint32(20, packet.sender.octetCount >>> 0);
      writeBlocks(view, 24, packet.reports);
      return frame(PT_SR, packet.reports.length, body);
    }
    case 'rr': {
      const body = new Uint8Array(4 + packet.reports.length * 24);
      const view = new DataView(body.buffer);
      view.setUint32(0, packet.ssrc >>> 0);
      writeBlocks(view, 4, packet.reports);
      return frame(PT_RR, packet.reports.length, body);
    }
    case 'sdes': {
      const pieces: number[] = [];
      for (const chunk of packet.chunks) {
        pieces.push(chunk.ssrc >>> 24, (chunk.ssrc >>> 16) & 0xff, (chunk.ssrc >>> 8) & 0xff, chunk.ssrc & 0xff);
        for (const item of chunk.items) {
          const text = textEncoder.encode(item.text).subarray(0, 255);
          const code = typeof item.type === 'number' ? item.type : SDES_TYPES.indexOf(item.type) + 1;
          pieces.push(code, text.length, ...text);
        }
        // Null item plus padding: at least one zero octet, up to the next 32-bit boundary.
        do pieces.push(0);
        while (pieces.length % 4 !== 0);
      }
      return frame(PT_SDES, packet.chunks.length, Uint8Array.from(pieces));
    }
    case 'bye': {
      const reason = packet.reason === undefined ? undefined : textEncoder.encode(packet.reason).subarray(0, 255);
      const raw = packet.ssrcs.length * 4 + (reason ? 1 + reason.length : 0);
      const body = new Uint8Array((raw + 3) & ~3);
      const view = new DataView(body.buffer);
      packet.ssrcs.forEach((ssrc, i) => view.setUint32(i * 4, ssrc >>> 0));
      if (reason) {
        body[packet.ssrcs.length * 4] = reason.length;
        body.set(reason, packet.ssrcs.length * 4 + 1);
      }
      return frame(PT_BYE, packet.ssrcs.length, body);
    }
    case 'other': {
      const padded = new Uint8Array((packet.body.length + 3) & ~3);
      padded.set(packet.body);
      return frame(packet.packetType, packet.count, padded);
    }
  }
}

function writeBlocks(view: DataView, start: number, reports: ReportBlock[]): void {
  if (reports.length > 31) throw new RangeError('at most 31 report blocks per RTCP packet');
  reports.forEach((r, i) => {
    const o = start + i * 24;
    view.setUint32(o, r.ssrc >>> 0);
    view.setUint32(o + 4, (((r.fractionLost & 0xff) << 24) | (r.cumulativeLost & 0xffffff)) >>> 0);
    view.setUint32(o + 8, r.extendedHighestSeq >>> 0);
    view.setUint32(o + 12, r.jitter >>> 0);
    view.setUint32(o + 16, r.lastSr >>> 0);
    view.setUint32(o + 20, r.delaySinceLastSr >>> 0);
  });
}

function frame(packetType: number, count: number, body: Uint8Array): Uint8Array {
  if (count > 31) throw new RangeError('RTCP count field is 5 bits');
  if (body.length % 4 !== 0) throw new RangeError('RTCP body must be 32-bit aligned');
  const out = new Uint8Array(4 + body.length);
  out[0] = 0x80 | count;
  out[1] = packetType;
  new DataView(out.buffer).setUint16(2, body.length / 4);
  out.set(body, 4);
  return out;
}

/** Wall-clock milliseconds since the Unix epoch to a 64-bit NTP timestamp. */
export function msToNtp(ms: number): { seconds: number; fraction: number } {
  const whole = Math.floor(ms / 1000);
  const fraction = Math.floor(((ms - whole * 1000) / 1000) * 0x1_0000_0000);
  return { seconds: (whole + NTP_UNIX_OFFSET) >>> 0, fraction: Math.min(fraction, 0xffff_ffff) >>> 0 };
}

/** The "middle 32 bits" of an NTP timestamp (16.16 fixed point seconds), as used by LSR. */
export function ntpMiddle(seconds: number, fraction: number): number {
  return (((seconds & 0xffff) << 16) | (fraction >>> 16)) >>> 0;
}

/**
 * Round-trip time from a report block we received (RFC 3550 §6.4.1): arrival − LSR − DLSR,
 * in 1/65536 s units, converted to ms. Undefined when the peer has not seen an SR of ours yet
 * or the figure is nonsense (negative because of a bogus or stale block).
 */
export function roundTripMs(block: Pick<ReportBlock, 'lastSr' | 'delaySinceLastSr'>, arrivalMs: number): number | undefined {
  if (block.lastSr === 0) return undefined;
  const now = msToNtp(arrivalMs);
  const rtt = (ntpMiddle(now.seconds, now.fraction) - block.lastSr - block.delaySinceLastSr) | 0;
  if (rtt < 0) return undefined;
  return (rtt * 1000) / 65536;
}

export interface SenderCounters {
  ssrc: number;
  packetCount: number;
  octetCount: number;
  /** RTP timestamp corresponding to `nowMs` (extrapolated from the last frame sent). */
  rtpTimestamp: number;
}

/**
 * Our periodic compound report: SR if we have sent media since the last report, otherwise RR
 * (RFC 3550 §6.4), then SDES with our CNAME as the RFC requires.
 */
export function buildReport(args: {
  nowMs: number;
  cname: string;
  sender: SenderCounters;
  sentSinceLastReport: boolean;
  reports: ReportBlock[];
}): RtcpPacket[] {
  const { nowMs, cname, sender, reports } = args;
  const ntp = msToNtp(nowMs);
  const head: RtcpPacket = args.sentSinceLastReport
    ? {
        type: 'sr',
        ssrc: sender.ssrc,
        sender: {
          ntpSeconds: ntp.seconds,
          ntpFraction: ntp.fraction,
          rtpTimestamp: sender.rtpTimestamp,
          packetCount: sender.packetCount,
          octetCount: sender.octetCount,
        },
        reports,
      }
    : { type: 'rr', ssrc: sender.ssrc, reports };
  return [head, { type: 'sdes', chunks: [{ ssrc: sender.ssrc, items: [{ type: 'cname', text: cname }] }] }];
}

/** Compound packet for hanging up: a report, the CNAME, then BYE (RFC 3550 §6.6). */
export function buildBye(report: RtcpPacket[], ssrc: number, reason?: string): RtcpPacket[] {
  return [...report, { type: 'bye', ssrcs: [ssrc], ...(reason === undefined ? {} : { reason }) }];
}

/**
 * Delay until our next report (RFC 3550 §6.3): for a two-party call the bandwidth share never
 * matters, so this is the 5 s minimum (2.5 s before the first report), randomised over
 * [0.5, 1.5] and divided by e − 3/2 as §6.3.1 says, so reports from many calls never synchronise.
 */
export function rtcpIntervalMs(random: () => number, first = false): number {
  const base = first ? 2500 : 5000;
  return (base * (0.5 + random())) / (Math.E - 1.5);
}
