/**
 * The send half of an RtpSession: AudioFrames in, one RTP packet per ptime slot out, on
 * deadlines (DeadlineTicker over pacer.ts's PacingSchedule).
 *
 * While the call is up and we may send, every slot carries something: queued audio, a DTMF
 * event packet, or encoded silence. Continuous silence rather than going quiet because NAT
 * bindings and some carriers' RTP inactivity timers (often 30-60 s) expire on a quiet leg, and
 * because the far end's jitter buffer then never has to re-buffer at the start of each reply.
 * The cost is a few kbit/s per call. On hold (sendonly from them / inactive) nothing is sent.
 *
 * Frames are encoded at send time, not when written, so the encoder only ever sees what really
 * goes out: a flush never leaves ADPCM (G.722) or Opus prediction state ahead of the decoder.
 *
 * After an event-loop stall the ticker skips slots (it never bursts more than a few). RTP
 * timestamps keep following real time: they advance by the skipped slots, and the next audio
 * packet carries the marker bit, so the far end sees a talkspurt gap rather than a clock that
 * fell behind for good. Queued audio is kept (a stall never cuts speech: the far end already
 * heard a gap), but the stream must not stay behind real time: the skipped time is owed as
 * "lag" and paid back by dropping quiet frames (pauses) from the queue as they come up; lag
 * beyond `maxLagMs` (default 200 ms) is hopelessly late and dropped at once from the head of the
 * queue. An empty queue owes nothing, at the stall or after it. So a real-time writer (an echo, a bridge) returns to its
 * pre-stall delay at the next pause, and a writer that queues far ahead loses nothing to a stall
 * shorter than `maxLagMs`.
 *
 * μ-law pass-through (`writeMulaw`): 20 ms of G.711 μ-law share the queue with frames. On a PCMU
 * call they are the payloads as they are (no decode, no encode; only re-cut for a ptime other
 * than 20); on any other codec (after a re-INVITE) they are decoded and encoded like a frame.
 *
 * A talkspurt's first packet goes at once (`write` and `writeMulaw` alike). Audio arriving while
 * the line carries silence (marker pending, nothing queued, no DTMF under way, ptime ≤ 20, so one
 * write makes a whole packet) was made ahead of time by its source (a speech model, a TTS), and
 * waiting for the call's next slot would only add up to a ptime (10 ms on average) to the reply.
 * So its first packet goes out with the write, stamped with the next slot's timestamp and the
 * marker bit. The rest of the talkspurt then rides the slots one ahead ("ahead"), and the first
 * slot with nothing to say afterwards sends nothing (its packet already went), which puts the
 * stream back on the grid: audio written after that empty slot continues the talkspurt at the
 * next slot (no gap, no marker), silence and DTMF likewise. A real-time writer (an echo, a
 * bridge) writing one frame per ptime just after each slot thus starts early once, then is paced
 * by the media clock, not by when it writes: packets leave evenly spaced. Timestamps never
 * repeat or jump: the far end sees a talkspurt arriving up to one ptime early, which a jitter
 * buffer that resyncs on the marker plays that much sooner, and any other simply holds until its
 * time. The media clock the RTCP report gives (`rtpTimestampAt`) stays on the grid throughout.
 *
 * Per packet this allocates little: the payload the encoder returns (nothing at all for cached
 * comfort silence or μ-law passed through) and, in the session, the datagram. With `headerRoom`
 * (the session), a 20 ms packet the encoder can write in place (G.711, G.722) is encoded straight
 * into the datagram-to-be instead: one Buffer per packet, not two. `send` gets one packet
 * object, reused for every packet.
 */
import { FRAME_MS, type AudioFrame } from '../audio/frame.ts';
import { ulaw } from './codecs/g711.ts';
import { OutboundTranscoder } from './codecs/transcode.ts';
import { digitToEvent, planDtmf } from './dtmf.ts';
import { G711_FRAME_BYTES, type DtmfSendOptions, type OutboundAudio } from './media-types.ts';
import { createTicker, type TickerFactory } from './media-clock.ts';
import { PHASE_MS } from './media-phases.ts';
import type { SlotTicker, TickerStats } from './rtp-session-ticker.ts';
import type { NegotiatedMedia } from './sdp-negotiate.ts';
import type { Clock } from '../util/clock.ts';
import { AppError } from '../util/errors.ts';

