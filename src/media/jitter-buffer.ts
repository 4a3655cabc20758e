/**
 * Adaptive jitter buffer for one incoming audio stream.
 *
 * Pure: `push` takes a packet and its arrival time, `pull` is called once per frame interval on
 * the playout clock and returns one frame, a loss (for the decoder to conceal) or nothing.
 *
 * Model. Each packet's "relative delay" is arrival − timestamp (in ms). The smallest over the
 * recent history is the best-case path; a frame's playout delay is how long after that best case
 * it is played. The target delay covers the 95th percentile of the recent spread, clamped to
 * [minDelayMs, maxDelayMs]; it rises at once when a packet arrives later than that (late packets
 * are the evidence) and falls slowly. Playout is slot-driven (one output per pull), so delay grows
 * by holding the cursor when the next packet has not come (the decoder conceals) and shrinks by
 * dropping one frame when the playout delay exceeds the target by a frame. At the start and after
 * silence suppression it waits until the first packet is `target` old, where a pause costs nothing.
 *
 * One packet is assumed to carry one frame (ptime = frameMs); the session splits other ptimes.
 */
import { kthSmallest } from '../util/kth-smallest.ts';
import { seqDelta, timestampDelta } from './rtp-packet.ts';

export interface JitterBufferOptions {
  /** RTP clock rate of the payload (8000 for PCMU/PCMA/G.722, 48000 for Opus). */
  clockRate: number;
  frameMs?: number;
  minDelayMs?: number;
  maxDelayMs?: number;
  /** Delay before the first jitter measurements exist. */
  initialDelayMs?: number;
  /** Relative delays remembered for the estimate (150 ≈ 3 s of 20 ms packets). */
  historyPackets?: number;
  /** Consecutive concealed frames before going quiet ('empty'): past this, PLC only buzzes. */
  maxConcealFrames?: number;
  /** Sequence jump treated as a new stream rather than loss. */
  resyncSeqJump?: number;
  /** Timing jump (arrival vs timestamp) treated as a new stream. */
  resyncTimeJumpMs?: number;
  /** Hard bound on buffered packets; the oldest go first. */
  maxPackets?: number;
}

export interface JitterPacket {
  ssrc: number;
  sequenceNumber: number;
  timestamp: number;
  payload: Uint8Array;
  /** Carried through to the output (a stream may mix payload types on one clock). */
  payloadType?: number;
}

export type PushResult = 'queued' | 'resync' | 'late' | 'duplicate';

export interface JitterFrame {
  kind: 'frame';
  payload: Uint8Array;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  payloadType?: number;
}

export type JitterOutput =
  | JitterFrame
  /** A frame belongs here but is missing: conceal. `next` is the following payload when already
   * buffered, for codecs with in-band FEC (Opus LBRR) to recover this frame from. */
  | { kind: 'lost'; timestamp: number; next?: Uint8Array }
  /** Nothing to play (buffering, silence suppression, long outage): play silence or comfort noise. */
  | { kind: 'empty' };

export interface JitterBufferStats {
  pushed: number;
  played: number;
  late: number;
  duplicates: number;
  /** Frames declared lost (a sequence number skipped). */
  lost: number;
  /** 'lost' outputs, including holds while waiting for a late packet. */
  concealed: number;
  /** Frames dropped on purpose to bring the delay down. */
  shrunk: number;
  overflow: number;
  resyncs: number;
  targetDelayMs: number;
  /** Playout delay of the last frame played, relative to the best-case path. */
  currentDelayMs: number;
  buffered: number;
}

/**
 * A buffered packet, stored in the shape of the frame it plays as: pull() hands out the entry
 * itself (by then out of the buffer, never touched again) instead of building a copy, so a
 * packet costs one object on its way through rather than two. This runs 50 times a second per call.
 */
interface Entry extends JitterFrame {
  readonly extSeq: number;
  readonly extTs: number;
}

/**
 * The buffered entries in extSeq order. A sorted array rather than a Map: packets mostly arrive
 * in order (an append) and play from the front (a shift), while a Map's hash table re-allocates
 * itself every few inserts as deleted slots fill it. Holds at most maxPackets + 1 entries.
 */
class EntryList {
  private readonly items: Entry[] = [];

  get size(): number {
    return this.items.length;
  }

  /** The entry with the lowest extSeq. */
  first(): Entry | undefined {
    return this.items[0];
  }

