/**
 * RtpSession: one call's media. Owns its RTP/RTCP port pair, both media loops (playout and
 * send; by default both ride the process-wide MediaScheduler of media-clock.ts, one timer for
 * every call), the RTCP timer and every socket listener; `close()` is
 * idempotent and gives the ports back to the pool (ARCHITECTURE.md §6).
 *
 * Life cycle: `allocate()` (ports, so our SDP can be written) → `start(negotiated)` →
 * `update(negotiated)` per re-INVITE → `close()`. Audio crosses the seam as 20 ms 16 kHz
 * AudioFrames (`inbound`, `outbound`); events are lifecycle only (§9).
 *
 * Inbound delivers one frame per 20 ms from start() to close(), silence included (see
 * rtp-session-inbound.ts); outbound sends one packet per ptime while we may send, comfort
 * silence included (see rtp-session-outbound.ts). SSRC, first sequence number and first
 * timestamp are random per session (RFC 3550 §5.1), so a stranger cannot predict them.
 *
 * Media is taken from one source only (source-filter.ts: the SDP address, or a NAT source that
 * passed probation), locked until a re-INVITE. RTP goes out through a UdpSender (udp-sender.ts),
 * which connects the RTP socket to that source once it is locked, where connecting loses nothing
 * (connect-guard.ts): after that dgram no longer resolves the address of every datagram, and
 * the kernel drops strangers' datagrams. See `aimRtp()`. RTCP (a report every few seconds) stays
 * on addressed sends.
 *
 * The RTP socket may live in the RTP I/O thread (rtp-io/thread-io.ts, the default; not with SWITCHBOARD_RTP_THREAD=0):
 * each packet then goes with its due time (the outbound path's slot + SEND_LEAD_MS), and each datagram comes
 * with the thread's arrival stamp, which is what the jitter buffer and source filter get. If that
 * socket closes under the session (the thread was lost), the session emits `failed`.
 */
import { randomBytes } from 'node:crypto';
import type dgram from 'node:dgram';
import { EventEmitter } from 'eventemitter3';
import type { Logger } from 'pino';
import type { AudioFrame } from '../audio/frame.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import type { DtmfSendOptions, OutboundAudio, RtpSessionEvents, RtpSessionStats } from './media-types.ts';
import type { PortPool, RtpPortPair } from './port-pool.ts';
import { looksLikeRtcp, parseRtpInto, RTP_HEADER_LENGTH, rtpDatagram, writeRtpHeader, type RtpPacket } from './rtp-packet.ts';
import { InboundPath } from './rtp-session-inbound.ts';
import { OutboundPath, type OutboundPacket } from './rtp-session-outbound.ts';
import { DropOldestQueue } from './rtp-session-queue.ts';
import { DtmfSourceLock, type DtmfSource } from './dtmf-sources.ts';
import { RtcpReporter } from './rtp-session-rtcp.ts';
import { createTicker, type TickerFactory } from './media-clock.ts';
import type { SlotTicker } from './rtp-session-ticker.ts';
import type { NegotiatedMedia } from './sdp-negotiate.ts';
import { canSend, isHoldAddress } from './sdp.ts';
import type { TransportAddress } from './source-filter.ts';
import { UdpSender } from './udp-sender.ts';
import { connectKeepsMedia, isWildcardAddress, probeRouteSource, type RouteSourceProbe } from './connect-guard.ts';
import { addressForSocket, normalizeAddress } from './media-address.ts';
import { SrtpMedia } from './srtp/srtp-media.ts';
import type { CipherFactory } from './srtp/cipher.ts';

export type { DtmfSendOptions, OutboundAudio, RtpSessionEvents, RtpSessionStats } from './media-types.ts';