export interface OutboundPacket {
  payloadType: number;
  marker: boolean;
  timestamp: number;
  /**
   * The payload, or with `room` > 0 a new Buffer holding the payload after `room` bytes left
   * free for the header (only with OutboundOptions.headerRoom): the sender writes the header
   * there and may send the Buffer itself; the path never touches it again.
   */
  payload: Uint8Array;
  /** 0, or OutboundOptions.headerRoom: where in `payload` the payload starts. */
  room: number;
  /**
   * When the packet should leave (clock.monotonic() time): its slot's deadline + SEND_LEAD_MS,
   * or now for a talkspurt's first packet sent with the write.
   */
  dueMs: number;
}

/**
 * How long after its slot's deadline a packet is due. The slot runs on the event-loop thread,
 * which also runs all call logic; with RTP I/O in its own thread (rtp-io/thread-io.ts) the packet
 * is handed over at the slot and leaves at deadline + lead, so a slot that runs late by less than
 * the lead (a young-generation GC pause of 2-4.5 ms, any task up to that long) no longer moves
 * it. One media-clock phase (10 ms at 20 ms ptime, media-phases.ts): the packets of one pass are
 * due when the next pass runs, so the I/O thread's wake-up that sends them also reads the sockets
 * for that pass, one wake-up per pass rather than two (half a phase, 5 ms, cost about 1.5 % more
 * CPU per pipeline call at 100 calls: docs/bench-history.md, 2026-11-28 04:43). A talkspurt's first packet
 * still goes at once (startTalkspurtNow), so a reply is heard no later; the packets after it keep
 * 10 ms of one-way delay, and the far end sees the second up to 10 ms behind the first's pace
 * (5 ms with half a phase), well inside any jitter buffer. In-thread I/O sends at once and
 * ignores it.
 */
export const SEND_LEAD_MS = PHASE_MS;

export interface OutboundOptions {
  clock: Clock;
  /**
   * Sends one packet, synchronously. The object is the path's own and is reused for the next
   * packet: read the fields now, keep (a copy of) what you need.
   */
  send: (packet: OutboundPacket) => void;
  /** write() refuses frames beyond this much queued audio (default 60 s). */
  maxQueuedMs?: number;
  /** writeStream() keeps this much queued ahead (default 100 ms). */
  streamAheadMs?: number;
  initialTimestamp: number;
  /** Stall time owed beyond which queued audio is dropped at once (default 200 ms; see above). */
  maxLagMs?: number;
  /** Where the slot timer comes from (default: the clock's shared media scheduler). */
  ticker?: TickerFactory;
  /** Groups this loop with the session's playout loop in the shared scheduler (same phase). */
  lane?: object;
  /**
   * Bytes the sender puts before the payload (the RTP header). When set, payloads the encoder can
   * write in place come with that much room before them (OutboundPacket.room), so the sender
   * need not copy them into a datagram of its own. Default 0: payloads only.
   */
  headerRoom?: number;
}

/** Peak level under which a queued frame counts as a pause that lag may be paid back from (about -50 dBFS). */
const QUIET_PEAK = 100;
/** Empty slots after which the lag owed is forgotten: nothing late can still be on its way. */
const LAG_FORGET_SLOTS = 10;

interface DtmfSlot {
  /** Absent for the quiet slots between digits. */
  payload?: Uint8Array;
  first: boolean;
  done?: () => void;
  fail?: (error: Error) => void;
}

/** 20 ms of μ-law from writeMulaw, queued as it came. */
interface RawMulaw {
  readonly raw: Uint8Array;
}

type Queued = AudioFrame | RawMulaw;

const isRaw = (q: Queued): q is RawMulaw => 'raw' in q;

