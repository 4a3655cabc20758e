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
 */
import { FRAME_MS, silenceFrame, type AudioFrame } from '../audio/frame.ts';
import { OutboundTranscoder } from './codecs/transcode.ts';
import { digitToEvent, planDtmf } from './dtmf.ts';
import type { DtmfSendOptions, OutboundAudio } from './media-types.ts';
import { DeadlineTicker } from './rtp-session-ticker.ts';
import type { NegotiatedMedia } from './sdp-negotiate.ts';
import type { Clock } from '../util/clock.ts';
import { AppError } from '../util/errors.ts';

export interface OutboundPacket {
  payloadType: number;
  marker: boolean;
  timestamp: number;
  payload: Uint8Array;
}

export interface OutboundOptions {
  clock: Clock;
  send: (packet: OutboundPacket) => void;
  /** write() refuses frames beyond this much queued audio (default 60 s). */
  maxQueuedMs?: number;
  /** writeStream() keeps this much queued ahead (default 100 ms). */
  streamAheadMs?: number;
  initialTimestamp: number;
}

interface DtmfSlot {
  /** Absent for the quiet slots between digits. */
  payload?: Uint8Array;
  first: boolean;
  done?: () => void;
  fail?: (error: Error) => void;
}

interface Encoded {
  payload: Uint8Array;
  audio: boolean;
}

export class OutboundPath implements OutboundAudio {
  private readonly clock: Clock;
  private readonly sendFn: (packet: OutboundPacket) => void;
  private readonly maxQueued: number;
  private readonly streamAhead: number;
  private media: NegotiatedMedia;
  private transcoder: OutboundTranscoder;
  private ticker: DeadlineTicker;
  private readonly queue: AudioFrame[] = [];
  /** Payloads encoded but not yet sent (ptime < 20 makes two per frame). */
  private spill: Encoded[] = [];
  private readonly dtmf: DtmfSlot[] = [];
  private dtmfTimestamp = 0;
  private timestamp: number;
  private lastSlotMs: number | undefined;
  private marker = true;
  private sending = false;
  private closed = false;
  private waiters: Array<() => void> = [];
  readonly counters = { framesDropped: 0, dtmfSent: 0 };

  constructor(media: NegotiatedMedia, options: OutboundOptions) {
    this.clock = options.clock;
    this.sendFn = options.send;
    this.maxQueued = Math.ceil((options.maxQueuedMs ?? 60_000) / FRAME_MS);
    this.streamAhead = Math.max(1, Math.ceil((options.streamAheadMs ?? 100) / FRAME_MS));
    this.timestamp = options.initialTimestamp >>> 0;
    this.media = media;
    this.transcoder = new OutboundTranscoder(media.codec, media.ptimeMs);
    this.ticker = new DeadlineTicker(this.clock, media.ptimeMs, () => this.slot());
  }

  get playing(): boolean {
    return this.queue.length > 0 || this.spill.some((e) => e.audio);
  }

  get tickerStats(): { skippedSlots: number; maxLateMs: number } {
    return this.ticker.stats;
  }

  /** RTP timestamp for "now", extrapolated from the last slot sent (for the RTCP SR). */
  rtpTimestampAt(nowMs: number): number {
    const since = this.lastSlotMs === undefined ? 0 : nowMs - this.lastSlotMs;
    return (this.timestamp + Math.round((since * this.media.codec.clockRate) / 1000)) >>> 0;
  }

  write(frame: AudioFrame): boolean {
    if (this.closed || !this.sending || this.queue.length >= this.maxQueued) {
      this.counters.framesDropped++;
      return false;
    }
    this.queue.push(frame);
    return true;
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
    const spilled = this.spill.filter((e) => e.audio).length;
    const dropped = this.queue.length + Math.round((spilled * this.media.ptimeMs) / FRAME_MS);
    this.queue.length = 0;
    this.spill = [];
    this.transcoder.reset();
    this.counters.framesDropped += dropped;
    this.marker = true;
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
      this.failDtmf(new AppError('media stopped sending (hold)', 409, 'MEDIA_NOT_SENDING'));
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
      this.transcoder = new OutboundTranscoder(media.codec, media.ptimeMs);
      this.spill = [];
      this.marker = true;
    }
    if (old.ptimeMs !== media.ptimeMs) {
      const wasRunning = this.ticker.isRunning;
      this.ticker.stop();
      this.ticker = new DeadlineTicker(this.clock, media.ptimeMs, () => this.slot());
      if (wasRunning) this.ticker.start();
    }
    if (media.dtmfPayloadType === undefined) this.failDtmf(new AppError('telephone-event no longer negotiated', 409, 'DTMF_NOT_NEGOTIATED'));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sending = false;
    this.ticker.stop();
    this.queue.length = 0;
    this.spill = [];
    this.failDtmf(new AppError('media closed', 409, 'MEDIA_CLOSED'));
    this.transcoder.close();
    this.wake();
  }

  private slot(): void {
    this.lastSlotMs = this.clock.monotonic();
    const dtmf = this.dtmf.shift();
    if (dtmf) this.sendDtmfSlot(dtmf);
    else {
      const encoded = this.nextPayload();
      if (encoded) {
        this.sendFn({ payloadType: this.media.payloadType, marker: this.marker && encoded.audio, timestamp: this.timestamp, payload: encoded.payload });
        if (encoded.audio) this.marker = false;
        else this.marker = true;
      }
    }
    this.timestamp = (this.timestamp + this.transcoder.ticksPerPacket) >>> 0;
    this.wake();
  }

  private sendDtmfSlot(slot: DtmfSlot): void {
    // The event is stamped with the slot it starts in; its packets all keep that timestamp.
    if (slot.first) this.dtmfTimestamp = this.timestamp;
    if (slot.payload) {
      this.sendFn({ payloadType: this.media.dtmfPayloadType!, marker: slot.first, timestamp: this.dtmfTimestamp, payload: slot.payload });
    } else {
      const silence = this.nextPayload(true);
      if (silence) this.sendFn({ payloadType: this.media.payloadType, marker: false, timestamp: this.timestamp, payload: silence.payload });
    }
    if (slot.first) this.counters.dtmfSent++;
    this.marker = true;
    slot.done?.();
  }

  /** One packet's worth: queued audio if any, else silence, through the one encoder. */
  private nextPayload(silenceOnly = false): Encoded | undefined {
    const maxFrames = Math.ceil(this.media.ptimeMs / FRAME_MS) + 1;
    for (let i = 0; this.spill.length === 0 && i < maxFrames; i++) {
      const frame = silenceOnly ? undefined : this.queue.shift();
      const audio = frame !== undefined;
      try {
        for (const payload of this.transcoder.encode(frame ?? silenceFrame())) this.spill.push({ payload, audio });
      } catch {
        // A frame the encoder rejects (e.g. wrong length) is dropped rather than stopping the call.
        this.counters.framesDropped++;
      }
    }
    return this.spill.shift();
  }

  private failDtmf(error: Error): void {
    const pending = this.dtmf.splice(0);
    const fail = new Set(pending.map((s) => s.fail));
    for (const f of fail) f?.(error);
  }

  private wake(): void {
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
