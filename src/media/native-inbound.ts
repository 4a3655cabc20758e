/**
 * The receive path's two pure cores in C (native/rtp-udp/rtp_inbound.c, exposed by
 * inbound_napi.c in the optional `switchboard-rtp-udp` module), behind the public surface of
 * their TypeScript originals: NativeJitterBuffer for ./jitter-buffer.ts (JitterBuffer) and
 * NativeReceiverStats for ./rtp-receiver-stats.ts (RtpReceiverStats). Same algorithm, same
 * results number for number (test/unit/media/native-inbound.test.ts drives both side by side),
 * so a session can hold either (JitterBufferLike, ReceiverStatsLike). What the C buys is that
 * native/rtp-udp/fast_drain.c can feed a call's packets to the same objects (through `handle`)
 * without a JavaScript call per packet.
 *
 * Differences from the TypeScript, all at the edges:
 * - Packets are wire values: ssrc and timestamp integers in 0..2^32−1, sequence number in
 *   0..65535, payloadType 0..127 or undefined; anything else throws a RangeError (the
 *   TypeScript takes any number).
 * - The buffer copies payloads into slots of `maxPayload` bytes (default 1280, more than any
 *   payload a call carries). A longer payload is refused: push() counts it as pushed and late
 *   (in stats, as the C does for fast_drain.c's packets) and in `refused`, and returns 'late'.
 * - pull() hands out copies (each frame's bytes are its own: consumers keep them, e.g.
 *   ./mulaw-passthrough.ts) where the TypeScript hands back the pushed array.
 * - Options the C cannot take (jb_options_error, rx_options_error: e.g. historyPackets or
 *   maxPackets below 1, minDelayMs above maxDelayMs, a count that is not an integer) throw a
 *   RangeError, where the TypeScript would run with them.
 *
 * Optional like ./rtp-io/native-udp.ts: loadNativeInbound() is undefined where the module was not
 * built or lacks these functions. Whether a call uses it is the RTP I/O's choice (its sockets offer
 * the native drain or not: SWITCHBOARD_RTP_NATIVE), not this module's.
 */
import { createRequire } from 'node:module';
import type { JitterBuffer, JitterBufferOptions, JitterBufferStats, JitterOutput, JitterPacket, PushResult } from './jitter-buffer.ts';
import type { ReportBlock } from './rtcp.ts';
import type { ReceiverSnapshot, ReceiverStatsOptions, RtpPacketInfo, RtpReceiverStats, SeqVerdict } from './rtp-receiver-stats.ts';

/**
 * The module's inbound functions (inbound_napi.c, which documents the layouts). Handles are
 * opaque, freed when collected. Arguments are checked: a TypeError or RangeError otherwise.
 */
export interface NativeInbound {
  jbCreate(
    clockRate: number,
    frameMs: number,
    minDelayMs: number,
    maxDelayMs: number,
    initialDelayMs: number,
    historyPackets: number,
    maxConcealFrames: number,
    resyncSeqJump: number,
    resyncTimeJumpMs: number,
    maxPackets: number,
    maxPayload: number,
    outBytes: Uint8Array,
    outInfo: Float64Array,
  ): object;
  /** A JB_* code: 0 queued, 1 resync, 2 late, 3 duplicate, -1 refused (payload too long). */
  jbPush(handle: object, ssrc: number, seq: number, timestamp: number, payloadType: number, payload: Uint8Array, arrivalMs: number): number;
  /**
   * Into the outBytes and outInfo given to jbCreate (at least maxPayload bytes, at least 6
   * numbers): 0 empty; 1 frame: outBytes[0 .. info[0]) and info = [length, seq, timestamp, ssrc,
   * payloadType or -1]; 2 lost: info[2] timestamp, info[5] next's length or -1, next's bytes in
   * outBytes.
   */
  jbPull(handle: object, nowMs: number): number;
  /** 12 numbers, in JitterBufferStats's order. */
  jbStats(handle: object, out: Float64Array): void;
  jbReset(handle: object): void;
  /**
   * Frees the buffer now rather than when its handle is collected (its payload slots are a
   * mapping of their own); then every jb* call on it but jbClose throws. Throws while attached
   * to the native drain.
   */
  jbClose(handle: object): void;
  rxCreate(clockRate: number, minSequential: number, maxDropout: number, maxMisorder: number): object;
  /** 0 valid, 1 reordered, 2 probation, 3 bad-seq, 4 restart. */
  rxUpdate(handle: object, ssrc: number, seq: number, timestamp: number, arrivalMs: number): number;
  rxSenderReport(handle: object, ntpSeconds: number, ntpFraction: number, arrivalMs: number): void;
  /** hasSsrc (0/1), ssrc, extendedHighestSeq, expected, received, cumulativeLost, jitter, jitterMs. */
  rxSnapshot(handle: object, out: Float64Array): void;
  /** 1 and ssrc, fractionLost, cumulativeLost, extendedHighestSeq, jitter, lastSr, delaySinceLastSr; or 0. */
  rxReportBlock(handle: object, nowMs: number, out: Float64Array): number;

