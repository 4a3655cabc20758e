/**
 * One call: owns its dialog, its RtpSession and its timers (ARCHITECTURE.md §6). The engine (AI
 * pipeline, or the diagnostics echo) plugs into the media seam — `inbound`, `outbound`,
 * `sendDtmf` — and never touches sockets or SIP.
 *
 * A session is created once the call is authorised and admitted, while it still rings: the
 * flow that created it (inbound-calls.ts, outbound-dialer.ts) sets `cancelPending` to stop the
 * ringing leg, then calls `answered()` with the confirmed dialog. `close(cause)` is idempotent
 * from any state and releases everything; the end is written to the call record before `ended`.
 *
 * Outbound calls may have media before the answer (`earlyMedia()`, docs/EARLY-MEDIA.md): it
 * runs on the same RtpSession the answer then keeps, its audio goes to a pre-roll for voicemail
 * detection (`takeEarlyAudio()`), and a Special Information Tone in it ends the call.
 */
import { EventEmitter } from 'eventemitter3';
import type { Logger } from 'pino';
import type { AudioFrame } from '../audio/frame.ts';
import type { DtmfSendOptions, OutboundAudio, RtpSessionStats } from '../media/media-types.ts';
import type { SessionMedia } from './session-media.ts';
import { answerOffer, type LocalMedia, type NegotiatedMedia } from '../media/sdp-negotiate.ts';
import type { SdpSession } from '../media/sdp-write.ts';
import { SdpNegotiationError } from '../media/sdp.ts';
import type { Dialog, DialogEndReason, IncomingReinvite } from '../sip/dialog.ts';
import type { Clock, Timer } from '../util/clock.ts';
import { statusFor, type CallRecorder } from './call-record.ts';
import { callCostMicros } from './post-call/billing.ts';
import { toDollars } from '../util/money.ts';
import { sendDtmfInfo } from './dtmf-info-sender.ts';
import { endCauseOf, type CallFailure } from './failures.ts';
import { EarlyAudio } from './early-media/early-audio.ts';
import { sameMedia } from './early-media/same-media.ts';
import type { SitEvent } from './early-media/sit-detector.ts';

/** `web`: a call from a browser over WebRTC (src/webrtc), no SIP dialog. */
export type CallDirection = 'inbound' | 'outbound' | 'web';
export type CallState = 'ringing' | 'active' | 'ended';

/** Why a call ended; the record's `end_cause`. */
export type EndCause =
  | 'remote-hangup'
  | 'local-hangup'
  | 'max-duration'
  | 'rtp-timeout'
  | 'session-expired'
  | 'ack-timeout'
  | 'cancelled'
  | 'no-answer'
  | 'busy'
  | 'declined'
  | 'invalid-number'
  /** A Special Information Tone for a number problem (intercept, vacant code) in early media. */
  | 'operator-intercept'
  /** A Special Information Tone for a network problem (no circuit, reorder) in early media. */
  | 'network-congestion'
  | 'failed'
  /** A call placed to an IPv6 carrier with no SIP_PUBLIC_HOST6 to name in its SDP and Contact. */
  | 'no-public-ipv6'
  | 'shutdown'
  | 'error';

/** What ran the call: the assistant's mode, the diagnostics numbers, or nothing (no assistant). */
export type CallMode = 'pipeline' | 'multimodal' | 'dualplex' | 'diagnostic' | 'none';

/** How a call ended, for the logs and /metrics (src/telemetry/call-metrics.ts). */
export interface CallEnd {
  cause: EndCause;
  /** The record's final status (statusFor: completed, failed, no-answer, busy, canceled, ...). */
  status: string;
  answered: boolean;
  /** From the INVITE (received or sent) to the answer; undefined when never answered. */
  setupMs: number | undefined;
  /** From the answer to the end; 0 when never answered. */
  durationMs: number;
  /** The media's figures at the end, when the call was answered. */
  stats: RtpSessionStats | undefined;
}

