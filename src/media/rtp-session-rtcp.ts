/**
 * RTCP for one session: our periodic SR/RR (randomised ~5 s, RFC 3550 §6.3), reading the far
 * end's reports (its view of our stream: loss, jitter, and the round trip through LSR/DLSR), and
 * the closing BYE. Times here are wall-clock (`clock.now()`), because NTP timestamps in SRs and
 * the LSR/DLSR arithmetic are wall-clock by definition.
 */
import type { Clock, Timer } from '../util/clock.ts';
import {
  buildBye,
  buildReport,
  parseRtcp,
  roundTripMs,
  rtcpIntervalMs,
  serializeRtcp,
  type ReportBlock,
  type RtcpPacket,
} from './rtcp.ts';
import type { ReceiverStatsLike } from './native-inbound.ts';

export interface RtcpSource {
  ssrc: number;
  packetsSent: number;
  bytesSent: number;
  rtpTimestampAt(nowMs: number): number;
  /** Clock rate of what we send, to turn the far end's jitter figure into ms. */
  clockRate: number;
  receiverStats(): ReceiverStatsLike;
}

export interface RemoteReport {
  fractionLost: number;
  cumulativeLost: number;
  jitterMs: number;
}

export class RtcpReporter {
  private timer: Timer | undefined;
  private lastReportPackets = 0;
  private rttMsValue: number | undefined;
  private remoteValue: RemoteReport | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly cname: string,
    private readonly source: RtcpSource,
    private readonly transmit: (bytes: Uint8Array) => void,
    private readonly onBye: (reason: string | undefined) => void,
    /** Delay before the next report; RFC 3550's randomised ~5 s unless a test wants it brisk. */
    private readonly interval: (first: boolean) => number = (first) => rtcpIntervalMs(Math.random, first),
  ) {}

  get rttMs(): number | undefined {
    return this.rttMsValue;
  }

  get remote(): RemoteReport | undefined {
    return this.remoteValue;
  }

  start(): void {
    if (this.timer) return;
    this.schedule(true);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** One compound datagram from the far end (already checked against the source filter). */
  receive(data: Uint8Array): boolean {
    const parsed = parseRtcp(data);
    if (!parsed.ok) return false;
    const now = this.clock.now();
    for (const packet of parsed.packets) this.onPacket(packet, now);
    return true;
  }

  /** The final compound packet: a last report, then BYE (RFC 3550 §6.6). */
  byePacket(reason?: string): Uint8Array {
    return serializeRtcp(buildBye(this.report(this.clock.now()), this.source.ssrc, reason));
  }

  private schedule(first: boolean): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.transmit(serializeRtcp(this.report(this.clock.now())));
      this.schedule(false);
    }, this.interval(first));
  }

  private report(nowMs: number): RtcpPacket[] {
    const s = this.source;
    const block = s.receiverStats().reportBlock(nowMs);
    const sentSince = s.packetsSent > this.lastReportPackets;
    this.lastReportPackets = s.packetsSent;
    return buildReport({
      nowMs,
      cname: this.cname,
      sender: { ssrc: s.ssrc, packetCount: s.packetsSent, octetCount: s.bytesSent, rtpTimestamp: s.rtpTimestampAt(this.clock.monotonic()) },
      sentSinceLastReport: sentSince,
      reports: block ? [block] : [],
    });
  }

  private onPacket(packet: RtcpPacket, nowMs: number): void {
    if (packet.type === 'sr') {
      this.source.receiverStats().onSenderReport(packet.sender.ntpSeconds, packet.sender.ntpFraction, nowMs);
      this.onBlocks(packet.reports, nowMs);
    } else if (packet.type === 'rr') {
      this.onBlocks(packet.reports, nowMs);
    } else if (packet.type === 'bye') {
      this.onBye(packet.reason);
    }
  }

  private onBlocks(blocks: readonly ReportBlock[], nowMs: number): void {
    const mine = blocks.find((b) => b.ssrc === this.source.ssrc);
    if (!mine) return;
    this.remoteValue = {
      fractionLost: mine.fractionLost / 256,
      cumulativeLost: mine.cumulativeLost,
      jitterMs: (mine.jitter * 1000) / this.source.clockRate,
    };
    const rtt = roundTripMs(mine, nowMs);
    if (rtt !== undefined) this.rttMsValue = rtt;
  }
}
