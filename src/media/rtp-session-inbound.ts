/**
 * The receive half of an RtpSession: source filter → demux by payload type → (DTMF receiver |
 * receiver stats + jitter buffer), and the playout side that turns one jitter-buffer pull per
 * 20 ms into exactly one 16 kHz AudioFrame for the call.
 *
 * No sockets or timers here: the session feeds datagrams and calls `playout()` from its ticker,
 * both with the monotonic time, so this file stays testable on a ManualClock.
 *
 * Every slot yields a frame, even with nothing to play (silence suppression by the far end, hold,
 * a dead leg): the consumer's VAD, recorder and turn-taking clocks run on frame counts, and
 * audio that stops arriving must read as silence, not as time standing still.
 */
import { FRAME_MS, silenceFrame, type AudioFrame } from '../audio/frame.ts';
import { NARROWBAND_RATE, NarrowbandFrame } from '../audio/narrowband-frame.ts';
import { InboundTranscoder } from './codecs/transcode.ts';
import type { Codec } from './codecs/codec.ts';
import { DtmfReceiver, type DtmfEvent } from './dtmf.ts';
import { InbandDtmfDetector } from './dtmf-inband.ts';
import type { DtmfSource } from './dtmf-sources.ts';
import { JitterBuffer } from './jitter-buffer.ts';
import { loadNativeInbound, NativeJitterBuffer, NativeReceiverStats, type JitterBufferLike, type ReceiverStatsLike } from './native-inbound.ts';
import { InboundMulaw } from './mulaw-passthrough.ts';
import type { RtpPacket } from './rtp-packet.ts';
import { RtpReceiverStats } from './rtp-receiver-stats.ts';
import type { NativeInboundPort } from './rtp-io/types.ts';
import type { DropOldestQueue } from './rtp-session-queue.ts';
import type { NegotiatedMedia } from './sdp-negotiate.ts';
import { SourceFilter, type TransportAddress } from './source-filter.ts';

/** RFC 3389 comfort noise: we play silence anyway, so CN packets carry nothing we need. */
const CN_PAYLOAD_TYPE = 13;
/** Consecutive packets with one odd duration before the jitter buffer is rebuilt for it. */
const PTIME_EVIDENCE = 3;

/**
 * The numbers this path shares with the native drain (native/rtp-udp/fast_drain.c, its FAST_*
 * words), which takes the plain audio packets of an attached call in C: what it took since the
 * last fold, the media time, and the ptime watch's state, which both sides keep in these words
 * so that each decides as the other would.
 */
const W_PACKETS = 0;
const W_BYTES = 1;
const W_LAST_MEDIA = 2;
const W_LAST_SEQ = 3;
const W_LAST_TS = 4;
const W_ODD_TICKS = 5;
const W_ODD_RUN = 6;
/** Session time minus the I/O thread's time base (performance.now()). */
const W_OFFSET = 7;
const W_FRAME_MS = 8;
const W_CLOCK_RATE = 9;
const WORDS = 10;

export interface InboundHooks {
  dtmf(digit: string, durationMs: number, source: DtmfSource): void;
  latched(source: TransportAddress): void;
  /** Observer: every packet the source filter let through, as it arrived (the call tape). The packet object is the session's, reused for the next datagram: read it now. */
  packet?(packet: RtpPacket, nowMs: number): void;
}

export interface InboundOptions {
  /** Where this path's packets come from, when the native drain can take them (RtpSocket.nativeInbound). */
  native?: NativeInboundPort;
  /** Listen for keys in the audio while no telephone-event is negotiated. */
  inbandDtmf?: boolean;
  /** Learn the media source even when the SDP address is concrete (a trunk's `media_nat`; source-filter.ts). */
  learnSource?: boolean;
}

export interface InboundCounters {
  packets: number;
  bytes: number;
  malformed: number;
  unknownPayloadType: number;
  framesDelivered: number;
  silenceFrames: number;
  concealedFrames: number;
  dtmfReceived: number;
}