/** Who and where, for the call's `call started` log line. */
export interface CallFacts {
  from: string;
  to: string;
  /** The sip_trunks id. */
  trunk: number | string | null;
  /** The far end's signalling address (inbound: the INVITE's source; outbound: the trunk). */
  remote: string;
  /** The codecs on offer, in preference order (inbound: the caller's; outbound: ours); the answer picks one. */
  codecs?: readonly string[];
}

export interface CallSessionEvents {
  answered: () => void;
  ended: (info: CallEnd) => void;
  dtmf: (event: { digit: string; durationMs: number }) => void;
  /** Hold/unhold or codec change took effect. */
  mediaUpdated: (media: NegotiatedMedia) => void;
  /** Outbound: a 18x with SDP started media before the answer (again for each new early SDP). */
  earlyMedia: (media: NegotiatedMedia) => void;
  /** Outbound: a Special Information Tone in early media; the call ends with its cause. */
  sit: (event: SitEvent) => void;
}

export interface CallSessionInit {
  recordId: number;
  uuid: string;
  direction: CallDirection;
  accountId: number;
  /** Registry key of the trunk (its inbound id). */
  trunkKey: string;
  assistantId: number | undefined;
  media: SessionMedia;
  clock: Clock;
  logger: Logger;
  recorder: CallRecorder;
  /** Hard limit from answer to BYE. */
  maxDurationMs: number;
  /** The metrics' `mode` label and the logs' (default 'none'). */
  mode?: CallMode;
  facts?: CallFacts;
  /** When the INVITE arrived (clock.monotonic()); default: when the session was made. */
  inviteAtMs?: number;
}

export class CallSession extends EventEmitter<CallSessionEvents> {
  readonly recordId: number;
  readonly uuid: string;
  readonly direction: CallDirection;
  readonly accountId: number;
  readonly trunkKey: string;
  readonly assistantId: number | undefined;
  readonly media: SessionMedia;
  readonly mode: CallMode;
  /** Who and where (the `call started` facts), when the creator gave them. */
  readonly facts: CallFacts | undefined;
  /** Every line about this call carries its uuid (`call`): log through this or a child of it. */
  readonly log: Logger;
  state: CallState = 'ringing';
  endCause: EndCause | undefined;
  /** The provider failure that ended the call (its record is then `failed` with this as `end_cause`). */
  failure: CallFailure | undefined;
  /** Stops the ringing leg (reject/CANCEL); set by the flow that created the session. */
  cancelPending: ((cause: EndCause) => void) | undefined;
  /** Resolves once the call has ended and its record is written. */
  readonly done: Promise<{ cause: EndCause }>;
  private dialog: Dialog | undefined;
  private negotiated: NegotiatedMedia | undefined;
  private local: LocalMedia | undefined;
  private sdp: SdpSession | undefined;
  private maxTimer: Timer | undefined;
  /** Pending record writes (ringing, answer); the end's write waits for them so it is never overtaken. */
  private answerWrite: Promise<void> = Promise.resolve();
  private closing: Promise<void> | undefined;
  /** Our BYE's transaction (answered, timed out or cut by the UA closing); resolved when none was sent. */
  private byeSent: Promise<unknown> = Promise.resolve();
  private resolveDone!: (v: { cause: EndCause }) => void;
  private readonly init: CallSessionInit;
  private readonly dtmfLog: Array<{ digit: string; durationMs: number; atMs: number }> = [];
  private readonly inviteAtMs: number;
  private answeredAtMs: number | undefined;
  /** Media started by early media (18x with SDP), before any answer. */
  private earlyMediaStarted = false;
  private early: EarlyAudio | undefined;

