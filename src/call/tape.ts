/**
 * The call tape (`record`): the caller's RTP exactly as it arrived — per packet its arrival time
 * on the call clock, sequence number, RTP timestamp, SSRC, marker, payload type and payload bytes
 * — with the negotiated media (codec, clock rate, ptime, telephone-event payload type), the DTMF
 * the call heard and the call's events (answer, re-INVITEs, hang-up with its cause).
 * `switchboard replay --tape` feeds it back through the production inbound chain
 * (src/replay/tape-replay.ts), so a real call can be re-run against new assistant settings.
 * The file format is documented in docs/CALL-TAPE.md.
 *
 * Memory: while recording, packet headers live in fixed-size columnar chunks and payloads in
 * 256 KiB byte chunks (about 30 bytes per packet plus its payload: a 20-minute G.711 call at
 * 50 packets/s is about 11 MB), never as one object per packet. Past the limits the recorder
 * keeps no more packets and the tape says `truncated`.
 */
import { writeFileAtomic } from '../util/write-file-atomic.ts';
import { join } from 'node:path';
import { z } from 'zod';
import { findCodec } from '../media/codecs/codecs.ts';
import type { Codec } from '../media/codecs/codec.ts';
import type { RtpPacket } from '../media/rtp-packet.ts';
import type { InboundTap } from '../media/rtp-session.ts';
import type { NegotiatedMedia } from '../media/sdp-negotiate.ts';
import type { MediaDirection } from '../media/sdp.ts';

export const TAPE_KIND = 'switchboard-call-tape';
export const TAPE_VERSION = 1;
/** The columns of one row of `packets` in the file. */
export const PACKET_FIELDS = ['atMs', 'sequenceNumber', 'timestamp', 'ssrc', 'marker', 'payloadType', 'payload'] as const;

/** Where a call's tape lives under SWITCHBOARD_DATA_DIR (beside its WAV). */
export function tapePath(dataDir: string, callUuid: string): string {
  return join(dataDir, 'recordings', `${callUuid}.tape.json`);
}

export interface TapeCodec {
  payloadType: number;
  /** SDP encoding name (`PCMU`, `G722`, `opus`). */
  codec: string;
  clockRate: number;
  channels: number;
}

/** The negotiated media from `atMs` on: the first entry at the tape's start, one per re-INVITE after. */
export interface TapeMedia extends TapeCodec {
  atMs: number;
  ptimeMs: number;
  /** RFC 4733 telephone-event, when negotiated. */
  telephoneEvent: { payloadType: number; clockRate: number } | null;
  /** Every payload type the far end may send (the sending codec included). */
  receive: TapeCodec[];
  direction: MediaDirection;
  remoteHold: boolean;
}

export type TapeEvent =
  | { atMs: number; type: 'answered' }
  | { atMs: number; type: 'engine-run'; assistantId: number }
  | { atMs: number; type: 'reinvite'; media: number; codec: string }
  | { atMs: number; type: 'dtmf'; digit: string; durationMs: number }
  | { atMs: number; type: 'hangup'; cause: string };

export interface TapePacket {
  /** Arrival, ms from answer on the call clock. */
  atMs: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  marker: boolean;
  payloadType: number;
  payload: Uint8Array;
}

/** A tape in memory (what `parseCallTape` returns and the replay reads). */
export interface CallTape {
  kind: typeof TAPE_KIND;
  version: typeof TAPE_VERSION;
  call: { uuid: string; direction: string };
  /** When the tape began keeping packets, ms from answer (later than 0 when recording began after an assistant swap). */
  startedAtMs: number;
  /** When the call ended, ms from answer; null if the tape was cut before. */
  endedAtMs: number | null;
  /** Packets stopped being kept at the recorder's limits. */
  truncated: boolean;
  media: TapeMedia[];
  events: TapeEvent[];
  /** The engines' decisions, in ms from answer (absent on tapes written before it was kept). */
  timeline?: TapeTimelineEvent[];
  packets: TapePacket[];
}

