/**
 * A browser call's media, as a CallSession sees it (SessionMedia): the same 16 kHz frames in and
 * out as an RtpSession, over the RTP packets a WebRTC peer connection carries (src/webrtc/peer.ts
 * feeds them in after ICE, DTLS and SRTP). No sockets here.
 *
 * The receive and send halves are the RtpSession's own: InboundPath (jitter buffer, Opus decode
 * and concealment, 48 → 16 kHz, exactly one frame per 20 ms slot, silence included) and
 * OutboundPath (16 → 48 kHz, Opus encode at send time, one 20 ms packet per slot on absolute
 * deadlines, comfort silence between talkspurts, flush on barge-in). So pacing, concealment and
 * barge-in behave as on a phone call.
 */
import { EventEmitter } from 'eventemitter3';
import type { AudioFrame } from '../audio/frame.ts';
import type { SessionMedia } from '../call/session-media.ts';
import type { Codec } from '../media/codecs/codec.ts';
import { opusCodec } from '../media/codecs/opus.ts';
import { createTicker, type TickerFactory } from '../media/media-clock.ts';
import type { DtmfSendOptions, OutboundAudio, RtpSessionEvents, RtpSessionStats } from '../media/media-types.ts';
import type { RtpPacket } from '../media/rtp-packet.ts';
import { InboundPath } from '../media/rtp-session-inbound.ts';
import { OutboundPath, type OutboundPacket } from '../media/rtp-session-outbound.ts';
import { DivertableQueue, type InboundTap } from '../media/rtp-session.ts';
import type { SlotTicker } from '../media/rtp-session-ticker.ts';
import type { NegotiatedMedia } from '../media/sdp-negotiate.ts';
import type { Clock } from '../util/clock.ts';
import { AppError } from '../util/errors.ts';

/**
 * Where decrypted packets "come from": ICE already chose and authenticated the path, so the
 * source filter sees one fixed stand-in address (the discard port on loopback) that it locks
 * on from the first packet.
 */
const PEER = { address: '127.0.0.1', port: 9, rtcpPort: 9 } as const;

/** What goes out: one RTP packet (sequence numbers are ours; SSRC and SRTP are the peer connection's). */
export interface WebRtcPacketOut {
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  marker: boolean;
  payload: Buffer;
}

export interface WebRtcMediaOptions {
  clock: Clock;
  /** No packet from the browser this long while the call is up: `rtpTimeout` (default 30 s). */
  rtpTimeoutMs?: number;
  ticker?: TickerFactory;
}

/** The negotiated media of a browser call: Opus on the payload type the offer gave it, 20 ms, sendrecv. */
export function webNegotiatedMedia(payloadType: number, codec: Codec = opusCodec): NegotiatedMedia {
  return {
    remote: { ...PEER },
    codec,
    payloadType,
    receiveCodecs: new Map([[payloadType, codec]]),
    ptimeMs: 20,
    direction: 'sendrecv',
    remoteHold: false,
    mediaIndex: 0,
  };
}

type State = 'new' | 'started' | 'closed';