export class InboundPath {
  readonly queue: DropOldestQueue<AudioFrame>;
  private readonly count: InboundCounters = {
    packets: 0,
    bytes: 0,
    malformed: 0,
    unknownPayloadType: 0,
    framesDelivered: 0,
    silenceFrames: 0,
    concealedFrames: 0,
    dtmfReceived: 0,
  };
  private filter: SourceFilter;
  private media: NegotiatedMedia;
  private stats: ReceiverStatsLike;
  /** Loss and late/dropped counts of receiver stats and jitter buffers replaced by re-INVITEs. */
  private carried = { lost: 0, late: 0, dropped: 0 };
  private jitter: JitterBufferLike;
  private frameMs: number;
  /** The FAST_* words shared with the native drain (W_* above); over an ArrayBuffer, which never moves. */
  private readonly words = new Float64Array(new ArrayBuffer(WORDS * 8));
  /** The native drain, when the socket offers it and the codec's cores run natively (8 kHz RTP clock). */
  private readonly nativePort: NativeInboundPort | undefined;
  /** Whether the native drain takes this path's packets now. */
  private attached = false;
  /** Whether it may: off while a tap watches every packet, and after it refused. */
  private attachable: boolean;
  private observed = false;
  private dtmf: DtmfReceiver;
  /** Listens for keys in the audio while no telephone-event is negotiated (created on the first frame). */
  private inband: InbandDtmfDetector | undefined;
  private readonly inbandWanted: boolean;
  private readonly decoders = new Map<number, InboundTranscoder>();
  private lastDecoder: InboundTranscoder | undefined;
  private readonly pending: AudioFrame[] = [];
  /** PCMU calls: the μ-law bytes behind each frame, for pass-through (mulaw-passthrough.ts). */
  private mulaw: InboundMulaw | undefined;

  /** `queue` belongs to the session: the call may start reading before media is negotiated. */
  constructor(media: NegotiatedMedia, nowMs: number, queue: DropOldestQueue<AudioFrame>, private readonly hooks: InboundHooks, options: InboundOptions = {}) {
    this.media = media;
    this.queue = queue;
    this.nativePort = options.native && loadNativeInbound() ? options.native : undefined;
    this.filter = new SourceFilter({ expected: media.remote, learn: options.learnSource ?? false });
    this.stats = this.newStats(media.codec.clockRate);
    this.frameMs = media.ptimeMs;
    this.jitter = this.newJitter(media.codec.clockRate, this.frameMs);
    this.dtmf = new DtmfReceiver({ clockRate: media.dtmfClockRate ?? 8000 });
    this.words[W_LAST_MEDIA] = nowMs;
    this.words[W_LAST_SEQ] = -1;
    this.attachable = this.mayAttach();
    this.inbandWanted = options.inbandDtmf ?? false;
  }

  /**
   * The native drain takes datagrams from the ring as they are: never for SRTP, whose payloads
   * must be authenticated and decrypted first (the session does that before receive()).
   */
  private mayAttach(): boolean {
    return !this.observed && this.nativePort !== undefined && this.media.srtp === undefined;
  }

  /** Whether the native drain takes this path's plain audio packets now. */
  get native(): boolean {
    return this.attached;
  }

  /** What arrived so far, including the packets the native drain took. */
  get counters(): InboundCounters {
    this.fold();
    return this.count;
  }

  /**
   * Whether a tap watches every packet (the call tape): the native drain would take them past it,
   * so it lets go while one does.
   */
  observe(on: boolean): void {
    this.observed = on;
    if (on) this.detach();
    this.attachable = this.mayAttach();
  }

  /** Where media is accepted from now (for symmetric RTP we send back to the same place). */
  get latched(): TransportAddress | undefined {
    return this.filter.latched;
  }

  /** Whether only a re-INVITE can move the lock now (it is on the SDP's exact transport address). */
  get lockFinal(): boolean {
    return this.filter.final;
  }

  /** Whether the SDP says the far end sends to us at all (not on hold, not sendonly from us). */
  get expectingMedia(): boolean {
    return !this.media.remoteHold && (this.media.direction === 'sendrecv' || this.media.direction === 'recvonly');
  }

  /** Media silence counts from `nowMs` (the answer of a call whose media ran since early media). */
  restartMediaClock(nowMs: number): void {
    this.words[W_LAST_MEDIA] = nowMs;
  }

