/**
 * RFC 4733 telephone-event: DTMF over RTP, both directions.
 *
 * An event is identified by its RTP timestamp (the instant the tone began): every packet of one
 * key press, updates and the three end packets alike, carries the same timestamp and a growing
 * duration. So the receiver keys on the timestamp, not the sequence number, to report each key
 * press exactly once, whatever gets retransmitted, reordered or lost.
 *
 * Pure: the receiver takes packets plus the time; the sender returns a schedule of payloads.
 */

const DIGITS = '0123456789*#ABCD';
/** Event 16 is hook flash; everything above is not DTMF. */
const FLASH = 16;
const MAX_DURATION = 0xffff;

export interface DtmfPayload {
  event: number;
  end: boolean;
  /** Power level in -dBm0, 0..63. */
  volume: number;
  /** In RTP timestamp units since the event (segment) began. */
  duration: number;
}

export function parseDtmfPayload(payload: Uint8Array): DtmfPayload | undefined {
  // Several events may be stacked in one packet (RFC 4733 §2.5.1.5); the first is the current one.
  if (payload.length < 4) return undefined;
  return {
    event: payload[0]!,
    end: (payload[1]! & 0x80) !== 0,
    volume: payload[1]! & 0x3f,
    duration: (payload[2]! << 8) | payload[3]!,
  };
}

export function serializeDtmfPayload(p: DtmfPayload): Uint8Array {
  const duration = Math.min(MAX_DURATION, Math.max(0, p.duration));
  return Uint8Array.of(p.event & 0xff, (p.end ? 0x80 : 0) | (p.volume & 0x3f), duration >> 8, duration & 0xff);
}

export function eventToDigit(event: number): string | undefined {
  if (event === FLASH) return 'flash';
  return event >= 0 && event < DIGITS.length ? DIGITS[event] : undefined;
}

export function digitToEvent(digit: string): number | undefined {
  if (digit.toLowerCase() === 'flash') return FLASH;
  const i = DIGITS.indexOf(digit.toUpperCase());
  return digit.length === 1 && i >= 0 ? i : undefined;
}

export interface DtmfStart {
  type: 'start';
  digit: string;
  event: number;
  timestamp: number;
}

export interface DtmfDigit {
  type: 'digit';
  digit: string;
  event: number;
  timestamp: number;
  durationTs: number;
  durationMs: number;
  volume: number;
  /** How we learned the event was over: its end bit, silence past the timeout, or a newer event. */
  endedBy: 'end-bit' | 'timeout' | 'superseded';
}

export type DtmfEvent = DtmfStart | DtmfDigit;

export interface DtmfPacket {
  marker: boolean;
  timestamp: number;
  payload: Uint8Array;
}

interface Active {
  timestamp: number;
  event: number;
  volume: number;
  /** Start timestamp and duration of the current segment (long events are split, §2.5.2.3). */
  segmentTs: number;
  segmentDuration: number;
  /** Durations of the completed segments. */
  carried: number;
  lastPacketMs: number;
}

export interface DtmfReceiverOptions {
  /** Clock rate negotiated for telephone-event (8000 unless the SDP says otherwise). */
  clockRate?: number;
  /** Silence after which an event whose end packets were all lost is reported anyway. */
  endTimeoutMs?: number;
}

export class DtmfReceiver {
  private readonly clockRate: number;
  private readonly endTimeoutMs: number;
  private active: Active | undefined;
  /** Timestamps of finished events, so late retransmissions of their end packets are ignored. */
  private readonly finished: number[] = [];

  constructor(options: DtmfReceiverOptions = {}) {
    this.clockRate = options.clockRate ?? 8000;
    this.endTimeoutMs = options.endTimeoutMs ?? 1000;
  }

  receive(packet: DtmfPacket, nowMs: number): DtmfEvent[] {
    const p = parseDtmfPayload(packet.payload);
    const digit = p ? eventToDigit(p.event) : undefined;
    if (!p || digit === undefined) return [];
    const ts = packet.timestamp >>> 0;
    if (this.finished.includes(ts)) return [];

    const out: DtmfEvent[] = [];
    const a = this.active;
    if (a && ts === a.segmentTs) {
      a.segmentDuration = Math.max(a.segmentDuration, p.duration);
      a.lastPacketMs = nowMs;
    } else if (a && this.continuesLongEvent(a, p, packet.marker, ts)) {
      a.carried += a.segmentDuration;
      a.segmentTs = ts;
      a.segmentDuration = p.duration;
      a.lastPacketMs = nowMs;
    } else {
      // A stale packet from before the active event must not restart anything.
      if (a && ((ts - a.timestamp) | 0) < 0) return [];
      if (a) out.push(this.finish('superseded'));
      this.active = {
        timestamp: ts,
        event: p.event,
        volume: p.volume,
        segmentTs: ts,
        segmentDuration: p.duration,
        carried: 0,
        lastPacketMs: nowMs,
      };
      out.push({ type: 'start', digit, event: p.event, timestamp: ts });
    }
    if (p.end) out.push(this.finish('end-bit'));
    return out;
  }