  // fast_drain.c's, in the same module (it documents them): the ring's plain audio taken in C.
  /** true once socket `id`'s plain audio packets go to `jitter` and `stats` (handles of the above) from C. */
  fastAttach(ring: Uint8Array, id: number, jitter: object, stats: object, words: Float64Array, address: Uint8Array, port: number, payloadType: number): boolean;
  fastDetach(ring: Uint8Array, id: number): void;
  /** 0: the ring is empty; 1: the next record is for the JavaScript drain. */
  fastDrain(ring: Uint8Array): number;
}

/** What a session needs of a jitter buffer: JitterBuffer's public surface, which both implement. */
export type JitterBufferLike = Pick<JitterBuffer, 'push' | 'pull' | 'stats' | 'reset'> & {
  /** Done with (the call ended, or a new buffer took over): what it holds outside the heap goes. */
  close?(): void;
};

/** What a session needs of receiver statistics: RtpReceiverStats's public surface, which both implement. */
export type ReceiverStatsLike = Pick<RtpReceiverStats, 'update' | 'onSenderReport' | 'snapshot' | 'reportBlock'>;

const FUNCTIONS: readonly (keyof NativeInbound)[] = [
  'jbCreate',
  'jbPush',
  'jbPull',
  'jbStats',
  'jbReset',
  'jbClose',
  'rxCreate',
  'rxUpdate',
  'rxSenderReport',
  'rxSnapshot',
  'rxReportBlock',
  'fastAttach',
  'fastDetach',
  'fastDrain',
];

/** null: tried, not there. */
let loaded: NativeInbound | null | undefined;

/**
 * The module's inbound functions (those above and fast_drain.c's), or undefined: not built (or
 * not Linux), or built without them. Loaded once per thread.
 */