/**
 * What the engine decided during the call (its timeline: VAD, end-of-turn decisions with their
 * reason, interruptions taken or ignored, fillers, assistant audio, DTMF, hang-up), in ms from
 * answer. The shapes are the engines' (src/call/cascade/timeline.ts, src/call/realtime/timeline.ts);
 * the tape keeps them as they are, for the console and for anyone comparing a replay to the call.
 */
export type TapeTimelineEvent = { atMs: number; type: string } & Record<string, unknown>;

export type PacketRow = [atMs: number, sequenceNumber: number, timestamp: number, ssrc: number, marker: 0 | 1, payloadType: number, payloadBase64: string];

/** The file: the same, with one compact row per packet. */
export interface CallTapeFile extends Omit<CallTape, 'packets'> {
  packetFields: typeof PACKET_FIELDS;
  packets: PacketRow[];
}

/** ms rounded to 10 µs: arrival times keep their sub-millisecond part without float noise. */
function ms(x: number): number {
  return Math.round(x * 100) / 100;
}

function tapeCodec(payloadType: number, codec: Codec): TapeCodec {
  return { payloadType, codec: codec.name, clockRate: codec.clockRate, channels: codec.channels };
}

export function tapeMediaOf(media: NegotiatedMedia, atMs: number): TapeMedia {
  return {
    atMs: ms(atMs),
    ...tapeCodec(media.payloadType, media.codec),
    ptimeMs: media.ptimeMs,
    telephoneEvent: media.dtmfPayloadType === undefined ? null : { payloadType: media.dtmfPayloadType, clockRate: media.dtmfClockRate ?? 8000 },
    receive: [...media.receiveCodecs].map(([pt, codec]) => tapeCodec(pt, codec)),
    direction: media.direction,
    remoteHold: media.remoteHold,
  };
}

function codecFor(c: TapeCodec): Codec {
  const codec = findCodec(c.codec);
  if (!codec || codec.clockRate !== c.clockRate) throw new Error(`the tape uses ${c.codec}/${c.clockRate}, which this build cannot decode`);
  return codec;
}

/**
 * The tape's media as the inbound chain takes it. The far end's address is not on the tape (the
 * source filter already chose the packets): `remote` stands in for it, and the replay sends
 * every packet from there.
 */
export function negotiatedFromTape(m: TapeMedia, remote: { address: string; port: number; rtcpPort: number }): NegotiatedMedia {
  const receiveCodecs = new Map<number, Codec>(m.receive.map((c) => [c.payloadType, codecFor(c)]));
  const codec = receiveCodecs.get(m.payloadType) ?? codecFor(m);
  receiveCodecs.set(m.payloadType, codec);
  return {
    remote,
    codec,
    payloadType: m.payloadType,
    receiveCodecs,
    ...(m.telephoneEvent ? { dtmfPayloadType: m.telephoneEvent.payloadType, dtmfClockRate: m.telephoneEvent.clockRate } : {}),
    ptimeMs: m.ptimeMs,
    direction: m.direction,
    remoteHold: m.remoteHold,
    mediaIndex: 0,
  };
}

// ---- recording ----

export interface TapeLimits {
  /** Packets kept at most (default 150 000: 50 minutes at 50 packets/s). */
  maxPackets?: number;
  /** Payload bytes kept at most (default 32 MiB). */
  maxPayloadBytes?: number;
}

const CHUNK_PACKETS = 4096;
/** Engine timeline events kept at most (a long call has a few per second). */
const MAX_TIMELINE_EVENTS = 20_000;
const PAYLOAD_CHUNK_BYTES = 256 * 1024;

