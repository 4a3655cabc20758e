/**
 * Outbound pacing: one frame per `frameMs` on absolute deadlines (start + n × frameMs), never a
 * setInterval whose small per-tick lateness adds up to audible drift over a long call.
 *
 * `PacingSchedule` is the pure core (deadlines, lateness, RTP timestamps from frame counts);
 * `FramePacer` is the thin timer adapter around it.
 */
import type { Clock, Timer } from '../util/clock.ts';

export class PacingSchedule {
  constructor(
    readonly startMs: number,
    readonly frameMs = 20,
  ) {}

  /** Deadline of slot `index`; a product, not a running sum, so no rounding error accumulates. */
  dueAt(index: number): number {
    return this.startMs + index * this.frameMs;
  }

  /** Index of the last slot whose deadline is at or before `nowMs` (-1 before the start). */
  slotAt(nowMs: number): number {
    return Math.floor((nowMs - this.startMs) / this.frameMs);
  }

  /** How many slots from `nextIndex` on are already due at `nowMs`. */
  dueCount(nextIndex: number, nowMs: number): number {
    return Math.max(0, this.slotAt(nowMs) - nextIndex + 1);
  }

  /** Slots due but not yet served beyond the one being served now: how far behind we are. */
  lateFrames(nextIndex: number, nowMs: number): number {
    return Math.max(0, this.dueCount(nextIndex, nowMs) - 1);
  }

  /** Milliseconds until slot `index` is due (0 if already due). */
  delayUntil(index: number, nowMs: number): number {
    return Math.max(0, this.dueAt(index) - nowMs);
  }
}

/** RTP timestamp of slot `index`: from the sample count, so it never depends on wall time. */
export function rtpTimestampForSlot(baseTimestamp: number, index: number, samplesPerFrame: number): number {
  return (baseTimestamp + index * samplesPerFrame) % 0x1_0000_0000;
}

export interface PacedSend<T> {
  item: T;
  /** Slot index on the schedule. */
  index: number;
  rtpTimestamp: number;
  /** First frame after a pause (start, idle gap or flush): RTP marker for a talkspurt start. */
  marker: boolean;
  /** How late this send is against its deadline, for metrics. */
  lateMs: number;
}

export interface FramePacerOptions<T> {
  clock: Clock;
  send: (frame: PacedSend<T>) => void;
  frameMs?: number;
  /** RTP timestamp units per frame (160 for 20 ms at 8 kHz, 960 for Opus). */
  samplesPerFrame: number;
  baseTimestamp?: number;
  /**
   * When a timer fires this many slots late (event loop stall), skip the missed slots instead of
   * bursting them out: a burst would overflow the far end's jitter buffer anyway.
   */
  maxCatchUpFrames?: number;
}

export interface FramePacerStats {
  sent: number;
  flushed: number;
  skippedSlots: number;
  queued: number;
  maxLateMs: number;
}

/**
 * Sends queued frames on the schedule. Idle (queue empty) means no timer at all; the next
 * enqueue resumes on the grid, so RTP timestamps keep reflecting real time across pauses.
 */
export class FramePacer<T> {
  private readonly clock: Clock;
  private readonly sendFn: (frame: PacedSend<T>) => void;
  private readonly schedule: PacingSchedule;
  private readonly samplesPerFrame: number;
  private readonly baseTimestamp: number;
  private readonly maxCatchUpFrames: number;
  private readonly queue: T[] = [];
  private nextIndex = 0;
  private timer: Timer | undefined;
  private marker = true;
  private closed = false;
  private readonly counters = { sent: 0, flushed: 0, skippedSlots: 0, maxLateMs: 0 };

  constructor(options: FramePacerOptions<T>) {
    this.clock = options.clock;
    this.sendFn = options.send;
    this.schedule = new PacingSchedule(options.clock.monotonic(), options.frameMs ?? 20);
    this.samplesPerFrame = options.samplesPerFrame;
    this.baseTimestamp = options.baseTimestamp ?? 0;
    this.maxCatchUpFrames = options.maxCatchUpFrames ?? 3;
  }

  get stats(): FramePacerStats {
    return { ...this.counters, queued: this.queue.length };
  }

  /** RTP timestamp the next slot will carry, e.g. to stamp a DTMF event or an RTCP SR. */
  get nextRtpTimestamp(): number {
    return rtpTimestampForSlot(this.baseTimestamp, this.nextIndex, this.samplesPerFrame);
  }

  enqueue(item: T): void {
    if (this.closed) return;
    this.queue.push(item);
    this.arm();
  }

  /** Barge-in: drop everything queued at once. Returns how many frames were dropped. */
  flush(): number {
    const dropped = this.queue.length;
    this.queue.length = 0;
    this.counters.flushed += dropped;
    this.marker = true;
    this.disarm();
    return dropped;
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.disarm();
  }

  private arm(): void {
    if (this.timer || this.queue.length === 0) return;
    const now = this.clock.monotonic();
    // Coming back from idle: never serve slots that went by while there was nothing to send.
    // The slot in progress is still fair game; only whole slots that went by are skipped, and
    // the gap they leave in the timestamps is a talkspurt boundary (marker bit).
    const current = this.schedule.slotAt(now);
    if (this.nextIndex < current) {
      this.nextIndex = current;
      this.marker = true;
    }
    this.timer = this.clock.setTimeout(() => this.tick(), this.schedule.delayUntil(this.nextIndex, now));
  }

  private disarm(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private tick(): void {
    this.timer = undefined;
    if (this.closed) return;
    const now = this.clock.monotonic();
    let due = this.schedule.dueCount(this.nextIndex, now);
    if (due > this.maxCatchUpFrames) {
      const skip = due - 1;
      this.nextIndex += skip;
      this.counters.skippedSlots += skip;
      this.marker = true;
      due = 1;
    }
    for (let i = 0; i < due && this.queue.length > 0; i++) {
      const item = this.queue.shift()!;
      const lateMs = now - this.schedule.dueAt(this.nextIndex);
      this.counters.maxLateMs = Math.max(this.counters.maxLateMs, lateMs);
      const frame: PacedSend<T> = {
        item,
        index: this.nextIndex,
        rtpTimestamp: rtpTimestampForSlot(this.baseTimestamp, this.nextIndex, this.samplesPerFrame),
        marker: this.marker,
        lateMs,
      };
      this.marker = false;
      this.nextIndex++;
      this.counters.sent++;
      this.sendFn(frame);
      if (this.closed) return;
    }
    if (this.queue.length === 0) {
      // Idle: the slot we stopped at is not consumed; arm() skips past it on the next enqueue.
      return;
    }
    this.arm();
  }
}