  constructor(init: CallSessionInit) {
    super();
    this.init = init;
    this.recordId = init.recordId;
    this.uuid = init.uuid;
    this.direction = init.direction;
    this.accountId = init.accountId;
    this.trunkKey = init.trunkKey;
    this.assistantId = init.assistantId;
    this.media = init.media;
    this.mode = init.mode ?? 'none';
    this.log = init.logger.child({ call: init.uuid });
    this.inviteAtMs = init.inviteAtMs ?? init.clock.monotonic();
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    const facts = init.facts;
    this.facts = facts;
    this.log.info(
      {
        direction: init.direction,
        ...(facts ? { from: facts.from, to: facts.to, trunk: facts.trunk, remote: facts.remote, ...(facts.codecs ? { codecs: facts.codecs } : {}) } : { trunk: init.trunkKey }),
        assistant: init.assistantId ?? null,
        mode: this.mode,
      },
      'call started',
    );
    // Media events are lifecycle only; audio stays on the iterables.
    this.media.on('dtmf', (e) => {
      this.dtmfLog.push({ ...e, atMs: init.clock.now() });
      this.emit('dtmf', e);
    });
    this.media.on('rtpTimeout', ({ silentMs }) => {
      // Early media may fall silent (ringback played by the phone, a carrier's silence
      // suppression): while ringing, the ringing timeout decides, not the media's.
      if (this.state === 'ringing') return;
      this.log.info({ silentMs }, 'no RTP from the far end: hanging up');
      void this.close('rtp-timeout');
    });
    this.media.on('error', (err) => this.log.warn({ err: err.message }, 'media error'));
    this.media.on('failed', (err) => {
      this.log.error({ err: err.message }, 'media failed: ending the call');
      void this.close('error');
    });
  }

  /** Caller audio: one 16 kHz frame per 20 ms from answer to end. */
  get inbound(): AsyncIterable<AudioFrame> {
    return this.media.inbound;
  }

  /** Audio towards the caller (write / writeStream / flush for barge-in). */
  get outbound(): OutboundAudio {
    return this.media.outbound;
  }

  /**
   * Keys towards the far end: RFC 4733 when it negotiated telephone-event, else SIP INFO
   * (application/dtmf-relay) in the dialog.
   */
  sendDtmf(digits: string, opts?: DtmfSendOptions): Promise<void> {
    if (this.negotiated && this.negotiated.dtmfPayloadType === undefined && this.dialog && !this.dialog.isEnded) {
      return sendDtmfInfo(this.dialog, digits, this.init.clock, opts);
    }
    return this.media.sendDtmf(digits, opts);
  }

  stats(): RtpSessionStats {
    return this.media.stats();
  }

  /** The confirmed dialog (REFER and other in-dialog requests of call control); undefined while ringing. */
  get sipDialog(): Dialog | undefined {
    return this.dialog;
  }

  /**
   * Outbound early media (RFC 3960 gateway model): a 18x carried SDP, so media runs from now.
   * We receive; we send only comfort silence (where the direction lets us send, which keeps a
   * NAT binding open and lets a carrier's SBC latch on us): nobody writes to `outbound` before
   * the answer, since the engine only starts then. Caller frames go to the early-audio
   * pre-roll (early-audio.ts), not to `inbound`. A later 18x with other SDP (a fork, a new
   * announcement server) re-points the same ports.
   */
  earlyMedia(negotiated: NegotiatedMedia): void {
    if (this.state !== 'ringing') return;
    if (!this.earlyMediaStarted) {
      this.earlyMediaStarted = true;
      const early = new EarlyAudio();
      this.early = early;
      this.media.divertInbound((frame) => {
        const sit = early.push(frame);
        if (sit) this.onSit(sit);
      });
      this.media.start(negotiated);
    } else if (this.negotiated && !sameMedia(this.negotiated, negotiated)) {
      this.media.update(negotiated);
    } else {
      return;
    }
    this.negotiated = negotiated;
    this.emit('earlyMedia', negotiated);
  }

  /**
   * What the callee's side played before the answer (at most EARLY_PREROLL_MS, call-progress tones
   * silenced), for answering-machine detection; once, empty without early media.
   */
  takeEarlyAudio(): AudioFrame[] {
    return this.early?.preroll() ?? [];
  }

  /** Figures of the early media (undefined when there was none). */
  get earlyAudioStats(): EarlyAudio['stats'] | undefined {
    return this.early?.stats;
  }