  msSinceMedia(nowMs: number): number {
    return nowMs - this.words[W_LAST_MEDIA]!;
  }

  acceptRtcpFrom(from: TransportAddress): boolean {
    return this.filter.checkRtcp(from);
  }

  get receiverStats(): ReceiverStatsLike {
    return this.stats;
  }

  /** A re-INVITE changed the media: new address re-learns the source, new codec new decoders. */
  update(media: NegotiatedMedia, nowMs: number): void {
    // The source, payload type or clock may change: attach again (or not) from the next slot.
    this.detach();
    const old = this.media;
    this.media = media;
    this.attachable = this.mayAttach();
    const moved = old.remote.address !== media.remote.address || old.remote.port !== media.remote.port;
    if (moved) this.filter.updateExpected(media.remote);
    if (old.codec.clockRate !== media.codec.clockRate) {
      this.carried.lost += this.stats.snapshot().cumulativeLost;
      this.stats = this.newStats(media.codec.clockRate);
      this.rebuildJitter(media.ptimeMs);
    }
    if (old.dtmfClockRate !== media.dtmfClockRate) this.dtmf = new DtmfReceiver({ clockRate: media.dtmfClockRate ?? 8000 });
    // Decoders for payload types that no longer mean the same codec must not keep stale state.
    for (const [pt, decoder] of this.decoders) {
      if (media.receiveCodecs.get(pt) !== decoder.codec) {
        decoder.close();
        this.decoders.delete(pt);
      }
    }
    // Coming off hold, the media timeout counts from the re-INVITE, not from before the hold.
    this.words[W_LAST_MEDIA] = nowMs;
  }

  receive(packet: RtpPacket, from: TransportAddress, nowMs: number): void {
    // checkFrom, not check: no object per packet just to carry these to the filter.
    const verdict = this.filter.checkFrom(from, packet.ssrc, packet.sequenceNumber);
    if (!verdict.accept) return;
    if (verdict.latchedNow) {
      // The lock moved (to the SDP's exact transport address): the native drain follows it from the next slot.
      this.detach();
      this.hooks.latched(this.filter.latched ?? from);
    }
    this.hooks.packet?.(packet, nowMs);
    const pt = packet.payloadType;
    const isDtmf = pt === this.media.dtmfPayloadType;
    const codec = isDtmf ? undefined : this.media.receiveCodecs.get(pt);
    if (!isDtmf && !codec) {
      if (pt !== CN_PAYLOAD_TYPE) this.count.unknownPayloadType++;
      return;
    }
    this.count.packets++;
    this.count.bytes += packet.payload.length;
    this.words[W_LAST_MEDIA] = nowMs;
    // DTMF shares the stream's SSRC and sequence space, so it counts towards loss statistics.
    this.stats.update(packet, nowMs);
    if (isDtmf) {
      this.onDtmf(this.dtmf.receive(packet, nowMs));
      return;
    }
    if (codec!.clockRate !== this.media.codec.clockRate) {
      // A second codec on another clock cannot share a jitter timeline; only the negotiated one plays.
      this.count.unknownPayloadType++;
      return;
    }
    this.watchPtime(packet);
    this.jitter.push(packet, nowMs);
  }