/** Headers of up to CHUNK_PACKETS packets, column by column. */
class HeaderChunk {
  readonly at = new Float64Array(CHUNK_PACKETS);
  readonly seq = new Uint16Array(CHUNK_PACKETS);
  readonly ts = new Uint32Array(CHUNK_PACKETS);
  readonly ssrc = new Uint32Array(CHUNK_PACKETS);
  /** Payload type in the low 7 bits, marker in the high bit. */
  readonly ptMarker = new Uint8Array(CHUNK_PACKETS);
  readonly len = new Uint16Array(CHUNK_PACKETS);
  readonly chunk = new Uint32Array(CHUNK_PACKETS);
  readonly offset = new Uint32Array(CHUNK_PACKETS);
  static readonly BYTES = CHUNK_PACKETS * (8 + 2 + 4 + 4 + 1 + 2 + 4 + 4);
}

/** Packets in arrival order, copied out of their datagrams into chunked storage. */
export class PacketLog {
  private readonly headers: HeaderChunk[] = [];
  private readonly payloads: Uint8Array[] = [];
  private used = 0;
  private payloadBytes = 0;
  count = 0;

  /** Memory held, in bytes (header chunks plus payload chunks). */
  get bytes(): number {
    return this.headers.length * HeaderChunk.BYTES + this.payloads.reduce((n, p) => n + p.length, 0);
  }

  get totalPayloadBytes(): number {
    return this.payloadBytes;
  }

  push(atMs: number, p: RtpPacket): void {
    const i = this.count % CHUNK_PACKETS;
    if (i === 0) this.headers.push(new HeaderChunk());
    const h = this.headers[this.headers.length - 1]!;
    const len = p.payload.length;
    let current = this.payloads[this.payloads.length - 1];
    if (!current || this.used + len > current.length) {
      current = new Uint8Array(Math.max(PAYLOAD_CHUNK_BYTES, len));
      this.payloads.push(current);
      this.used = 0;
    }
    current.set(p.payload, this.used);
    h.at[i] = atMs;
    h.seq[i] = p.sequenceNumber;
    h.ts[i] = p.timestamp;
    h.ssrc[i] = p.ssrc;
    h.ptMarker[i] = (p.payloadType & 0x7f) | (p.marker ? 0x80 : 0);
    h.len[i] = len;
    h.chunk[i] = this.payloads.length - 1;
    h.offset[i] = this.used;
    this.used += len;
    this.payloadBytes += len;
    this.count++;
  }

  /** The packets in order; each payload is a view into the log (copy it to keep it past the log). */
  *packets(): Generator<TapePacket> {
    for (let n = 0; n < this.count; n++) {
      const h = this.headers[Math.floor(n / CHUNK_PACKETS)]!;
      const i = n % CHUNK_PACKETS;
      const pm = h.ptMarker[i]!;
      const offset = h.offset[i]!;
      yield {
        atMs: h.at[i]!,
        sequenceNumber: h.seq[i]!,
        timestamp: h.ts[i]!,
        ssrc: h.ssrc[i]!,
        marker: (pm & 0x80) !== 0,
        payloadType: pm & 0x7f,
        payload: this.payloads[h.chunk[i]!]!.subarray(offset, offset + h.len[i]!),
      };
    }
  }
}

export interface TapeRecorderOptions extends TapeLimits {
  call: { uuid: string; direction: string };
  /** The answer, on the same monotonic clock as every `nowMs` given to the recorder: the tape's zero. */
  originMs: number;
}

/**
 * Keeps a call's tape. It is the RtpSession's InboundTap (media and packets); the call layer adds
 * DTMF and the hang-up. Every `nowMs` is on the session's monotonic clock.
 */
export class TapeRecorder implements InboundTap {
  private readonly log = new PacketLog();
  private readonly mediaLog: TapeMedia[] = [];
  private readonly events: TapeEvent[] = [{ atMs: 0, type: 'answered' }];
  private readonly decisions: TapeTimelineEvent[] = [];
  private readonly maxPackets: number;
  private readonly maxPayloadBytes: number;
  private startedAtMs: number | undefined;
  private endedAtMs: number | null = null;
  private truncated = false;