export class WebRtcMedia extends EventEmitter<RtpSessionEvents> implements SessionMedia {
  readonly inbound: AsyncIterable<AudioFrame>;
  readonly outbound: OutboundAudio;
  private readonly queue = new DivertableQueue(50);
  private readonly clock: Clock;
  private state: State = 'new';
  private media: NegotiatedMedia | undefined;
  private in: InboundPath | undefined;
  private out: OutboundPath | undefined;
  private playout: SlotTicker | undefined;
  private tap: InboundTap | undefined;
  private send: ((packet: WebRtcPacketOut) => void) | undefined;
  private sequence = Math.floor(Math.random() * 0x10000);
  private readonly sent = { packets: 0, bytes: 0 };
  private timedOut = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: WebRtcMediaOptions) {
    super();
    this.clock = options.clock;
    this.inbound = this.queue;
    const self = this;
    this.outbound = {
      write: (frame) => self.out?.write(frame) ?? false,
      writeStream: (frames, signal) => (self.out ? self.out.writeStream(frames, signal) : Promise.resolve()),
      flush: () => self.out?.flush() ?? 0,
      get playing() {
        return self.out?.playing ?? false;
      },
      get codec() {
        return self.out?.codec;
      },
    };
  }

  get started(): boolean {
    return this.state === 'started';
  }

  /** The peer connection is up: frames flow from now, packets go out through `send`. */
  begin(media: NegotiatedMedia, send: (packet: WebRtcPacketOut) => void): void {
    if (this.state !== 'new') return;
    this.state = 'started';
    this.media = media;
    this.send = send;
    const now = this.clock.monotonic();
    this.in = new InboundPath(media, now, this.queue, {
      dtmf: (digit, durationMs, source) => this.emit('dtmf', { digit, durationMs, source }),
      latched: () => undefined,
      packet: (packet, nowMs) => this.tap?.packet(packet, nowMs),
    });
    if (this.tap) {
      this.in.observe(true);
      this.tap.media(media, now);
    }
    const ticker = this.options.ticker ?? createTicker;
    this.out = new OutboundPath(media, {
      clock: this.clock,
      send: (packet) => this.sendPacket(packet),
      initialTimestamp: Math.floor(Math.random() * 0x1_0000_0000),
      ticker,
      lane: this,
    });
    this.playout = ticker(this.clock, 20, () => this.playoutSlot(), 10, this);
    this.playout.start();
    this.out.setSending(true);
  }

  /** One decrypted RTP packet from the browser. */
  receive(packet: RtpPacket): void {
    if (this.state !== 'started') return;
    this.in!.receive(packet, PEER, this.clock.monotonic());
  }

  start(): void {
    throw new Error('WebRtcMedia starts with begin() once the peer connection is up');
  }

  update(): void {
    throw new Error('WebRtcMedia has no re-negotiation');
  }

  get negotiatedSrtp(): NegotiatedMedia['srtp'] {
    return undefined;
  }

  divertInbound(sink: ((frame: AudioFrame) => void) | undefined): void {
    this.queue.divert = sink;
  }

  restartTimeout(): void {
    this.timedOut = false;
    this.in?.restartMediaClock(this.clock.monotonic());
  }

  tapInbound(tap: InboundTap | undefined): void {
    this.tap = tap;
    this.in?.observe(tap !== undefined);
    if (tap && this.media && this.state === 'started') tap.media(this.media, this.clock.monotonic());
  }

  signalledDtmf(digit: string, durationMs: number): void {
    if (this.state !== 'closed') this.emit('dtmf', { digit, durationMs, source: 'info' });
  }

  sendDtmf(_digits: string, _options?: DtmfSendOptions): Promise<void> {
    return Promise.reject(new AppError('a browser call has no telephone-event', 409, 'DTMF_NOT_NEGOTIATED'));
  }

  stats(): RtpSessionStats {
    const m = this.media;
    const rx = this.in?.snapshot();
    const c = this.in?.counters;
    const ticker = this.out?.tickerStats;
    return {
      codec: m?.codec.name,
      payloadType: m?.payloadType,
      ptimeMs: m?.ptimeMs,
      packetsSent: this.sent.packets,
      bytesSent: this.sent.bytes,
      packetsReceived: c?.packets ?? 0,
      bytesReceived: c?.bytes ?? 0,
      lost: rx?.lost ?? 0,
      jitterMs: rx?.jitterMs ?? 0,
      rttMs: undefined,
      remote: undefined,
      concealedFrames: c?.concealedFrames ?? 0,
      lateFrames: rx?.late ?? 0,
      droppedFrames: rx?.dropped ?? 0,
      inboundQueueDropped: this.queue.dropped,
      ioDroppedInbound: 0,
      ioDroppedOutbound: 0,
      droppedByFilter: 0,
      malformed: c?.malformed ?? 0,
      unknownPayloadType: c?.unknownPayloadType ?? 0,
      framesDelivered: c?.framesDelivered ?? 0,
      silenceFramesDelivered: c?.silenceFrames ?? 0,
      jitterBufferDelayMs: rx?.delayMs ?? 0,
      outboundFramesDropped: this.out?.counters.framesDropped ?? 0,
      outboundSkippedSlots: ticker?.skippedSlots ?? 0,
      outboundMaxLateMs: ticker?.maxLateMs ?? 0,
      dtmfReceived: c?.dtmfReceived ?? 0,
      dtmfSent: 0,
      inboundNative: false,
      srtp: 'DTLS-SRTP',
    };
  }

  close(_reason?: string): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.state = 'closed';
    this.playout?.stop();
    this.out?.close();
    this.in?.close();
    this.queue.end();
    this.send = undefined;
    this.removeAllListeners();
  }

  private sendPacket(packet: OutboundPacket): void {
    const send = this.send;
    if (!send) return;
    const payload = Buffer.from(packet.payload.subarray(packet.room));
    this.sequence = (this.sequence + 1) & 0xffff;
    this.sent.packets++;
    this.sent.bytes += payload.length;
    send({ payloadType: packet.payloadType, sequenceNumber: this.sequence, timestamp: packet.timestamp, marker: packet.marker, payload });
  }

  private playoutSlot(): void {
    const inbound = this.in;
    if (!inbound) return;
    const now = this.clock.monotonic();
    inbound.playout(now);
    const limit = this.options.rtpTimeoutMs ?? 30_000;
    if (limit <= 0) return;
    const silentMs = inbound.msSinceMedia(now);
    if (silentMs < limit) {
      this.timedOut = false;
    } else if (!this.timedOut) {
      this.timedOut = true;
      this.emit('rtpTimeout', { silentMs });
    }
  }
}