/** μ-law codes whose level is under QUIET_PEAK (built once from the decode table). */
const QUIET_ULAW = (() => {
  const levels = ulaw.decode(Uint8Array.from({ length: 256 }, (_, i) => i));
  return Uint8Array.from(levels, (v) => (v < QUIET_PEAK && v > -QUIET_PEAK ? 1 : 0));
})();
/** μ-law silence, for the padding of a last partial packet. */
const ULAW_ZERO = 0xff;

export class OutboundPath implements OutboundAudio {
  private readonly clock: Clock;
  private readonly sendFn: (packet: OutboundPacket) => void;
  private readonly maxQueued: number;
  private readonly streamAhead: number;
  private media: NegotiatedMedia;
  private transcoder: OutboundTranscoder;
  private ticker: SlotTicker;
  private readonly queue: Queued[] = [];
  /** μ-law bytes cut off short of a packet (ptime other than 20). */
  private rawRest: Uint8Array | undefined;
  /** A talkspurt started early: packets go out one slot ahead of the grid (see the header). */
  private ahead = false;
  /** Payloads encoded but not yet sent (ptime < 20 makes two per frame). */
  private spill: Uint8Array[] = [];
  /**
   * Whether the payloads in `spill`, and the last one taken from it, are queued audio rather
   * than silence. One encode (of one queued item, or of silence) fills an empty spill, so they
   * all are or none is.
   */
  private spillAudio = false;
  private readonly dtmf: DtmfSlot[] = [];
  private dtmfTimestamp = 0;
  private timestamp: number;
  private lastSlotMs: number | undefined;
  private marker = true;
  private sending = false;
  private closed = false;
  private waiters: Array<() => void> = [];
  private readonly makeTicker: TickerFactory;
  private readonly lane: object | undefined;
  private readonly maxLag: number;
  private readonly headerRoom: number;
  /** The payload nextPayload() returned last sits after `headerRoom` bytes of room (see OutboundOptions.headerRoom). */
  private payloadInRoom = false;
  /** Frames the stream is behind real time after stalls (see the header). */
  private lag = 0;
  private emptySlots = 0;
  private readonly onSlot = (lateMs: number, skipped: number, dueMs: number): void => this.slot(lateMs, skipped, dueMs);
  /** The one packet object `send` gets (see OutboundOptions.send). */
  private readonly packet: OutboundPacket = { payloadType: 0, marker: false, timestamp: 0, payload: new Uint8Array(0), room: 0, dueMs: 0 };
  /** When packets emitted now are due: the slot's deadline + lead in a slot, now outside one. */
  private dueMs = 0;
  readonly counters = { framesDropped: 0, dtmfSent: 0, lateFramesDropped: 0 };

  constructor(media: NegotiatedMedia, options: OutboundOptions) {
    this.clock = options.clock;
    this.sendFn = options.send;
    this.maxQueued = Math.ceil((options.maxQueuedMs ?? 60_000) / FRAME_MS);
    this.streamAhead = Math.max(1, Math.ceil((options.streamAheadMs ?? 100) / FRAME_MS));
    this.timestamp = options.initialTimestamp >>> 0;
    this.media = media;
    this.headerRoom = options.headerRoom ?? 0;
    this.transcoder = new OutboundTranscoder(media.codec, media.ptimeMs, this.headerRoom);
    this.makeTicker = options.ticker ?? createTicker;
    this.lane = options.lane;
    this.maxLag = Math.max(0, Math.floor((options.maxLagMs ?? 200) / FRAME_MS));
    this.ticker = this.makeTicker(this.clock, media.ptimeMs, this.onSlot, 3, this.lane, true);
  }

  get playing(): boolean {
    return this.queue.length > 0 || (this.spillAudio && this.spill.length > 0);
  }

  get codec(): string {
    return this.media.codec.name;
  }

  get tickerStats(): TickerStats {
    return this.ticker.stats;
  }