  constructor(private readonly o: TapeRecorderOptions) {
    this.maxPackets = o.maxPackets ?? 150_000;
    this.maxPayloadBytes = o.maxPayloadBytes ?? 32 * 1024 * 1024;
  }

  get packetCount(): number {
    return this.log.count;
  }

  /** Memory the packets take now, in bytes. */
  get bytes(): number {
    return this.log.bytes;
  }

  get ended(): boolean {
    return this.endedAtMs !== null;
  }

  media(media: NegotiatedMedia, nowMs: number): void {
    if (this.ended) return;
    const atMs = this.at(nowMs);
    this.startedAtMs ??= atMs;
    const entry = tapeMediaOf(media, atMs);
    this.mediaLog.push(entry);
    if (this.mediaLog.length > 1) this.events.push({ atMs: entry.atMs, type: 'reinvite', media: this.mediaLog.length - 1, codec: entry.codec });
  }

  packet(packet: RtpPacket, nowMs: number): void {
    if (this.ended || this.startedAtMs === undefined) return;
    if (this.log.count >= this.maxPackets || this.log.totalPayloadBytes + packet.payload.length > this.maxPayloadBytes) {
      this.truncated = true;
      return;
    }
    this.log.push(this.at(nowMs), packet);
  }

  /** An engine run (an assistant) begins: its transcript and timeline count from here. */
  engineRun(assistantId: number, nowMs: number): void {
    if (!this.ended) this.events.push({ atMs: this.at(nowMs), type: 'engine-run', assistantId });
  }

  /**
   * An engine run's timeline (times in ms from the run's start), once the run is over; `runAtMs`
   * is the run's start in ms from answer (its `engine-run` event). Bounded like the packets.
   */
  timeline(events: ReadonlyArray<{ atMs: number; type: string }>, runAtMs: number): void {
    for (const e of events) {
      if (this.decisions.length >= MAX_TIMELINE_EVENTS) {
        this.truncated = true;
        return;
      }
      const detected = (e as { detectedAtMs?: unknown }).detectedAtMs;
      this.decisions.push({ ...e, atMs: ms(e.atMs + runAtMs), ...(typeof detected === 'number' ? { detectedAtMs: ms(detected + runAtMs) } : {}) });
    }
  }

  dtmf(digit: string, durationMs: number, nowMs: number): void {
    if (!this.ended) this.events.push({ atMs: this.at(nowMs), type: 'dtmf', digit, durationMs });
  }

  /** The call ended; the tape keeps nothing after this. */
  hangup(cause: string, nowMs: number): void {
    if (this.ended) return;
    const atMs = this.at(nowMs);
    this.endedAtMs = atMs;
    this.events.push({ atMs, type: 'hangup', cause });
  }

  toJSON(): CallTapeFile {
    const packets: PacketRow[] = [];
    for (const p of this.log.packets()) {
      packets.push([p.atMs, p.sequenceNumber, p.timestamp, p.ssrc, p.marker ? 1 : 0, p.payloadType, Buffer.from(p.payload.buffer, p.payload.byteOffset, p.payload.byteLength).toString('base64')]);
    }
    return {
      kind: TAPE_KIND,
      version: TAPE_VERSION,
      call: { ...this.o.call },
      startedAtMs: this.startedAtMs ?? 0,
      endedAtMs: this.endedAtMs,
      truncated: this.truncated,
      media: this.mediaLog.map((m) => ({ ...m, receive: m.receive.map((r) => ({ ...r })) })),
      events: this.events.map((e) => ({ ...e })),
      timeline: this.decisions.map((e) => ({ ...e })),
      packetFields: PACKET_FIELDS,
      packets,
    };
  }

  async save(path: string): Promise<void> {
    await writeFileAtomic(path, JSON.stringify(this.toJSON()));
  }

  private at(nowMs: number): number {
    return ms(nowMs - this.o.originMs);
  }
}