  /** Call now and then (e.g. per pulled frame): reports an event whose end never arrived. */
  poll(nowMs: number): DtmfDigit[] {
    if (this.active && nowMs - this.active.lastPacketMs >= this.endTimeoutMs) return [this.finish('timeout')];
    return [];
  }

  /** True while a key is held: the session may mute inbound audio to keep tones from the STT. */
  get inProgress(): boolean {
    return this.active !== undefined;
  }

  private continuesLongEvent(a: Active, p: DtmfPayload, marker: boolean, ts: number): boolean {
    // A new segment starts where the previous (maxed-out) one ended, with no marker.
    const delta = (ts - a.segmentTs) | 0;
    return !marker && p.event === a.event && a.segmentDuration >= MAX_DURATION - 2000 && delta > 0 && delta <= MAX_DURATION;
  }

  private finish(endedBy: DtmfDigit['endedBy']): DtmfDigit {
    const a = this.active!;
    this.active = undefined;
    this.finished.push(a.segmentTs, a.timestamp);
    if (this.finished.length > 16) this.finished.splice(0, this.finished.length - 16);
    const durationTs = a.carried + a.segmentDuration;
    return {
      type: 'digit',
      digit: eventToDigit(a.event)!,
      event: a.event,
      timestamp: a.timestamp,
      durationTs,
      durationMs: (durationTs * 1000) / this.clockRate,
      volume: a.volume,
      endedBy,
    };
  }
}

export interface DtmfSendOptions {
  durationMs?: number;
  /** Update spacing; the audio ptime keeps event packets on the pacer's frame grid. */
  intervalMs?: number;
  clockRate?: number;
  volume?: number;
  /** RFC 4733 §2.5.1.4: the final packet SHOULD be sent three times. */
  endRepeats?: number;
}

export interface DtmfSendStep {
  /** When to send, from the start of the event. */
  offsetMs: number;
  /** Set on the first packet of the event only. */
  marker: boolean;
  end: boolean;
  payload: Uint8Array;
}

/**
 * Schedule of packets for one key press. Every packet goes out with the RTP timestamp of the
 * event's start and its own next sequence number from the stream; audio is held back meanwhile.
 */
export function planDtmf(digit: string, options: DtmfSendOptions = {}): DtmfSendStep[] {
  const event = digitToEvent(digit);
  if (event === undefined) throw new RangeError(`not a DTMF digit: ${JSON.stringify(digit)}`);
  const clockRate = options.clockRate ?? 8000;
  const intervalMs = options.intervalMs ?? 20;
  const durationMs = Math.max(intervalMs, options.durationMs ?? 100);
  const volume = options.volume ?? 10;
  const endRepeats = Math.max(1, options.endRepeats ?? 3);
  const intervalTs = Math.round((clockRate * intervalMs) / 1000);
  const totalTs = Math.round((clockRate * durationMs) / 1000);
  if (totalTs > MAX_DURATION) throw new RangeError(`DTMF duration ${durationMs} ms exceeds one segment at ${clockRate} Hz`);

  const updates = Math.ceil(totalTs / intervalTs);
  const steps: DtmfSendStep[] = [];
  // Packet i describes the tone up to the end of its interval.
  for (let i = 0; i < updates - 1; i++) {
    steps.push({
      offsetMs: i * intervalMs,
      marker: i === 0,
      end: false,
      payload: serializeDtmfPayload({ event, end: false, volume, duration: (i + 1) * intervalTs }),
    });
  }
  for (let r = 0; r < endRepeats; r++) {
    const i = updates - 1 + r;
    steps.push({
      offsetMs: i * intervalMs,
      marker: i === 0,
      end: true,
      payload: serializeDtmfPayload({ event, end: true, volume, duration: totalTs }),
    });
  }
  return steps;
}