export interface RtpSessionOptions {
  pool: PortPool;
  /** The address the pool binds (informational: logs and diagnostics). */
  host?: string;
  /** The address written into our SDP (c=); what the far end sends to. */
  publicAddress: string;
  clock?: Clock;
  logger?: Logger;
  /** No inbound RTP for this long while expecting some fires `rtpTimeout` (default 30 s; 0 = never). */
  rtpTimeoutMs?: number;
  /** Inbound frames held for a slow reader before the oldest are dropped (default 50 = 1 s). */
  inboundQueueFrames?: number;
  /** Outbound audio accepted ahead of playout by write() (default 60 s). */
  maxQueuedMs?: number;
  cname?: string;
  /** Fixed RTCP report interval; by default RFC 3550's randomised ~5 s (2.5 s for the first). */
  rtcpIntervalMs?: number;
  /**
   * Where the playout and send loops get their slots: by default the scheduler shared by every
   * session on the same clock and ptime (media-clock.ts). `(c, i, f, n) => new DeadlineTicker(c, i, f, n)`
   * gives the session timers of its own.
   */
  ticker?: TickerFactory;
  /**
   * Listen for keys in the caller's audio while no telephone-event is negotiated (dtmf-inband.ts).
   * Off by default: the calls of the engine turn it on (sip/server.ts).
   */
  inbandDtmf?: boolean;
  /**
   * Learn the media source behind NAT even when the SDP address is a concrete one (the trunk's
   * `media_nat`): see source-filter.ts. Default: only where the SDP address is private.
   */
  learnSource?: boolean;
  /** How the route's source address toward a peer is found (connect-guard.ts); tests replace it. */
  routeSource?: RouteSourceProbe;
  /** SRTP transforms (default: native where built, else node:crypto); for the bench and tests. */
  srtpCiphers?: CipherFactory;
}

/**
 * An observer of what arrives (the call tape, src/call/tape.ts): the negotiated media when it is
 * attached and after each re-INVITE, then every packet the source filter accepted, with its
 * arrival time on the session's monotonic clock. It must not keep `packet.payload` (a view into
 * the datagram) nor the packet object itself, which the session reuses for the next datagram:
 * read it during the call, copy what it needs.
 */
export interface InboundTap {
  media(media: NegotiatedMedia, nowMs: number): void;
  packet(packet: RtpPacket, nowMs: number): void;
}

export interface LocalPorts {
  address: string;
  rtpPort: number;
  rtcpPort: number;
}

type State = 'new' | 'allocated' | 'started' | 'closed';

export class RtpSession extends EventEmitter<RtpSessionEvents> {
  readonly inbound: AsyncIterable<AudioFrame>;
  readonly outbound: OutboundAudio;
  readonly ssrc: number;
  private options: RtpSessionOptions;
  private readonly clock: Clock;
  private readonly queue: DivertableQueue;
  private state: State = 'new';
  private allocating: Promise<RtpPortPair> | undefined;
  private pair: RtpPortPair | undefined;
  private media: NegotiatedMedia | undefined;
  private in: InboundPath | undefined;
  private out: OutboundPath | undefined;
  private rtcp: RtcpReporter | undefined;
  private playout: SlotTicker | undefined;
  private rtcpTarget: TransportAddress | undefined;
  private rtpOut: UdpSender | undefined;
  /** The address the RTP socket is bound to (a wildcard one needs connect-guard.ts's check). */
  private boundAddress = '';
  /** Per peer address: whether connecting the RTP socket there keeps its media (connect-guard.ts). */
  private readonly connectable = new Map<string, boolean>();
  /** Route probes under way, awaited by close(). */
  private readonly probes = new Set<Promise<void>>();
  private sequence: number;
  private readonly initialTimestamp: number;
  private readonly sent = { packets: 0, bytes: 0 };
  private timedOut = false;
  private readonly dtmfSources = new DtmfSourceLock();
  /** Keys delivered, whichever way they came (stats().dtmfReceived). */
  private deliveredDtmf = 0;
  private tap: InboundTap | undefined;
  /** The call's SRTP when the SDP negotiated it (srtp/srtp-media.ts); plain RTP otherwise. */
  private srtp: SrtpMedia | undefined;
  private closing: Promise<void> | undefined;
  /** Each received datagram is parsed into this one object (parseRtpInto); its payload is new each time. */
  private readonly rxPacket: RtpPacket = {
    payloadType: 0,
    marker: false,
    sequenceNumber: 0,
    timestamp: 0,
    ssrc: 0,
    csrcs: [],
    extension: undefined,
    payload: new Uint8Array(0),
    paddingLength: 0,
  };