  private onSit(sit: SitEvent): void {
    if (this.state !== 'ringing') return;
    const cause: EndCause = sit.class === 'intercept' ? 'operator-intercept' : 'network-congestion';
    this.log.info({ sit }, 'special information tone in early media: ending the call');
    this.emit('sit', sit);
    void this.close(cause);
  }

  /**
   * The dialog is confirmed and media negotiated: start media (or keep the early media's, re-pointed
   * when the answer differs from the early SDP), arm the hard limit.
   */
  answered(dialog: Dialog, negotiated: NegotiatedMedia, local: LocalMedia, sdp: SdpSession): void {
    if (this.state !== 'ringing') {
      void dialog.bye();
      return;
    }
    this.state = 'active';
    this.dialog = dialog;
    this.local = local;
    this.sdp = sdp;
    this.cancelPending = undefined;
    const early = this.earlyMediaStarted ? this.negotiated : undefined;
    this.negotiated = negotiated;
    if (!early) {
      this.media.start(negotiated);
    } else {
      // Frames from here on are the answered call's; the socket, jitter buffer and clocks go on.
      this.media.divertInbound(undefined);
      if (sameMedia(early, negotiated)) this.media.restartTimeout();
      else this.media.update(negotiated);
    }
    dialog.on('ended', ({ reason }) => void this.close(causeOf(reason)));
    // Keys in SIP INFO join the RFC 4733 and in-band ones on the media's `dtmf` event.
    dialog.on('dtmf', ({ digit, durationMs }) => this.media.signalledDtmf(digit, durationMs));
    dialog.on('reinvite', (inc) => this.onReinvite(inc));
    this.maxTimer = this.init.clock.setTimeout(() => void this.close('max-duration'), this.init.maxDurationMs);
    this.write(() => this.init.recorder.answered(this.recordId, negotiated.codec.name));
    this.answeredAtMs = this.init.clock.monotonic();
    this.log.info(
      {
        codec: negotiated.codec.name,
        media: `${negotiated.remote.address}:${negotiated.remote.port}`,
        srtp: negotiated.srtp !== undefined,
        setupMs: Math.round(this.answeredAtMs - this.inviteAtMs),
      },
      'call answered',
    );
    this.emit('answered');
  }

  /**
   * A call without SIP (a browser's, src/webrtc): its media is up (ICE and DTLS connected, the
   * media started itself), so the call is active from now, with the same hard limit, record
   * and `answered` event as a SIP call's answer.
   */
  connected(codec: string): void {
    if (this.state !== 'ringing') return;
    this.state = 'active';
    this.cancelPending = undefined;
    this.maxTimer = this.init.clock.setTimeout(() => void this.close('max-duration'), this.init.maxDurationMs);
    this.write(() => this.init.recorder.answered(this.recordId, codec));
    this.answeredAtMs = this.init.clock.monotonic();
    this.log.info({ codec, setupMs: Math.round(this.answeredAtMs - this.inviteAtMs) }, 'call answered');
    this.emit('answered');
  }

  /** The far end is ringing (outbound: first 180/183). */
  markRinging(): void {
    if (this.state === 'ringing') this.write(() => this.init.recorder.status(this.recordId, 'ringing'));
  }

  /** Settles once the record writes queued so far (ringing, answer) are done: readers then see them. */
  get recordWritten(): Promise<void> {
    return this.answerWrite;
  }

  /** Record writes in order; a failed one is logged, never thrown at the call. */
  private write(fn: () => Promise<void>): void {
    this.answerWrite = this.answerWrite.then(fn).catch((err: unknown) => {
      this.log.error({ err: (err as Error).message }, 'could not update the call record');
    });
  }

  /**
   * Settles once the BYE this call sent has its answer or its transaction gave up (Timer F, 32 s
   * on UDP when the peer never answers); at once when none was sent. A drain waits for it, bounded.
   */
  get byeSettled(): Promise<void> {
    return this.byeSent.then(() => undefined);
  }