  /** One 20 ms slot of playout: exactly one frame goes to the consumer. */
  playout(nowMs: number): void {
    // The drain's packets are counted when the counters are read (fold()), not every slot.
    if (this.attached) this.words[W_OFFSET] = nowMs - performance.now();
    else if (this.attachable) this.tryAttach(nowMs);
    // poll() only has something to say while a key is held, and returns a new array every call.
    if (this.dtmf.inProgress) this.onDtmf(this.dtmf.poll(nowMs));
    // With ptime ≠ 20 one pull yields more or less than a frame; pull until a frame exists.
    const maxPulls = Math.ceil(FRAME_MS / this.frameMs) + 1;
    const raw = this.media.codec.name === 'PCMU' ? (this.mulaw ??= new InboundMulaw()) : undefined;
    raw?.begin();
    for (let pulls = 0; this.pending.length === 0 && pulls < maxPulls; pulls++) {
      const out = this.jitter.pull(nowMs);
      if (out.kind === 'empty') break;
      if (out.kind === 'frame') {
        const decoder = this.decoderFor(out.payloadType ?? this.media.payloadType);
        this.lastDecoder = decoder;
        raw?.payload(out.payload, decoder?.codec);
        if (decoder) safeDecode(decoder, out.payload, this.pending);
      } else if (this.lastDecoder) {
        const frames = this.lastDecoder.conceal();
        this.count.concealedFrames += frames.length;
        raw?.concealed(frames);
        this.pending.push(...frames);
      }
    }
    // A ptime longer than negotiated can leave extra frames; never let them pile up into delay.
    while (this.pending.length > 4) this.pending.shift();
    const frame = this.pending.shift();
    this.count.framesDelivered++;
    if (frame) {
      if (this.inbandWanted && this.media.dtmfPayloadType === undefined) this.listenInband(frame);
      this.queue.push(raw ? raw.attach(frame, false) : frame);
    } else {
      this.count.silenceFrames++;
      // A telephone-band call's silence is a NarrowbandFrame too, so its 8 kHz readers need not decimate.
      const silence = this.media.codec.sampleRate === NARROWBAND_RATE ? NarrowbandFrame.silence() : silenceFrame();
      if (this.inbandWanted && this.media.dtmfPayloadType === undefined) this.listenInband(silence);
      this.queue.push(raw ? raw.attach(silence, true) : silence);
    }
  }

  snapshot(): { lost: number; jitterMs: number; late: number; dropped: number; delayMs: number } {
    const s = this.stats.snapshot();
    const j = this.jitter.stats;
    return {
      lost: this.carried.lost + s.cumulativeLost,
      jitterMs: s.jitterMs,
      late: this.carried.late + j.late,
      dropped: this.carried.dropped + j.overflow + j.shrunk,
      delayMs: j.currentDelayMs,
    };
  }

  /** Datagrams the source filter dropped (strangers, and a NAT source's probation), before decoding. */
  get droppedByFilter(): number {
    return this.filter.counters.dropped;
  }

  close(): void {
    this.detach();
    this.attachable = false;
    // A native buffer's slots go now, not when its handle is collected; its stats stay readable.
    this.jitter.close?.();
    for (const decoder of this.decoders.values()) decoder.close();
    this.decoders.clear();
    this.lastDecoder = undefined;
  }

  private decoderFor(pt: number): InboundTranscoder | undefined {
    let decoder = this.decoders.get(pt);
    if (!decoder) {
      const codec: Codec | undefined = this.media.receiveCodecs.get(pt);
      if (!codec) return undefined;
      decoder = new InboundTranscoder(codec);
      this.decoders.set(pt, decoder);
    }
    return decoder;
  }

  private onDtmf(events: DtmfEvent[]): void {
    for (const e of events) {
      if (e.type !== 'digit') continue;
      this.count.dtmfReceived++;
      this.hooks.dtmf(e.digit, e.durationMs, 'rfc4733');
    }
  }

  /** Trunks that signal keys neither in RFC 4733 nor in INFO leave them in the audio. */
  private listenInband(frame: AudioFrame): void {
    const narrow = frame instanceof NarrowbandFrame;
    const rate = narrow ? NARROWBAND_RATE : frame.sampleRate;
    if (this.inband?.sampleRate !== rate) {
      if (rate !== 8000 && rate !== 16000) return;
      this.inband = new InbandDtmfDetector(rate);
    }
    const key = this.inband.push(narrow ? frame.narrow : frame.samples);
    if (key === undefined) return;
    this.count.dtmfReceived++;
    this.hooks.dtmf(key, this.inband.lastDurationMs, 'inband');
  }

