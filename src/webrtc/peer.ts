/**
 * The werift side of a browser call: one RTCPeerConnection that answers the browser's offer
 * (audio only, Opus 48 kHz), trickles ICE both ways, and once ICE and DTLS are connected hands
 * the decrypted RTP to a WebRtcMedia and sends what it makes. DTLS-SRTP is werift's.
 *
 * The browser offers, we answer: the browser knows its microphone track before anything else
 * happens, and an answerer never has to handle glare.
 */
import { RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket as WeriftRtpPacket, type RTCIceServer } from 'werift';
import type { Logger } from 'pino';
import type { RtpPacket } from '../media/rtp-packet.ts';
import { webNegotiatedMedia, type WebRtcMedia } from './webrtc-media.ts';

export interface IceCandidateMessage {
  candidate: string;
  sdpMid?: string | null;
  sdpMLineIndex?: number | null;
}

export interface PeerOptions {
  iceServers: RTCIceServer[];
  /** UDP ports for ICE (both ends inclusive); undefined: any free port. */
  portRange?: [number, number] | undefined;
  /** The address host candidates are on (SIP_HOST); a wildcard one: every interface. */
  host: string;
  logger: Logger;
}

export type PeerState = 'connected' | 'failed' | 'closed';

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

export class WebRtcPeer {
  private readonly pc: RTCPeerConnection;
  private readonly specificHost: string | undefined;
  private closed = false;
  private begun = false;

  constructor(
    private readonly options: PeerOptions,
    private readonly media: WebRtcMedia,
    private readonly events: { candidate(c: IceCandidateMessage): void; state(s: PeerState): void },
  ) {
    this.specificHost = WILDCARDS.has(options.host) ? undefined : options.host;
    const v6 = this.specificHost?.includes(':') ?? false;
    this.pc = new RTCPeerConnection({
      codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48_000, channels: 2 })], video: [] },
      iceServers: options.iceServers,
      ...(options.portRange ? { icePortRange: options.portRange } : {}),
      ...(this.specificHost
        ? { iceInterfaceAddresses: { [v6 ? 'udp6' : 'udp4']: this.specificHost }, iceAdditionalHostAddresses: [this.specificHost], iceUseIpv4: !v6, iceUseIpv6: v6 }
        : {}),
    });
    this.pc.onIceCandidate.subscribe((c) => {
      if (!c || this.closed) return;
      const json = c.toJSON();
      // With a specific host, candidates of other interfaces carry sockets bound to it: useless.
      if (this.specificHost && json.candidate && isHostCandidate(json.candidate) && !json.candidate.includes(` ${this.specificHost} `)) return;
      this.events.candidate({ candidate: json.candidate ?? '', sdpMid: json.sdpMid ?? null, sdpMLineIndex: json.sdpMLineIndex ?? null });
    });
    // Before the offer is applied: werift announces the remote track while applying it.
    this.pc.onTrack.subscribe((track) => {
      if (track.kind !== 'audio') return;
      track.onReceiveRtp.subscribe((rtp) => this.media.receive(toPacket(rtp)));
    });
    this.pc.connectionStateChange.subscribe((state) => {
      if (this.closed) return;
      if (state === 'connected') this.onConnected();
      else if (state === 'failed' || state === 'closed') this.events.state(state);
    });
  }

  /** The browser's offer → our answer (SDP). Throws on an offer without usable audio. */
  async answer(offerSdp: string): Promise<string> {
    await this.pc.setRemoteDescription({ type: 'offer', sdp: offerSdp });
    const transceiver = this.pc.getTransceivers().find((t) => t.kind === 'audio');
    if (!transceiver) throw new Error('the offer has no audio');
    transceiver.setDirection('sendrecv');
    const answer = await this.pc.createAnswer();
    await this.pc.setLocalDescription(answer);
    return this.pc.localDescription?.sdp ?? answer.sdp;
  }

  async addCandidate(c: IceCandidateMessage): Promise<void> {
    if (this.closed) return;
    await this.pc.addIceCandidate({ candidate: c.candidate, sdpMid: c.sdpMid ?? undefined, sdpMLineIndex: c.sdpMLineIndex ?? undefined });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pc.close().catch((err: unknown) => this.options.logger.debug({ err: (err as Error).message }, 'peer connection close'));
  }

  private onConnected(): void {
    if (this.begun) return;
    const transceiver = this.pc.getTransceivers().find((t) => t.kind === 'audio');
    const pt = transceiver?.sender.codec?.payloadType;
    if (!transceiver || pt === undefined) {
      this.events.state('failed');
      return;
    }
    this.begun = true;
    const sender = transceiver.sender;
    this.media.begin(webNegotiatedMedia(pt), (p) => {
      const header = new RtpHeader({ payloadType: p.payloadType, sequenceNumber: p.sequenceNumber, timestamp: p.timestamp, marker: p.marker });
      sender.sendRtp(new WeriftRtpPacket(header, p.payload)).catch(() => undefined);
    });
    this.events.state('connected');
  }
}

function isHostCandidate(candidate: string): boolean {
  return / typ host\b/.test(candidate);
}

function toPacket(rtp: WeriftRtpPacket): RtpPacket {
  const h = rtp.header;
  return {
    payloadType: h.payloadType,
    sequenceNumber: h.sequenceNumber,
    timestamp: h.timestamp >>> 0,
    ssrc: h.ssrc >>> 0,
    marker: h.marker,
    csrcs: [],
    payload: rtp.payload,
    paddingLength: 0,
  };
}