  get(extSeq: number): Entry | undefined {
    const i = this.indexOf(extSeq);
    return i < 0 ? undefined : this.items[i];
  }

  has(extSeq: number): boolean {
    return this.indexOf(extSeq) >= 0;
  }

  /** Adds an entry whose extSeq is not in the list yet. */
  insert(entry: Entry): void {
    const items = this.items;
    let i = items.length;
    items.push(entry);
    for (; i > 0 && items[i - 1]!.extSeq > entry.extSeq; i--) items[i] = items[i - 1]!;
    items[i] = entry;
  }

  delete(extSeq: number): void {
    const i = this.indexOf(extSeq);
    if (i < 0) return;
    const items = this.items;
    if (i === 0) {
      items.shift();
      return;
    }
    // Close the gap and pop the duplicate at the end (splice would allocate its result array).
    for (let j = i; j < items.length - 1; j++) items[j] = items[j + 1]!;
    items.pop();
  }

  /** Entries from `extSeq` on, in order (a copy). */
  from(extSeq: number): Entry[] {
    return this.items.filter((e) => e.extSeq >= extSeq);
  }

  clear(): void {
    this.items.length = 0;
  }

  /** Binary search; -1 when absent. */
  private indexOf(extSeq: number): number {
    const items = this.items;
    let lo = 0;
    let hi = items.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = items[mid]!.extSeq;
      if (at === extSeq) return mid;
      if (at < extSeq) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/** Shared: nothing varies in an 'empty' output, so one object serves every pull. */
const EMPTY: JitterOutput = Object.freeze({ kind: 'empty' });

const RECOMPUTE_EVERY = 10;

export class JitterBuffer {
  private readonly msPerTick: number;
  private readonly tsPerFrame: number;
  private readonly frameMs: number;
  private readonly minDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly historyPackets: number;
  private readonly maxConcealFrames: number;
  private readonly resyncSeqJump: number;
  private readonly resyncTimeJumpMs: number;
  private readonly maxPackets: number;

  private ssrc: number | undefined;
  private highestSeq = 0;
  private refTs = 0;
  private readonly entries = new EntryList();
  /** The previous stream's tail, still to play after a resync (already out of `entries`). */
  private drain: Entry[] = [];
  private started = false;
  private cursorSeq = 0;
  private cursorTs = 0;
  private concealRun = 0;
  private pendingBadSeq: number | undefined;

  /**
   * Ring of the last `historyPackets` relative delays; slots not yet written hold +Infinity, so
   * they rank after every real value. Typed arrays, ranked in place (kthSmallest): the estimate
   * allocates nothing, where sorting a copy of a number[] with a comparator boxed every double
   * and was a fifth of all allocation on the media thread.
   */
  private readonly history: Float64Array;
  /** Scratch for recompute(): a copy of `history` to rank. */
  private readonly scratch: Float64Array;
  private historyCount = 0;
  private historyPos = 0;
  private sinceRecompute = 0;
  private minRel: number | undefined;
  private targetMs: number;
  private lastDelayMs = 0;
  private readonly counters = { pushed: 0, played: 0, late: 0, duplicates: 0, lost: 0, concealed: 0, shrunk: 0, overflow: 0, resyncs: 0 };

  constructor(options: JitterBufferOptions) {
    this.frameMs = options.frameMs ?? 20;
    this.msPerTick = 1000 / options.clockRate;
    this.tsPerFrame = Math.round((options.clockRate * this.frameMs) / 1000);
    this.minDelayMs = options.minDelayMs ?? 20;
    this.maxDelayMs = options.maxDelayMs ?? 200;
    this.historyPackets = options.historyPackets ?? 150;
    this.history = new Float64Array(this.historyPackets).fill(Infinity);
    this.scratch = new Float64Array(this.historyPackets);
    this.maxConcealFrames = options.maxConcealFrames ?? 5;
    this.resyncSeqJump = options.resyncSeqJump ?? 50;
    this.resyncTimeJumpMs = options.resyncTimeJumpMs ?? 2000;
    this.maxPackets = options.maxPackets ?? 50;
    this.targetMs = this.clamp(options.initialDelayMs ?? 60);
  }

  get stats(): JitterBufferStats {
    return { ...this.counters, targetDelayMs: this.targetMs, currentDelayMs: this.lastDelayMs, buffered: this.entries.size };
  }

  push(packet: JitterPacket, arrivalMs: number): PushResult {
    this.counters.pushed++;
    let resynced = false;
    if (this.ssrc === undefined || packet.ssrc !== this.ssrc) {
      resynced = this.ssrc !== undefined;
      this.restart(packet);
    }
    let extSeq = this.highestSeq + seqDelta(mod16(this.highestSeq), packet.sequenceNumber);
    let extTs = this.refTs + timestampDelta(mod32(this.refTs), packet.timestamp);
    let rel = arrivalMs - extTs * this.msPerTick;

    const timingJump = this.minRel !== undefined && Math.abs(rel - this.minRel) > this.resyncTimeJumpMs;
    const forwardJump = extSeq - this.highestSeq > this.resyncSeqJump;
    const backwardJump = this.highestSeq - extSeq > this.resyncSeqJump;
    // A far-behind packet is believed to start a new stream only if its successor follows it
    // (the A.1 bad_seq rule); alone it is a stray and is dropped as late.
    const confirmedBackward = backwardJump && this.pendingBadSeq === packet.sequenceNumber;
    if (!resynced && (timingJump || forwardJump || confirmedBackward)) {
      this.restart(packet);
      resynced = true;
      extSeq = this.highestSeq;
      extTs = this.refTs;
      rel = arrivalMs - extTs * this.msPerTick;
    } else if (backwardJump) {
      this.pendingBadSeq = (packet.sequenceNumber + 1) & 0xffff;
      this.counters.late++;
      return 'late';
    }
    if (resynced) this.counters.resyncs++;

    if (this.started && extSeq < this.cursorSeq) {
      this.observe(rel);
      this.counters.late++;
      return 'late';
    }
    if (this.entries.has(extSeq)) {
      this.counters.duplicates++;
      return 'duplicate';
    }
    this.observe(rel);
    const { payload, sequenceNumber, timestamp, ssrc, payloadType } = packet;
    this.entries.insert({ kind: 'frame', payload, sequenceNumber, timestamp, ssrc, payloadType, extSeq, extTs });
    if (extSeq > this.highestSeq) {
      this.highestSeq = extSeq;
      this.refTs = extTs;
    }
    while (this.entries.size > this.maxPackets) this.dropOldest();
    return resynced ? 'resync' : 'queued';
  }

  pull(nowMs: number): JitterOutput {
    const tail = this.drain.shift();
    if (tail) {
      this.counters.played++;
      return tail;
    }
    if (!this.started) {
      const first = this.earliest();
      if (!first || this.delayOf(first.extTs, nowMs) < this.targetMs) return EMPTY;
      this.started = true;
      this.cursorSeq = first.extSeq;
      this.cursorTs = first.extTs;
    }
    let entry = this.entries.get(this.cursorSeq);
    if (!entry) {
      const later = this.earliest();
      // Nothing behind the gap: the stream is late or paused. Hold the cursor (never skip ahead
      // of packets that have not arrived, or the whole talkspurt would then count as late).
      if (!later) return this.hold();
      if (this.concealRun >= this.maxConcealFrames) {
        // Already quiet (the talkspurt's last packets were lost): skip the gap silently. The
        // cursor timestamp stays put so the talkspurt check below still makes it wait.
        this.cursorSeq = later.extSeq;
        entry = later;
      } else if (this.delayOf(this.cursorTs, nowMs) < this.targetMs) {
        return this.hold();
      } else {
        return this.declareLost(this.entries.get(this.cursorSeq + 1));
      }
    }

    if (entry.extTs - this.cursorTs > this.tsPerFrame / 2) {
      // Timestamp leapt while sequence numbers did not: silence suppression ended. Start the
      // new talkspurt once it is `target` old, as at the start of the call.
      if (this.delayOf(entry.extTs, nowMs) < this.targetMs) {
        this.concealRun = this.maxConcealFrames;
        return EMPTY;
      }
      this.cursorTs = entry.extTs;
    }

    const next = this.entries.get(this.cursorSeq + 1);
    if (next && this.delayOf(next.extTs, nowMs) >= this.targetMs + this.frameMs / 4) {
      // Playing late by more than a frame: drop one to catch up. One per pull, so the cut is small.
      this.entries.delete(entry.extSeq);
      this.counters.shrunk++;
      entry = next;
    }

    this.entries.delete(entry.extSeq);
    this.cursorSeq = entry.extSeq + 1;
    this.cursorTs = entry.extTs + this.tsPerFrame;
    this.concealRun = 0;
    this.lastDelayMs = this.delayOf(entry.extTs, nowMs);
    this.counters.played++;
    return entry;
  }

  /** Forget everything (e.g. the call was put on hold and the stream will restart). */
  reset(): void {
    this.ssrc = undefined;
    this.entries.clear();
    this.drain = [];
    this.started = false;
    this.history.fill(Infinity);
    this.historyCount = 0;
    this.historyPos = 0;
    this.minRel = undefined;
    this.concealRun = 0;
    this.pendingBadSeq = undefined;
  }

  private restart(packet: JitterPacket): void {
    // The old stream's buffered tail still plays out (ahead of the new one, which buffers anyway).
    const tail = this.started ? this.entries.from(this.cursorSeq) : [];
    // The target delay survives: the network path has not changed just because the stream did.
    const target = this.targetMs;
    const draining = this.drain;
    this.reset();
    this.drain = [...draining, ...tail].slice(-this.maxPackets);
    this.targetMs = target;
    this.ssrc = packet.ssrc;
    this.highestSeq = packet.sequenceNumber;
    this.refTs = packet.timestamp;
  }

  private declareLost(next: Entry | undefined): JitterOutput {
    const timestamp = mod32(this.cursorTs);
    this.cursorSeq++;
    this.cursorTs += this.tsPerFrame;
    this.counters.lost++;
    this.counters.concealed++;
    this.concealRun++;
    return next ? { kind: 'lost', timestamp, next: next.payload } : { kind: 'lost', timestamp };
  }

  private hold(): JitterOutput {
    this.concealRun++;
    if (this.concealRun > this.maxConcealFrames) return EMPTY;
    this.counters.concealed++;
    return { kind: 'lost', timestamp: mod32(this.cursorTs) };
  }

  private delayOf(extTs: number, nowMs: number): number {
    return nowMs - (extTs * this.msPerTick + (this.minRel ?? 0));
  }

  private earliest(): Entry | undefined {
    return this.entries.first();
  }

  private dropOldest(): void {
    const oldest = this.earliest();
    if (!oldest) return;
    this.entries.delete(oldest.extSeq);
    this.counters.overflow++;
    if (this.started && oldest.extSeq >= this.cursorSeq) {
      this.cursorSeq = oldest.extSeq + 1;
      this.cursorTs = oldest.extTs + this.tsPerFrame;
    }
  }

  private observe(rel: number): void {
    this.history[this.historyPos] = rel;
    if (this.historyCount < this.historyPackets) this.historyCount++;
    this.historyPos = (this.historyPos + 1) % this.historyPackets;
    if (this.minRel === undefined || rel < this.minRel) this.minRel = rel;
    // Rise at once: this packet needed more delay than we give.
    const needed = this.clamp(rel - this.minRel + this.frameMs / 2);
    if (needed > this.targetMs) this.targetMs = needed;
    if (++this.sinceRecompute >= RECOMPUTE_EVERY) {
      this.sinceRecompute = 0;
      this.recompute();
    }
  }

  /** Ranking ≤150 numbers every 10 packets keeps this cheap for hundreds of calls. */
  private recompute(): void {
    if (this.historyCount < 2) return;
    // The unwritten slots (+Infinity) rank last, so among the first historyCount ranks are the
    // history's values, exactly as if only the values written were ranked.
    const scratch = this.scratch;
    scratch.set(this.history);
    const min = kthSmallest(scratch, 0);
    const p95 = kthSmallest(scratch, Math.floor(0.95 * (this.historyCount - 1)));
    this.minRel = min;
    const wanted = this.clamp(p95 - min + this.frameMs / 2);
    // Fall slowly (a quarter frame per recompute, ~25 ms/s), so a burst of jitter every few
    // seconds does not make the delay saw up and down.
    this.targetMs = wanted >= this.targetMs ? wanted : Math.max(wanted, this.targetMs - this.frameMs / 4);
  }

  private clamp(ms: number): number {
    return Math.min(this.maxDelayMs, Math.max(this.minDelayMs, ms));
  }
}

function mod16(n: number): number {
  return ((n % 0x10000) + 0x10000) % 0x10000;
}

function mod32(n: number): number {
  return ((n % 0x1_0000_0000) + 0x1_0000_0000) % 0x1_0000_0000;
}