  /** RTP timestamp for "now", extrapolated from the last slot sent (for the RTCP SR). */
  rtpTimestampAt(nowMs: number): number {
    const since = this.lastSlotMs === undefined ? 0 : nowMs - this.lastSlotMs;
    // Sending one slot ahead does not move the media clock the report describes.
    const base = this.ahead ? this.timestamp - this.transcoder.ticksPerPacket : this.timestamp;
    return (base + Math.round((since * this.media.codec.clockRate) / 1000)) >>> 0;
  }

  write(frame: AudioFrame): boolean {
    if (!this.enqueue(frame)) return false;
    this.startTalkspurtNow();
    return true;
  }

  writeMulaw(payload: Uint8Array): boolean {
    if (payload.length !== G711_FRAME_BYTES) throw new RangeError(`writeMulaw takes ${G711_FRAME_BYTES} bytes (20 ms), got ${payload.length}`);
    if (!this.enqueue({ raw: payload })) return false;
    this.startTalkspurtNow();
    return true;
  }

  private enqueue(item: Queued): boolean {
    if (this.closed || !this.sending || this.queue.length >= this.maxQueued) {
      this.counters.framesDropped++;
      return false;
    }
    this.queue.push(item);
    return true;
  }

  /**
   * Audio arriving while the line is silent: its first packet goes now, one slot early (see the
   * header). Only at ptime ≤ 20, where one queued
   * write makes a whole packet, and only between slots: not before the grid exists, nor while the
   * next slot is overdue (the event loop stalled; the slot, when it runs, skips ahead to real time).
   */
  private startTalkspurtNow(): void {
    const ptime = this.media.ptimeMs;
    if (this.ahead || !this.marker || this.lastSlotMs === undefined || ptime > FRAME_MS) return;
    if (this.queue.length !== 1 || this.dtmf.length > 0 || this.spill.length > 0 || this.rawRest) return;
    if (this.clock.monotonic() - this.lastSlotMs >= ptime) return;
    const payload = this.nextPayload();
    if (!payload) return;
    this.dueMs = this.clock.monotonic();
    this.emit(this.media.payloadType, this.marker, this.timestamp, payload, this.payloadInRoom);
    this.marker = false;
    this.ahead = true;
    this.timestamp = (this.timestamp + this.transcoder.ticksPerPacket) >>> 0;
    this.wake();
  }

