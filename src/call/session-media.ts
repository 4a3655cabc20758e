/**
 * What a CallSession needs from its media: RtpSession for calls over SIP, WebRtcMedia
 * (src/webrtc/webrtc-media.ts) for calls from a browser. Lifecycle events only on the emitter;
 * audio on `inbound` / `outbound` (16 kHz frames either way).
 */
import type { EventEmitter } from 'eventemitter3';
import type { AudioFrame } from '../audio/frame.ts';
import type { DtmfSendOptions, OutboundAudio, RtpSessionEvents, RtpSessionStats } from '../media/media-types.ts';
import type { InboundTap } from '../media/rtp-session.ts';
import type { NegotiatedMedia } from '../media/sdp-negotiate.ts';

export interface SessionMedia extends Pick<EventEmitter<RtpSessionEvents>, 'on' | 'off'> {
  readonly inbound: AsyncIterable<AudioFrame>;
  readonly outbound: OutboundAudio;
  sendDtmf(digits: string, options?: DtmfSendOptions): Promise<void>;
  stats(): RtpSessionStats;
  /** SIP media: start on the negotiated SDP (WebRTC media starts itself once ICE and DTLS are up). */
  start(media: NegotiatedMedia): void;
  update(media: NegotiatedMedia): void;
  readonly negotiatedSrtp: NegotiatedMedia['srtp'];
  divertInbound(sink: ((frame: AudioFrame) => void) | undefined): void;
  restartTimeout(): void;
  tapInbound(tap: InboundTap | undefined): void;
  signalledDtmf(digit: string, durationMs: number): void;
  close(reason?: string): Promise<void>;
}
