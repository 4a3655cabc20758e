/**
 * The media seam a call sees: what RtpSession hands the CallSession. Kept apart from the session
 * so the call layer (and stand-ins in tests) can depend on the shapes without the sockets.
 */
import type { AudioFrame } from '../audio/frame.ts';
import type { DtmfSource } from './dtmf-sources.ts';
import type { TransportAddress } from './source-filter.ts';

/** Lifecycle events only (ARCHITECTURE.md §9): audio never travels through an emitter. */
export interface RtpSessionEvents {
  /** A key press, however it came (RFC 4733, SIP INFO, or heard in the audio). */
  dtmf: (event: { digit: string; durationMs: number; source?: DtmfSource }) => void;
  /** No media for `rtpTimeoutMs` while we expected some: the call can hang up a dead leg. */
  rtpTimeout: (event: { silentMs: number }) => void;
  /** Media is now accepted only from this address (the SDP one, or learned behind NAT). */
  sourceLatched: (source: TransportAddress) => void;
  /** The far end said goodbye in RTCP; signalling normally follows with a BYE. */
  rtcpBye: (event: { reason?: string }) => void;
  error: (error: Error) => void;
  /** Media cannot go on: the RTP socket closed under the session (its I/O thread was lost). The call should end. */
  failed: (error: Error) => void;
}

export interface DtmfSendOptions {
  /** Tone length per digit (default 100 ms). */
  durationMs?: number;
  /** Quiet time between digits (default 60 ms; carriers want at least 40). */
  gapMs?: number;
}

/**
 * A caller frame of a G.711 μ-law (PCMU) call: also the μ-law bytes behind it, as the far end
 * sent them (after the jitter buffer's reordering; a lost packet is its concealment, encoded),
 * so an engine whose model takes μ-law passes them through instead of re-encoding the frame.
 * At ptime 20 that is the frame's own 160-byte payload; at other ptimes, the bytes pulled in the
 * frame's slot (possibly none), so the bytes of consecutive frames still add up to the stream.
 */
export interface PassThroughFrame extends AudioFrame {
  readonly mulaw?: Uint8Array;
}

/** The μ-law bytes a caller frame carries, if its call is PCMU (see PassThroughFrame). */
export function mulawOf(frame: AudioFrame): Uint8Array | undefined {
  return (frame as PassThroughFrame).mulaw;
}

/** Bytes of 20 ms of G.711 (8 kHz, one byte a sample): the unit of `writeMulaw`. */
export const G711_FRAME_BYTES = 160;

/** Audio towards the caller. One writer per call; frames are 20 ms at 16 kHz (any rate works). */
export interface OutboundAudio {
  /**
   * Queue one frame. Returns false (and drops it) when the frame cannot play: the call is on
   * hold, closed, or more than `maxQueuedMs` of audio is already waiting.
   */
  write(frame: AudioFrame): boolean;
  /**
   * Play a stream with backpressure (about 100 ms queued ahead). Resolves once every frame
   * of it has been sent or dropped. Aborting `signal` stops reading and flushes the queue.
   */
  writeStream(frames: AsyncIterable<AudioFrame>, signal?: AbortSignal): Promise<void>;
  /** Barge-in: drop everything queued at once; returns the number of 20 ms frames dropped. */
  flush(): number;
  /** True while queued audio (not comfort silence) is going out. */
  readonly playing: boolean;
  /**
   * The negotiated codec's name (`PCMU`, `PCMA`, `G722`, `opus`) while media is up. Absent on
   * writers that have no codec (virtual media in tests and replays).
   */
  readonly codec?: string | undefined;
  /**
   * μ-law pass-through: queue 20 ms of G.711 μ-law (exactly G711_FRAME_BYTES), in order with
   * `write`'s frames and flushed with them. On a PCMU call the bytes become RTP payloads as
   * they are (re-cut only for a ptime other than 20); on another codec they are decoded and
   * encoded like a frame. Returns false like `write`. Absent where unsupported.
   */
  writeMulaw?(payload: Uint8Array): boolean;
}

export interface RtpSessionStats {
  codec: string | undefined;
  payloadType: number | undefined;
  ptimeMs: number | undefined;
  packetsSent: number;
  /** Payload octets, as in an RTCP SR. */
  bytesSent: number;
  packetsReceived: number;
  bytesReceived: number;
  /** RFC 3550 cumulative loss of the stream we receive (may dip below 0 with duplicates). */
  lost: number;
  jitterMs: number;
  /** From the far end's report blocks; undefined until it has echoed one of our SRs. */
  rttMs: number | undefined;
  /** Our outbound stream as the far end sees it (its RTCP report about us). */
  remote: { fractionLost: number; cumulativeLost: number; jitterMs: number } | undefined;
  /** Frames made up by the decoder's concealment. */
  concealedFrames: number;
  /** Packets that came after their playout slot. */
  lateFrames: number;
  /** Packets the jitter buffer dropped (overflow, or cut to bring the delay down). */
  droppedFrames: number;
  /** Decoded frames the inbound consumer was too slow to take (oldest dropped). */
  inboundQueueDropped: number;
  /**
   * Datagrams the RTP I/O thread could not hand over because its ring was full (rtp-io/): inbound
   * ones are lost before the session sees them (and so also counted in `lost`, by their sequence
   * gap), outbound ones never leave. Always 0 with in-thread I/O.
   */
  ioDroppedInbound: number;
  ioDroppedOutbound: number;
  /**
   * Datagrams the source filter refused before decoding (strangers, and a NAT source's probation
   * packets; source-filter.ts). Once the lock is final the RTP socket is connected to that source
   * where that keeps its media (rtp-session.ts, aimRtp), and the kernel drops anyone else's
   * datagrams unseen: not counted.
   */
  droppedByFilter: number;
  /** Unparseable datagrams and payload types nobody negotiated. */
  malformed: number;
  unknownPayloadType: number;
  framesDelivered: number;
  /** Of those, silence inserted because nothing was there to play. */
  silenceFramesDelivered: number;
  jitterBufferDelayMs: number;
  /** Outbound frames dropped by flush(), hold or an overfull queue. */
  outboundFramesDropped: number;
  /** Outbound slots skipped because the event loop stalled. */
  outboundSkippedSlots: number;
  outboundMaxLateMs: number;
  dtmfReceived: number;
  dtmfSent: number;
  /** Whether the call's audio packets are taken from the I/O thread's ring in C now (native/rtp-udp/fast_drain.c). */
  inboundNative: boolean;
  /** The SRTP suite when the call is secured (RFC 4568 SDES), undefined for plain RTP. */
  srtp?: string;
  /** SRTP/SRTCP packets dropped because they failed authentication (forged, corrupted, wrong key). */
  srtpAuthFailed?: number;
  /** Of srtpAuthFailed, the SRTCP ones. */
  srtcpAuthFailed?: number;
  /** SRTP/SRTCP packets dropped as replays (or too old for the 64-packet window). */
  srtpReplayed?: number;
}