  async writeStream(frames: AsyncIterable<AudioFrame>, signal?: AbortSignal): Promise<void> {
    const it = frames[Symbol.asyncIterator]();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<'aborted'>((resolve) => {
      onAbort = () => resolve('aborted');
      if (signal?.aborted) resolve('aborted');
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    let finished = false;
    try {
      for (;;) {
        await this.until(() => this.closed || !this.sending || this.queue.length < this.streamAhead, aborted);
        if (signal?.aborted || this.closed) break;
        const next = it.next();
        // If we stop waiting for it, a later rejection must not surface as unhandled.
        next.catch(() => undefined);
        const result = await Promise.race([next, aborted]);
        if (result === 'aborted') break;
        if (result.done) {
          finished = true;
          break;
        }
        this.write(result.value);
      }
      if (finished) await this.until(() => this.closed || !this.playing, aborted);
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      // Barge-in: what this stream had queued must not keep playing after the turn was aborted.
      if (signal?.aborted) this.flush();
      // Tell the producer we are done with it. Not awaited: a generator stuck in an await of its
      // own would hold us hostage, and its owner's signal (the same one) is what unsticks it.
      if (!finished) it.return?.()?.catch(() => undefined);
    }
  }

  flush(): number {
    // A packet already sent one slot early is gone, not dropped: only what waits counts.
    const spilled = this.spillAudio ? this.spill.length : 0;
    const dropped = this.queue.length + Math.round((spilled * this.media.ptimeMs) / FRAME_MS);
    this.queue.length = 0;
    this.spill.length = 0;
    this.rawRest = undefined;
    this.transcoder.reset();
    this.counters.framesDropped += dropped;
    this.marker = true;
    this.lag = 0;
    this.wake();
    return dropped;
  }

  sendDtmf(digits: string, options: DtmfSendOptions = {}): Promise<void> {
    const pt = this.media.dtmfPayloadType;
    if (pt === undefined) {
      return Promise.reject(new AppError('the far end did not negotiate telephone-event', 409, 'DTMF_NOT_NEGOTIATED'));
    }
    if (this.closed || !this.sending) return Promise.reject(new AppError('media is not sending', 409, 'MEDIA_NOT_SENDING'));
    const keys = [...digits];
    const bad = keys.find((d) => digitToEvent(d) === undefined);
    if (bad !== undefined || keys.length === 0) return Promise.reject(new RangeError(`not DTMF digits: ${JSON.stringify(digits)}`));
    const ptime = this.media.ptimeMs;
    const clockRate = this.media.dtmfClockRate ?? 8000;
    const gapSlots = Math.max(1, Math.ceil((options.gapMs ?? 60) / ptime));
    return new Promise((resolve, reject) => {
      const slots: DtmfSlot[] = [];
      keys.forEach((digit, i) => {
        const steps = planDtmf(digit, { durationMs: options.durationMs ?? 100, intervalMs: ptime, clockRate });
        steps.forEach((step, s) => slots.push({ payload: step.payload, first: s === 0 }));
        if (i < keys.length - 1) for (let g = 0; g < gapSlots; g++) slots.push({ first: false });
      });
      const last = slots[slots.length - 1]!;
      last.done = () => resolve();
      for (const slot of slots) slot.fail = reject;
      this.dtmf.push(...slots);
    });
  }

  /** Hold and unhold: stop the slot loop entirely, or resume it on real time. */
  setSending(sending: boolean): void {
    if (this.closed || sending === this.sending) return;
    this.sending = sending;
    if (!sending) {
      this.ticker.stop();
      this.flush();
      this.ahead = false;
      if (this.dtmf.length > 0) this.failDtmf(new AppError('media stopped sending (hold)', 409, 'MEDIA_NOT_SENDING'));
      return;
    }
    if (this.lastSlotMs !== undefined) {
      // Timestamps keep following real time across the pause (RFC 3550 §5.1), so the far end's
      // jitter buffer sees a talkspurt gap rather than a clock that stood still.
      const slots = Math.floor((this.clock.monotonic() - this.lastSlotMs) / this.media.ptimeMs);
      this.timestamp = (this.timestamp + Math.max(0, slots - 1) * this.transcoder.ticksPerPacket) >>> 0;
    }
    this.marker = true;
    this.ticker.start();
  }

  /** Re-INVITE: a new codec or ptime gets a fresh encoder; the timestamp line continues. */
  update(media: NegotiatedMedia): void {
    const old = this.media;
    this.media = media;
    if (old.codec !== media.codec || old.ptimeMs !== media.ptimeMs) {
      this.transcoder.close();
      this.transcoder = new OutboundTranscoder(media.codec, media.ptimeMs, this.headerRoom);
      this.spill.length = 0;
      this.rawRest = undefined;
      this.marker = true;
    }
    if (old.ptimeMs !== media.ptimeMs) {
      const wasRunning = this.ticker.isRunning;
      this.ticker.stop();
      this.ticker = this.makeTicker(this.clock, media.ptimeMs, this.onSlot, 3, this.lane, true);
      if (wasRunning) this.ticker.start();
    }
    if (media.dtmfPayloadType === undefined && this.dtmf.length > 0) this.failDtmf(new AppError('telephone-event no longer negotiated', 409, 'DTMF_NOT_NEGOTIATED'));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sending = false;
    this.ticker.stop();
    this.queue.length = 0;
    this.spill.length = 0;
    // Most calls end with nothing pending: no error (and no stack trace) built for nobody.
    if (this.dtmf.length > 0) this.failDtmf(new AppError('media closed', 409, 'MEDIA_CLOSED'));
    this.transcoder.close();
    this.wake();
  }

  private slot(_lateMs: number, skipped: number, dueMs: number): void {
    this.lastSlotMs = this.clock.monotonic();
    this.dueMs = dueMs + SEND_LEAD_MS;
    if (skipped > 0) this.skip(skipped);
    if (this.lag > 0) this.payLag();
    if (this.ahead && (this.dtmf.length > 0 || !this.playing)) {
      // The early talkspurt is over: this slot's packet already went, so audio, silence and DTMF
      // continue on the grid from the next one. The timestamp already stands there: audio written
      // before it carries on without a gap or marker; DTMF starts anew.
      this.ahead = false;
      if (this.dtmf.length > 0) this.marker = true;
      this.wake();
      return;
    }
    const dtmf = this.dtmf.shift();
    if (dtmf) this.sendDtmfSlot(dtmf);
    else {
      const payload = this.nextPayload();
      if (payload) {
        const audio = this.spillAudio;
        this.emit(this.media.payloadType, this.marker && audio, this.timestamp, payload, this.payloadInRoom);
        this.marker = !audio;
      }
    }
    this.timestamp = (this.timestamp + this.transcoder.ticksPerPacket) >>> 0;
    this.wake();
  }

  private emit(payloadType: number, marker: boolean, timestamp: number, payload: Uint8Array, inRoom: boolean): void {
    const packet = this.packet;
    packet.room = inRoom ? this.headerRoom : 0;
    packet.payloadType = payloadType;
    packet.marker = marker;
    packet.timestamp = timestamp;
    packet.payload = payload;
    packet.dueMs = this.dueMs;
    this.sendFn(packet);
  }

  /** Slots that went by unserved during a stall: the timestamp follows real time, the marker flags the gap. */
  private skip(slots: number): void {
    this.timestamp = (this.timestamp + slots * this.transcoder.ticksPerPacket) >>> 0;
    this.marker = true;
    this.emptySlots = 0;
    // Only a stream that had audio waiting is behind: a line idle through the stall owes
    // nothing, or the next reply written after it would lose its start to the debt.
    if (this.queue.length === 0) return;
    this.lag = Math.min(this.lag + Math.round((slots * this.media.ptimeMs) / FRAME_MS), this.maxQueued);
  }

  /** Pay back stall time: drop what is hopelessly late, then quiet frames at the head of the queue. */
  private payLag(): void {
    if (this.queue.length === 0) {
      if (++this.emptySlots >= LAG_FORGET_SLOTS) this.lag = 0;
      return;
    }
    this.emptySlots = 0;
    const excess = Math.min(this.lag - this.maxLag, this.queue.length);
    if (excess > 0) this.dropLate(excess);
    while (this.lag > 0 && this.queue.length > 0 && isQuietItem(this.queue[0]!)) this.dropLate(1);
  }

  private dropLate(frames: number): void {
    this.queue.splice(0, frames);
    this.lag -= frames;
    this.counters.framesDropped += frames;
    this.counters.lateFramesDropped += frames;
  }

  private sendDtmfSlot(slot: DtmfSlot): void {
    // The event is stamped with the slot it starts in; its packets all keep that timestamp.
    if (slot.first) this.dtmfTimestamp = this.timestamp;
    if (slot.payload) {
      this.emit(this.media.dtmfPayloadType!, slot.first, this.dtmfTimestamp, slot.payload, false);
    } else {
      const silence = this.nextPayload(true);
      if (silence) this.emit(this.media.payloadType, false, this.timestamp, silence, this.payloadInRoom);
    }
    if (slot.first) this.counters.dtmfSent++;
    this.marker = true;
    slot.done?.();
  }

  /**
   * One packet's worth: queued audio if any, else silence, through the one encoder.
   * `spillAudio` tells which it is; `payloadInRoom` whether it is a Buffer with room for the header
   * before it (see OutboundOptions.headerRoom).
   */
  private nextPayload(silenceOnly = false): Uint8Array | undefined {
    this.payloadInRoom = false;
    const maxFrames = Math.ceil(this.media.ptimeMs / FRAME_MS) + 1;
    for (let i = 0; this.spill.length === 0 && i < maxFrames; i++) {
      const item = silenceOnly ? undefined : this.queue.shift();
      if (item && isRaw(item)) {
        this.spillAudio = true;
        this.spillRaw(item.raw);
        continue;
      }
      const frame = item;
      this.spillAudio = frame !== undefined;
      if (frame && this.rawRest) this.spillRawRest();
      try {
        const payloads = frame ? this.transcoder.encode(frame) : this.transcoder.encodeSilence();
        if (this.transcoder.encodedInRoom && this.spill.length === 0) {
          // The usual packet: encoded into the datagram-to-be, and sent as it is, right now
          // (what pushing it to the empty spill and taking it out again would have done).
          this.payloadInRoom = true;
          return payloads[0];
        }
        this.spillPayloads(payloads);
      } catch {
        // A frame the encoder rejects (e.g. wrong length) is dropped rather than stopping the call.
        this.counters.framesDropped++;
      }
    }
    return this.spill.shift();
  }

  /** The transcoder's payloads into the spill, as payloads only (no header room before them). */
  private spillPayloads(payloads: readonly Buffer[]): void {
    const room = this.transcoder.encodedInRoom ? this.headerRoom : 0;
    for (let p = 0; p < payloads.length; p++) this.spill.push(room > 0 ? payloads[p]!.subarray(room) : payloads[p]!);
  }

  /** Queued μ-law → payloads: as they are on PCMU, else through the encoder like a frame. */
  private spillRaw(raw: Uint8Array): void {
    if (this.media.codec.name !== 'PCMU') {
      try {
        this.spillPayloads(this.transcoder.encode({ samples: ulaw.decode(raw), sampleRate: 8000 }));
      } catch {
        this.counters.framesDropped++;
      }
      return;
    }
    // Audio the encoder still holds goes first (a frame written before, at an odd ptime).
    const held = this.transcoder.flush();
    if (held) this.spill.push(held);
    const size = this.media.ptimeMs * 8;
    if (size === raw.length && !this.rawRest) {
      this.spill.push(raw);
      return;
    }
    let bytes = raw;
    if (this.rawRest) {
      bytes = Buffer.concat([this.rawRest, raw]);
      this.rawRest = undefined;
    }
    let at = 0;
    for (; at + size <= bytes.length; at += size) this.spill.push(bytes.subarray(at, at + size));
    if (at < bytes.length) this.rawRest = bytes.subarray(at);
  }

  /** μ-law short of a packet before a frame: padded with silence and sent, so order is kept. */
  private spillRawRest(): void {
    const rest = this.rawRest!;
    this.rawRest = undefined;
    const payload = Buffer.alloc(this.media.ptimeMs * 8, ULAW_ZERO);
    payload.set(rest);
    this.spill.push(payload);
  }

  private failDtmf(error: Error): void {
    const pending = this.dtmf.splice(0);
    const fail = new Set(pending.map((s) => s.fail));
    for (const f of fail) f?.(error);
  }

  private wake(): void {
    // Every slot wakes; nearly always nobody waits, and then nothing is allocated.
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves once `ready()` holds (re-checked on every slot, flush or close) or on abort. */
  private async until(ready: () => boolean, aborted: Promise<'aborted'>): Promise<void> {
    while (!ready()) {
      const woken = new Promise<void>((resolve) => this.waiters.push(resolve));
      if ((await Promise.race([woken, aborted])) === 'aborted') return;
    }
  }
}

function isQuietItem(item: Queued): boolean {
  if (!isRaw(item)) return isQuiet(item);
  const raw = item.raw;
  for (let i = 0; i < raw.length; i++) if (QUIET_ULAW[raw[i]!] === 0) return false;
  return true;
}

/** True when no sample of the frame reaches QUIET_PEAK: a pause, safe to drop to catch up. */
function isQuiet(frame: AudioFrame): boolean {
  const samples = frame.samples;
  for (let i = 0; i < samples.length; i++) {
    const v = samples[i]!;
    if (v >= QUIET_PEAK || v <= -QUIET_PEAK) return false;
  }
  return true;
}