  constructor(options: RtpSessionOptions) {
    super();
    this.options = options;
    this.clock = options.clock ?? systemClock;
    const random = randomBytes(10);
    this.ssrc = random.readUInt32BE(0);
    this.sequence = random.readUInt16BE(4);
    this.initialTimestamp = random.readUInt32BE(6);
    this.queue = new DivertableQueue(options.inboundQueueFrames ?? 50);
    this.inbound = this.queue;
    // The writer exists before start() so the call can hold on to it; until media is up (and
    // after close) frames are refused.
    const session = this;
    this.outbound = {
      write: (frame) => session.out?.write(frame) ?? false,
      writeStream: (frames, signal) => (session.out ? session.out.writeStream(frames, signal) : Promise.resolve()),
      flush: () => session.out?.flush() ?? 0,
      get playing() {
        return session.out?.playing ?? false;
      },
      get codec() {
        return session.out?.codec;
      },
      writeMulaw: (payload) => session.out?.writeMulaw(payload) ?? false,
    };
  }

  /** Binds the port pair; call before writing SDP. */
  async allocate(signal?: AbortSignal): Promise<LocalPorts> {
    if (this.state !== 'new') throw new Error(`allocate() in state ${this.state}`);
    this.allocating = this.options.pool.allocate(signal);
    const pair = await this.allocating;
    if (this.closing) {
      await pair.release();
      throw new Error('session closed during allocation');
    }
    this.pair = pair;
    this.state = 'allocated';
    this.boundAddress = pair.rtp.address().address;
    pair.rtp.on('error', (error) => {
      // Only a connected socket hears of ICMP port unreachable (as a failed receive): the peer is
      // not listening (now). The sender goes back to addressed sends, which ignore ICMP as before,
      // instead of an error (with a stack) per datagram.
      if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
        this.rtpOut?.refused();
        return;
      }
      this.fail(error);
    });
    pair.rtcp.on('error', (error) => this.fail(error));
    pair.rtp.on('message', (msg, rinfo, arrivalMs) => this.onRtp(msg, rinfo, arrivalMs));
    pair.rtcp.on('message', (msg, rinfo) => this.onRtcp(msg, rinfo));
    pair.rtp.on('close', () => {
      // Our own close() comes after shutdown began; anything else is the socket lost under us.
      if (this.closing) return;
      const error = new Error('the RTP socket closed under the session (its I/O thread was lost)');
      this.options.logger?.error({ ssrc: this.ssrc }, error.message);
      this.emit('failed', error);
    });
    return this.local;
  }

  /**
   * The address our SDP names, when it is not the one this session was created with: a call we
   * place learns it only when the INVITE knows where it goes (SIP_PUBLIC_HOST6 for an IPv6
   * carrier). Call before start().
   */
  advertise(address: string): void {
    this.options = { ...this.options, publicAddress: address };
  }

  get local(): LocalPorts {
    if (!this.pair) throw new Error('no ports allocated');
    return { address: this.options.publicAddress, rtpPort: this.pair.rtpPort, rtcpPort: this.pair.rtcpPort };
  }

  start(media: NegotiatedMedia): void {
    if (this.state !== 'allocated') throw new Error(`start() in state ${this.state}`);
    this.state = 'started';
    this.media = media;
    this.srtp = SrtpMedia.for(media.srtp, undefined, this.options.srtpCiphers);
    const now = this.clock.monotonic();
    this.in = new InboundPath(media, now, this.queue, {
      dtmf: (digit, durationMs, source) => this.deliverDtmf(digit, durationMs, source),
      latched: (source) => {
        this.aimRtp();
        this.emit('sourceLatched', source);
      },
      packet: (packet, nowMs) => this.tap?.packet(packet, nowMs),
    }, { ...(this.pair!.rtp.nativeInbound ? { native: this.pair!.rtp.nativeInbound } : {}), inbandDtmf: this.options.inbandDtmf ?? false, learnSource: this.options.learnSource ?? false });
    if (this.tap) this.in.observe(true);
    this.rtpOut = new UdpSender(this.pair!.rtp);
    this.aimRtp();
    this.out = new OutboundPath(media, {
      clock: this.clock,
      send: (packet) => this.sendRtp(packet),
      initialTimestamp: this.initialTimestamp,
      ticker: this.options.ticker ?? createTicker,
      lane: this,
      // Payloads the encoder writes in place come inside the datagram already (sendRtp).
      headerRoom: RTP_HEADER_LENGTH,
      ...(this.options.maxQueuedMs !== undefined ? { maxQueuedMs: this.options.maxQueuedMs } : {}),
    });
    const out = this.out;
    const session = this;
    this.rtcp = new RtcpReporter(
      this.clock,
      this.options.cname ?? `switchboard-${this.ssrc.toString(16)}`,
      {
        ssrc: this.ssrc,
        get packetsSent() {
          return session.sent.packets;
        },
        get bytesSent() {
          return session.sent.bytes;
        },
        get clockRate() {
          return session.media?.codec.clockRate ?? 8000;
        },
        rtpTimestampAt: (nowMs) => out.rtpTimestampAt(nowMs),
        receiverStats: () => this.in!.receiverStats,
      },
      (bytes) => this.sendRtcp(bytes),
      (reason) => this.emit('rtcpBye', reason === undefined ? {} : { reason }),
      ...(this.options.rtcpIntervalMs !== undefined ? [() => this.options.rtcpIntervalMs!] : []),
    );
    // Up to 10 slots (200 ms) are caught up after a stall: the jitter buffer holds them anyway,
    // and the consumer's frame count has to keep matching the wall clock.
    this.playout = (this.options.ticker ?? createTicker)(this.clock, 20, () => this.playoutSlot(), 10, this);
    this.playout.start();
    this.out.setSending(this.maySend(media));
    this.rtcp.start();
  }

  /** A re-INVITE (or our own): codec, ptime, direction or remote address may all change. */
  update(media: NegotiatedMedia): void {
    if (this.state !== 'started') throw new Error(`update() in state ${this.state}`);
    const old = this.media!;
    this.media = media;
    this.srtp = SrtpMedia.for(media.srtp, this.srtp, this.options.srtpCiphers);
    if (old.remote.address !== media.remote.address || old.remote.rtcpPort !== media.remote.rtcpPort) this.rtcpTarget = undefined;
    const now = this.clock.monotonic();
    this.in!.update(media, now);
    this.tap?.media(media, now);
    this.out!.update(media);
    this.out!.setSending(this.maySend(media));
    this.timedOut = false;
    this.aimRtp();
  }

  /** The SRTP keys in force (a re-INVITE answer keeps ours when the suite stays), or undefined. */
  get negotiatedSrtp(): NegotiatedMedia['srtp'] {
    return this.media?.srtp;
  }

  /**
   * Early media (RFC 3960): until the answer, caller frames go to `sink` instead of `inbound`, so
   * whoever reads `inbound` after the answer starts with current audio, not a queue full of the
   * ringing phase; undefined sends them to `inbound` again.
   */
  divertInbound(sink: ((frame: AudioFrame) => void) | undefined): void {
    this.queue.divert = sink;
  }

  /**
   * The call was answered on media that ran since the early media: the RTP timeout counts from
   * now (the ringing phase may have been silent for longer than it), and fires again if it must.
   */
  restartTimeout(): void {
    if (this.state !== 'started') return;
    this.timedOut = false;
    this.in!.restartMediaClock(this.clock.monotonic());
  }

  /** Attach (or with undefined, detach) the inbound observer; a started session reports its media at once. */
  tapInbound(tap: InboundTap | undefined): void {
    this.tap = tap;
    this.in?.observe(tap !== undefined);
    if (tap && this.media && this.state === 'started') tap.media(this.media, this.clock.monotonic());
  }

  /**
   * A key press signalled outside RTP (SIP INFO): the same `dtmf` event as RFC 4733 and in-band
   * keys, through the same one-way-per-call rule (dtmf-sources.ts).
   */
  signalledDtmf(digit: string, durationMs: number): void {
    if (this.state === 'closed') return;
    this.deliverDtmf(digit, durationMs, 'info');
  }

  private deliverDtmf(digit: string, durationMs: number, source: DtmfSource): boolean {
    if (!this.dtmfSources.accept(source)) return false;
    this.deliveredDtmf++;
    this.emit('dtmf', { digit, durationMs, source });
    return true;
  }

  sendDtmf(digits: string, options?: DtmfSendOptions): Promise<void> {
    if (!this.out) return Promise.reject(new Error('media not started'));
    return this.out.sendDtmf(digits, options);
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
      rttMs: this.rtcp?.rttMs,
      remote: this.rtcp?.remote,
      concealedFrames: c?.concealedFrames ?? 0,
      lateFrames: rx?.late ?? 0,
      droppedFrames: rx?.dropped ?? 0,
      inboundQueueDropped: this.queue.dropped,
      ioDroppedInbound: this.pair?.rtp.droppedPackets.inbound ?? 0,
      ioDroppedOutbound: this.pair?.rtp.droppedPackets.outbound ?? 0,
      droppedByFilter: this.in?.droppedByFilter ?? 0,
      malformed: c?.malformed ?? 0,
      unknownPayloadType: c?.unknownPayloadType ?? 0,
      framesDelivered: c?.framesDelivered ?? 0,
      silenceFramesDelivered: c?.silenceFrames ?? 0,
      jitterBufferDelayMs: rx?.delayMs ?? 0,
      outboundFramesDropped: this.out?.counters.framesDropped ?? 0,
      outboundSkippedSlots: ticker?.skippedSlots ?? 0,
      outboundMaxLateMs: ticker?.maxLateMs ?? 0,
      dtmfReceived: this.deliveredDtmf,
      dtmfSent: this.out?.counters.dtmfSent ?? 0,
      inboundNative: this.in?.native ?? false,
      srtp: this.srtp?.suite,
      srtpAuthFailed: this.srtp?.counters.authFailed ?? 0,
      srtcpAuthFailed: this.srtp?.counters.rtcpAuthFailed ?? 0,
      srtpReplayed: this.srtp?.counters.replayed ?? 0,
    };
  }

  /** Stops everything, sends RTCP BYE if media ran, releases the ports. Idempotent. */
  close(reason?: string): Promise<void> {
    this.closing ??= this.shutdown(reason);
    return this.closing;
  }

  private async shutdown(reason: string | undefined): Promise<void> {
    const wasStarted = this.state === 'started';
    this.state = 'closed';
    this.playout?.stop();
    this.rtcp?.stop();
    this.out?.close();
    this.rtpOut?.close();
    this.in?.close();
    this.queue.end();
    if (this.probes.size > 0) await Promise.all([...this.probes]);
    if (!this.pair && this.allocating) {
      // allocate() sees the closed state and releases what it got; just wait for that.
      await this.allocating.catch(() => undefined);
    }
    const pair = this.pair;
    if (!pair) return;
    if (wasStarted && this.rtcp) {
      const target = this.rtcpDestination();
      const bye = this.rtcp.byePacket(reason);
      if (target) await sendAndWait(pair.rtcp, this.srtp ? this.srtp.protectRtcp(bye) : bye, target);
    }
    pair.rtp.removeAllListeners('message');
    pair.rtcp.removeAllListeners('message');
    await pair.release();
    // Closed sockets can still report an error while closing; keep a listener until then.
    pair.rtp.removeAllListeners('error');
    pair.rtp.removeAllListeners('close');
    pair.rtcp.removeAllListeners('error');
    this.removeAllListeners();
  }

  private maySend(media: NegotiatedMedia): boolean {
    return canSend(media.direction) && !isHoldAddress(media.remote.address) && media.remote.port !== 0;
  }

  private playoutSlot(): void {
    const inbound = this.in!;
    const now = this.clock.monotonic();
    inbound.playout(now);
    const limit = this.options.rtpTimeoutMs ?? 30_000;
    if (limit <= 0) return;
    const silentMs = inbound.msSinceMedia(now);
    if (silentMs < limit || !inbound.expectingMedia) {
      this.timedOut = false;
    } else if (!this.timedOut) {
      // Once per outage; media coming back re-arms it.
      this.timedOut = true;
      this.emit('rtpTimeout', { silentMs });
    }
  }

  /** `arrivalMs`: the I/O thread's stamp (event-loop thread `performance.now()`); undefined: now. */
  private onRtp(msg: Buffer, rinfo: dgram.RemoteInfo, arrivalMs: number | undefined): void {
    if (this.state !== 'started') return;
    // rtcp-mux (RFC 5761): some peers send RTCP to the RTP port.
    if (looksLikeRtcp(msg)) return this.onRtcp(msg, rinfo);
    // SRTP: authenticated and decrypted in place; what fails (forged, replayed) is counted there
    // and goes no further: not to the source filter, which it must not latch, nor the decoder.
    if (this.srtp) {
      const length = this.srtp.unprotectRtp(msg);
      if (length < 0) return;
      msg = msg.subarray(0, length);
    }
    // One packet object for every datagram: nothing downstream keeps it (InboundTap's contract).
    const packet = this.rxPacket;
    if (parseRtpInto(msg, packet) !== undefined) {
      this.in!.counters.malformed++;
      return;
    }
    // rinfo is a TransportAddress already (and fresh per datagram): no copy.
    this.in!.receive(packet, rinfo, this.toSessionTime(arrivalMs));
  }

  private onRtcp(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.state !== 'started') return;
    const from = { address: rinfo.address, port: rinfo.port };
    if (!this.in!.acceptRtcpFrom(from)) return;
    if (this.srtp) {
      const length = this.srtp.unprotectRtcp(msg);
      if (length < 0) return;
      msg = msg.subarray(0, length);
    }
    // Symmetric RTCP: answer where their reports come from (NAT rarely keeps RTP port + 1).
    if (this.rtcp!.receive(msg)) this.rtcpTarget = from;
  }

  /**
   * Per packet: header and payload into one new datagram, to where aimRtp() pointed. A payload
   * encoded with room for the header before it (`room`, a new Buffer the path lets go of) is
   * that datagram already: only the header is written.
   */
  private sendRtp(packet: OutboundPacket): void {
    const out = this.rtpOut;
    if (!out) return;
    let bytes: Uint8Array;
    let payloadBytes: number;
    if (this.srtp) {
      // The datagram needs room for the tag after the payload: one new buffer, as rtpDatagram.
      bytes = this.srtp.protectRtp(packet, this.sequence, this.ssrc);
      payloadBytes = packet.room === RTP_HEADER_LENGTH ? packet.payload.length - RTP_HEADER_LENGTH : packet.payload.length;
    } else if (packet.room === RTP_HEADER_LENGTH) {
      bytes = packet.payload;
      payloadBytes = bytes.length - RTP_HEADER_LENGTH;
      writeRtpHeader(bytes, packet.payloadType, packet.marker, this.sequence, packet.timestamp, this.ssrc);
    } else {
      bytes = rtpDatagram(packet.payloadType, packet.marker, this.sequence, packet.timestamp, this.ssrc, packet.payload);
      payloadBytes = packet.payload.length;
    }
    this.sequence = (this.sequence + 1) & 0xffff;
    this.sent.packets++;
    this.sent.bytes += payloadBytes;
    // The session's clock to the I/O's (performance.now()): the same clock in production.
    out.send(bytes, packet.dueMs - this.clock.monotonic() + performance.now());
  }

  /** A time on the I/O's clock (performance.now()) on the session's, or now when there is none. */
  private toSessionTime(ioMs: number | undefined): number {
    const now = this.clock.monotonic();
    return ioMs === undefined ? now : now - (performance.now() - ioMs);
  }

  /**
   * Points the RTP sender, on start, on the lock and on every re-INVITE. Symmetric RTP: once the
   * source is locked we answer it there, which is what gets through NAT; before, the SDP address.
   *
   * The socket is connected to the locked source once the lock is final (on the SDP's exact
   * transport address): connected, Linux drops every datagram from anyone else before we see it,
   * and that source is the only one the filter accepts until a re-INVITE (which re-aims). A lock
   * learned elsewhere (NAT, another port) stays unconnected, since the SDP's transport address
   * may still take it. Not while we do not send either, and not where connecting would pin the
   * socket to a local address the peer does not send to (connect-guard.ts): then the filter
   * alone keeps strangers out.
   *
   * One difference remains, accepted: RTCP that a peer multiplexes onto our RTP port from another
   * port than its RTP one (the filter takes RTCP from the source's IP on any port) no longer
   * arrives. rtcp-mux (RFC 5761) sends both from one port.
   */
  private aimRtp(): void {
    const media = this.media;
    const out = this.rtpOut;
    if (!media || !out || this.state !== 'started') return;
    const latched = this.in!.latched;
    out.aim(latched ?? media.remote, latched !== undefined && this.in!.lockFinal && this.maySend(media) && this.mayConnect(latched));
  }

  /** Whether connecting to `peer` keeps its media; a first ask starts a probe, which re-aims. */
  private mayConnect(peer: TransportAddress): boolean {
    if (!isWildcardAddress(this.boundAddress)) return true;
    const key = normalizeAddress(peer.address);
    const known = this.connectable.get(key);
    if (known !== undefined) return known;
    if (this.connectable.size >= 16) return false; // a bound on what a peer's re-INVITEs can make us probe
    const probe = (this.options.routeSource ?? probeRouteSource)(peer)
      .catch(() => undefined)
      .then((source) => {
        this.probes.delete(probe);
        this.connectable.set(key, connectKeepsMedia(this.boundAddress, this.options.publicAddress, source));
        this.aimRtp();
      });
    this.probes.add(probe);
    this.connectable.set(key, false);
    return false;
  }

  private rtcpDestination(): TransportAddress | undefined {
    const media = this.media;
    if (this.rtcpTarget) return this.rtcpTarget;
    if (!media || isHoldAddress(media.remote.address) || media.remote.port === 0) return undefined;
    const latched = this.in?.latched;
    if (latched && latched.address !== media.remote.address) return { address: latched.address, port: latched.port + 1 };
    return { address: media.remote.address, port: media.remote.rtcpPort };
  }

  private sendRtcp(bytes: Uint8Array): void {
    const target = this.rtcpDestination();
    const rtcp = this.pair?.rtcp;
    if (target && rtcp) rtcp.send(this.srtp ? this.srtp.protectRtcp(bytes) : bytes, target.port, addressForSocket(target.address, rtcp.address().family));
  }

  private fail(error: Error): void {
    this.options.logger?.warn({ err: error, ssrc: this.ssrc }, 'rtp socket error');
    this.emit('error', error);
  }
}

/** The inbound queue, whose frames can be sent elsewhere for a while (early media). */
export class DivertableQueue extends DropOldestQueue<AudioFrame> {
  divert: ((frame: AudioFrame) => void) | undefined;

  override push(item: AudioFrame): boolean {
    const divert = this.divert;
    if (!divert) return super.push(item);
    divert(item);
    return true;
  }
}

/** The BYE should leave before the socket closes; a UDP send completes at once or not at all. */
function sendAndWait(socket: dgram.Socket, bytes: Uint8Array, to: TransportAddress): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.send(bytes, to.port, addressForSocket(to.address, socket.address().family), () => resolve());
    } catch {
      resolve();
    }
  });
}