  /**
   * The jitter buffer assumes one packet per frame of `frameMs`. Peers do not always send the
   * ptime they negotiated; when several in-order packets agree on another duration, rebuild the
   * buffer for it (a brief re-buffer, once) rather than have every packet look like a gap.
   */
  private watchPtime(packet: RtpPacket): void {
    // In the shared words (fast_drain.c keeps the same watch on the packets it takes).
    const w = this.words;
    const prevSeq = w[W_LAST_SEQ]!;
    const prevTs = w[W_LAST_TS]!;
    w[W_LAST_SEQ] = packet.sequenceNumber;
    w[W_LAST_TS] = packet.timestamp;
    if (prevSeq < 0 || packet.sequenceNumber !== ((prevSeq + 1) & 0xffff)) return;
    const ticks = (packet.timestamp - prevTs) | 0;
    const ms = (ticks * 1000) / this.media.codec.clockRate;
    if (ticks <= 0 || Math.abs(ms - this.frameMs) < 1 || ms > 120 || ms % 2.5 !== 0) {
      w[W_ODD_RUN] = 0;
      return;
    }
    w[W_ODD_RUN] = w[W_ODD_TICKS] === ticks ? w[W_ODD_RUN]! + 1 : 1;
    w[W_ODD_TICKS] = ticks;
    if (w[W_ODD_RUN]! >= PTIME_EVIDENCE) this.rebuildJitter(ms);
  }

  private rebuildJitter(frameMs: number): void {
    // The native drain holds the old buffer: attach again with the new one from the next slot.
    this.detach();
    const j = this.jitter.stats;
    this.carried.late += j.late;
    this.carried.dropped += j.overflow + j.shrunk;
    this.frameMs = frameMs;
    this.words[W_ODD_TICKS] = 0;
    this.words[W_ODD_RUN] = 0;
    this.jitter.close?.();
    this.jitter = this.newJitter(this.media.codec.clockRate, frameMs);
  }

  /**
   * The native cores where the native drain can use them (an 8 kHz RTP clock: G.711 and G.722,
   * whose payloads fit its slots), the TypeScript ones otherwise; the same results either way
   * (test/unit/media/native-inbound.test.ts).
   */
  private newJitter(clockRate: number, frameMs: number): JitterBufferLike {
    return this.nativePort && clockRate === 8000 ? new NativeJitterBuffer({ clockRate, frameMs }) : new JitterBuffer({ clockRate, frameMs });
  }

  private newStats(clockRate: number): ReceiverStatsLike {
    return this.nativePort && clockRate === 8000 ? new NativeReceiverStats({ clockRate }) : new RtpReceiverStats({ clockRate });
  }

  /**
   * Hands the plain audio packets to the native drain once the source is locked (only a
   * re-INVITE moves a lock, and update() detaches first, so the drain's "from this address and
   * port" is the filter's rule).
   */
  private tryAttach(nowMs: number): void {
    const source = this.filter.lockedSource();
    if (!source) return;
    const jitter = this.jitter;
    const stats = this.stats;
    if (!(jitter instanceof NativeJitterBuffer) || !(stats instanceof NativeReceiverStats) || this.media.codec.clockRate !== 8000) {
      this.attachable = false;
      return;
    }
    const w = this.words;
    w[W_OFFSET] = nowMs - performance.now();
    w[W_FRAME_MS] = this.frameMs;
    w[W_CLOCK_RATE] = this.media.codec.clockRate;
    this.attached = this.nativePort!.attach({ jitter: jitter.handle, stats: stats.handle, words: w, address: source.address, port: source.port, payloadType: this.media.payloadType });
    if (!this.attached) this.attachable = false;
  }

  private detach(): void {
    if (!this.attached) return;
    this.nativePort!.detach();
    this.attached = false;
    this.fold();
  }

  /** Adds what the native drain took into the counters. */
  private fold(): void {
    const w = this.words;
    const packets = w[W_PACKETS]!;
    if (packets === 0) return;
    this.count.packets += packets;
    this.count.bytes += w[W_BYTES]!;
    this.filter.countAccepted(packets);
    w[W_PACKETS] = 0;
    w[W_BYTES] = 0;
  }
}

/**
 * A corrupt payload (or one a peer mislabelled) must cost one frame, not the receive loop.
 * Appends to `into` (the pending queue) rather than returning an array: this runs per packet.
 */
function safeDecode(decoder: InboundTranscoder, payload: Uint8Array, into: AudioFrame[]): void {
  try {
    decoder.decodeInto(payload, into);
  } catch {
    into.push(...decoder.conceal());
  }
}