// ---- reading ----

const codecSchema = z.object({
  payloadType: z.int().min(0).max(127),
  codec: z.string().min(1),
  clockRate: z.int().positive(),
  channels: z.int().positive(),
});

const mediaSchema = codecSchema.extend({
  atMs: z.number(),
  ptimeMs: z.number().positive(),
  telephoneEvent: z.object({ payloadType: z.int().min(0).max(127), clockRate: z.int().positive() }).nullable(),
  receive: z.array(codecSchema),
  direction: z.enum(['sendrecv', 'sendonly', 'recvonly', 'inactive']),
  remoteHold: z.boolean(),
});

const eventSchema = z.discriminatedUnion('type', [
  z.object({ atMs: z.number(), type: z.literal('answered') }),
  z.object({ atMs: z.number(), type: z.literal('engine-run'), assistantId: z.int() }),
  z.object({ atMs: z.number(), type: z.literal('reinvite'), media: z.int().min(0), codec: z.string() }),
  z.object({ atMs: z.number(), type: z.literal('dtmf'), digit: z.string().min(1), durationMs: z.number().min(0) }),
  z.object({ atMs: z.number(), type: z.literal('hangup'), cause: z.string() }),
]);

const rowSchema = z.tuple([
  z.number(),
  z.int().min(0).max(0xffff),
  z.int().min(0).max(0xffffffff),
  z.int().min(0).max(0xffffffff),
  z.union([z.literal(0), z.literal(1)]),
  z.int().min(0).max(127),
  z.base64(),
]);

const tapeSchema = z.object({
  kind: z.literal(TAPE_KIND),
  version: z.literal(TAPE_VERSION),
  call: z.object({ uuid: z.string(), direction: z.string() }),
  startedAtMs: z.number(),
  endedAtMs: z.number().nullable(),
  truncated: z.boolean(),
  media: z.array(mediaSchema).min(1),
  events: z.array(eventSchema),
  timeline: z.array(z.looseObject({ atMs: z.number(), type: z.string() })).optional(),
  packetFields: z.tuple([
    z.literal('atMs'),
    z.literal('sequenceNumber'),
    z.literal('timestamp'),
    z.literal('ssrc'),
    z.literal('marker'),
    z.literal('payloadType'),
    z.literal('payload'),
  ]),
  packets: z.array(rowSchema),
});

/** A recorded call tape (as opposed to a replay script, which has no `kind`). */
export function isCallTape(json: unknown): boolean {
  return typeof json === 'object' && json !== null && (json as { kind?: unknown }).kind === TAPE_KIND;
}

/** Checks a tape file's JSON and decodes its packets; throws with what is wrong. */
export function parseCallTape(json: unknown): CallTape {
  const version = (json as { version?: unknown } | null)?.version;
  if (isCallTape(json) && version !== TAPE_VERSION) throw new Error(`call tape version ${String(version)} is not supported (this build reads version ${TAPE_VERSION})`);
  const parsed = tapeSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`not a valid call tape: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`);
  }
  const t = parsed.data;
  const packets: TapePacket[] = t.packets.map(([atMs, sequenceNumber, timestamp, ssrc, marker, payloadType, payload]) => ({
    atMs,
    sequenceNumber,
    timestamp,
    ssrc,
    marker: marker === 1,
    payloadType,
    payload: new Uint8Array(Buffer.from(payload, 'base64')),
  }));
  // Written in arrival order; a hand-edited tape is put back in order (stable for equal times).
  packets.sort((a, b) => a.atMs - b.atMs);
  return {
    kind: t.kind,
    version: t.version,
    call: t.call,
    startedAtMs: t.startedAtMs,
    endedAtMs: t.endedAtMs,
    truncated: t.truncated,
    media: t.media,
    events: t.events,
    ...(t.timeline ? { timeline: t.timeline as TapeTimelineEvent[] } : {}),
    packets,
  };
}