export function loadNativeInbound(): NativeInbound | undefined {
  if (loaded === undefined) {
    try {
      const mod = createRequire(import.meta.url)('switchboard-rtp-udp') as Partial<NativeInbound>;
      loaded = FUNCTIONS.every((name) => typeof mod[name] === 'function') ? (mod as NativeInbound) : null;
    } catch {
      // The TypeScript classes do the same, in JavaScript.
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

function required(what: string): NativeInbound {
  const native = loadNativeInbound();
  if (!native) throw new Error(`${what}: the switchboard-rtp-udp module is not available (not built)`);
  return native;
}

const JB_REFUSED = -1;
const JB_FRAME = 1;
const JB_LOST = 2;
const PUSH_RESULTS: readonly PushResult[] = ['queued', 'resync', 'late', 'duplicate'];
const VERDICTS: readonly SeqVerdict[] = ['valid', 'reordered', 'probation', 'bad-seq', 'restart'];

/** Shared, as JitterBuffer's: nothing varies in an 'empty' output. */
const EMPTY: JitterOutput = Object.freeze({ kind: 'empty' });

export interface NativeJitterBufferOptions extends JitterBufferOptions {
  /** Longest payload buffered (slot size); longer ones are refused as late. 1280 by default. */
  maxPayload?: number;
}

/**
 * JitterBuffer in C. Per buffer: one C object (slots for 2 × maxPackets + 1 payloads, touched only
 * as they fill) and scratch arrays here, reused by every pull; per pull, the output object and a
 * copy of its bytes carved from Buffer's shared pool (as ./rtp-io/thread-io.ts does for
 * datagrams: no ArrayBuffer each).
 */
export class NativeJitterBuffer implements JitterBufferLike {
  /** The C buffer, for native/rtp-udp/fast_drain.c (jb_of). */
  readonly handle: object;
  private readonly native: NativeInbound;
  /** Where jbPull copies a payload (given to the C buffer once), before it gets a Buffer of its own. */
  private readonly bytes: Buffer;
  private readonly info = new Float64Array(6);
  private readonly numbers = new Float64Array(12);
  private refusedCount = 0;
  /** Its last statistics, once closed (the C buffer is gone). */
  private final: JitterBufferStats | undefined;

  constructor(options: NativeJitterBufferOptions) {
    this.native = required('NativeJitterBuffer');
    const maxPayload = options.maxPayload ?? 1280;
    this.bytes = Buffer.alloc(maxPayload);
    this.handle = this.native.jbCreate(
      options.clockRate,
      options.frameMs ?? 20,
      options.minDelayMs ?? 20,
      options.maxDelayMs ?? 200,
      options.initialDelayMs ?? 60,
      options.historyPackets ?? 150,
      options.maxConcealFrames ?? 5,
      options.resyncSeqJump ?? 50,
      options.resyncTimeJumpMs ?? 2000,
      options.maxPackets ?? 50,
      maxPayload,
      this.bytes,
      this.info,
    );
  }

  /** Packets refused for a payload longer than maxPayload (also counted in stats.late). */
  get refused(): number {
    return this.refusedCount;
  }

  get stats(): JitterBufferStats {
    if (this.final) return { ...this.final };
    const n = this.numbers;
    this.native.jbStats(this.handle, n);
    return {
      pushed: n[0]!,
      played: n[1]!,
      late: n[2]!,
      duplicates: n[3]!,
      lost: n[4]!,
      concealed: n[5]!,
      shrunk: n[6]!,
      overflow: n[7]!,
      resyncs: n[8]!,
      targetDelayMs: n[9]!,
      currentDelayMs: n[10]!,
      buffered: n[11]!,
    };
  }

  push(packet: JitterPacket, arrivalMs: number): PushResult {
    // Closed: a packet after the end is as good as late.
    if (this.final) return 'late';
    const code = this.native.jbPush(this.handle, packet.ssrc, packet.sequenceNumber, packet.timestamp, packet.payloadType ?? -1, packet.payload, arrivalMs);
    if (code === JB_REFUSED) {
      this.refusedCount++;
      return 'late';
    }
    return PUSH_RESULTS[code]!;
  }

  pull(nowMs: number): JitterOutput {
    if (this.final) return EMPTY;
    const info = this.info;
    const kind = this.native.jbPull(this.handle, nowMs);
    if (kind === JB_FRAME) {
      const payloadType = info[4]!;
      return {
        kind: 'frame',
        payload: this.copy(info[0]!),
        sequenceNumber: info[1]!,
        timestamp: info[2]!,
        ssrc: info[3]!,
        payloadType: payloadType < 0 ? undefined : payloadType,
      };
    }
    if (kind === JB_LOST) {
      const nextLength = info[5]!;
      return nextLength < 0 ? { kind: 'lost', timestamp: info[2]! } : { kind: 'lost', timestamp: info[2]!, next: this.copy(nextLength) };
    }
    return EMPTY;
  }

  /** Forget everything (e.g. the call was put on hold and the stream will restart). */
  reset(): void {
    if (!this.final) this.native.jbReset(this.handle);
  }

  /**
   * Frees the C buffer now (its statistics stay readable); pushes are then late and pulls
   * empty. Detach it from the native drain first. Again: nothing.
   */
  close(): void {
    if (this.final) return;
    const final = this.stats;
    this.native.jbClose(this.handle);
    this.final = final;
  }

  /** The first `length` bytes of the scratch, in a Buffer of their own (pool-carved). */
  private copy(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    this.bytes.copy(out, 0, 0, length);
    return out;
  }
}

/** RtpReceiverStats in C. Reuses one scratch array; a snapshot or report block is a new object, as in TypeScript. */
export class NativeReceiverStats implements ReceiverStatsLike {
  /** The C statistics, for native/rtp-udp/fast_drain.c (rx_of). */
  readonly handle: object;
  private readonly native: NativeInbound;
  private readonly numbers = new Float64Array(8);

  constructor(options: ReceiverStatsOptions) {
    this.native = required('NativeReceiverStats');
    this.handle = this.native.rxCreate(options.clockRate, options.minSequential ?? 2, options.maxDropout ?? 3000, options.maxMisorder ?? 100);
  }

  update(packet: RtpPacketInfo, arrivalMs: number): SeqVerdict {
    return VERDICTS[this.native.rxUpdate(this.handle, packet.ssrc, packet.sequenceNumber, packet.timestamp, arrivalMs)]!;
  }

  /** Record an SR from this source so the next RR can carry LSR/DLSR (RFC 3550 §6.4.1). */
  onSenderReport(ntpSeconds: number, ntpFraction: number, arrivalMs: number): void {
    this.native.rxSenderReport(this.handle, ntpSeconds, ntpFraction, arrivalMs);
  }

  snapshot(): ReceiverSnapshot {
    const n = this.numbers;
    this.native.rxSnapshot(this.handle, n);
    return {
      ssrc: n[0] === 1 ? n[1]! : undefined,
      extendedHighestSeq: n[2]!,
      expected: n[3]!,
      received: n[4]!,
      cumulativeLost: n[5]!,
      jitter: n[6]!,
      jitterMs: n[7]!,
    };
  }

  /** As RtpReceiverStats.reportBlock: consumes the interval counters; undefined until a source is confirmed. */
  reportBlock(nowMs: number): ReportBlock | undefined {
    const n = this.numbers;
    if (this.native.rxReportBlock(this.handle, nowMs, n) === 0) return undefined;
    return {
      ssrc: n[0]!,
      fractionLost: n[1]!,
      cumulativeLost: n[2]!,
      extendedHighestSeq: n[3]!,
      jitter: n[4]!,
      lastSr: n[5]!,
      delaySinceLastSr: n[6]!,
    };
  }
}