  /**
   * An engine's provider failed. Logged as a warning with the call's uuid, provider and reason
   * (never the error's message, which may echo a key); a `fatal` one (the call ends because of
   * it) is kept for the record, the first one winning.
   */
  reportFailure(failure: CallFailure, fatal: boolean): void {
    const fields = { call: this.uuid, kind: failure.kind, provider: failure.provider, reason: failure.reason };
    if (fatal) {
      this.init.logger.warn(fields, `provider failure: ${endCauseOf(failure)}; apologising and ending the call`);
      if (this.state !== 'ended') this.failure ??= failure;
    } else {
      this.init.logger.warn(fields, `provider failure: ${endCauseOf(failure)}; apologised, the call goes on`);
    }
  }

  /** Hang up (BYE when answered, reject/CANCEL while ringing). */
  hangup(): Promise<void> {
    return this.close('local-hangup');
  }

  /** Ends the call once, whatever state it is in, and writes the record. Idempotent. */
  close(cause: EndCause = 'local-hangup'): Promise<void> {
    this.closing ??= this.shutdown(cause);
    return this.closing;
  }

  private async shutdown(cause: EndCause): Promise<void> {
    const wasActive = this.state === 'active';
    this.state = 'ended';
    this.endCause = cause;
    this.maxTimer?.cancel();
    if (!wasActive) this.cancelPending?.(cause);
    this.cancelPending = undefined;
    const dialog = this.dialog;
    // The dialog may already be over (their BYE, ACK timeout): then there is no one to tell.
    if (dialog && !dialog.isEnded) this.byeSent = dialog.bye();
    dialog?.removeAllListeners();
    const stats = wasActive ? this.media.stats() : undefined;
    const endedAtMs = this.init.clock.monotonic();
    this.media.divertInbound(undefined);
    this.early?.preroll(); // nobody will ask for it now: let its frames go
    await this.media.close(cause);
    await this.answerWrite;
    try {
      await this.init.recorder.ended(this.recordId, { answered: wasActive, cause, stats, dtmf: this.dtmfLog, failure: this.failure });
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'could not write the call record');
    }
    const end: CallEnd = {
      cause,
      status: statusFor({ answered: wasActive, cause }),
      answered: wasActive,
      setupMs: this.answeredAtMs === undefined ? undefined : this.answeredAtMs - this.inviteAtMs,
      durationMs: this.answeredAtMs === undefined ? 0 : Math.max(0, endedAtMs - this.answeredAtMs),
      stats,
    };
    this.log.info(
      {
        cause,
        status: end.status,
        durationS: Math.round(end.durationMs) / 1000,
        // The price list's charge for this length (post-call billing books it in the ledger).
        costUsd: toDollars(wasActive ? callCostMicros(0, end.durationMs) : 0),
        ...(stats ? { codec: stats.codec, packetsReceived: stats.packetsReceived, packetsLost: stats.lost, jitterMs: Math.round(stats.jitterMs * 10) / 10 } : {}),
      },
      'call ended',
    );
    this.emit('ended', end);
    this.removeAllListeners();
    this.resolveDone({ cause });
  }

  /** Hold/unhold and codec changes: answer the new offer with our same ports. */
  private onReinvite(inc: IncomingReinvite): void {
    if (inc.offer === undefined || !this.local || !this.sdp) {
      inc.accept();
      return;
    }
    try {
      const current = this.media.negotiatedSrtp;
      const result = answerOffer(inc.offer, current ? { ...this.local, currentSrtp: current } : this.local, this.sdp);
      this.sdp = result.session;
      this.media.update(result);
      this.negotiated = result;
      inc.accept(result.answerSdp);
      this.emit('mediaUpdated', result);
    } catch (err) {
      if (err instanceof SdpNegotiationError) inc.reject(err.sipStatus);
      else inc.reject(500);
    }
  }
}

function causeOf(reason: DialogEndReason): EndCause {
  switch (reason) {
    case 'remote-bye':
      return 'remote-hangup';
    case 'local-bye':
      return 'local-hangup';
    case 'ack-timeout':
      return 'ack-timeout';
    case 'session-expired':
      return 'session-expired';
    case 'prack-timeout':
      return 'failed';
    case 'closed':
      return 'shutdown';
  }
}
