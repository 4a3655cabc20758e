/**
 * An INVITE waiting for the application's answer: ringing(), progress(), reject(), accept() →
 * Dialog. A CANCEL from the caller answers the INVITE with 487 and emits `cancel`.
 *
 * When the INVITE says `Supported: 100rel` or `Require: 100rel`, provisional responses go out
 * reliably (RFC 3262; the rules live in reliable-provisionals.ts): each carries RSeq and
 * `Require: 100rel`, is resent until the caller's PRACK, and a 2xx waits for the PRACK of a
 * provisional that carried SDP. No PRACK within 64*T1 answers the INVITE with 500 and emits
 * `prackTimeout` (the dialog, if accept() already made one, ends with reason `prack-timeout`).
 */
import { randomInt } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import type { Timer } from '../util/clock.ts';
import { Dialog } from './dialog.ts';
import { allowedMethods, dialogId, uasAddressing } from './dialog-requests.ts';
import type { UasSessionDecision } from './dialog-session-timer.ts';
import { header, headers, type SipHeader, type SipRequest, type SipResponse } from './message.ts';
import { lists100rel, parseRAck, ReliableProvisionals, type ReliableAction } from './reliable-provisionals.ts';
import type { ServerTransaction } from './transaction-layer.ts';
import type { ServerInviteTransaction } from './transaction-server.ts';
import { cseqOf, tagOf } from './transaction-headers.ts';
import { buildResponse } from './transaction-response.ts';
import type { Source } from './transaction-types.ts';
import { UA_ALLOW, UA_SUPPORTED, type UaContext } from './user-agent-context.ts';

export type IncomingInviteState = 'pending' | 'accepted' | 'rejected' | 'cancelled';

export interface IncomingInviteEvents {
  cancel: () => void;
  /** A reliable provisional went unacknowledged for 64*T1; the INVITE got 500. */
  prackTimeout: () => void;
}

export class IncomingInvite extends EventEmitter<IncomingInviteEvents> {
  state: IncomingInviteState = 'pending';
  readonly toTag: string;
  /** Set when the caller supports or requires 100rel. */
  private readonly reliable: ReliableProvisionals | undefined;
  private wake: Timer | undefined;
  /** accept() ran while an SDP-carrying reliable provisional awaited its PRACK: the 2xx waits. */
  private deferred: { res: SipResponse; dialog: Dialog } | undefined;

  constructor(
    private readonly ua: UaContext,
    readonly request: SipRequest,
    readonly tx: ServerInviteTransaction,
    readonly source: Source,
    private readonly sessionTimer: UasSessionDecision,
  ) {
    super();
    this.toTag = ua.newTag();
    if (lists100rel([...headers(request, 'supported'), ...headers(request, 'require')])) {
      this.reliable = new ReliableProvisionals({ t1Ms: ua.timers.t1Ms, inviteCseq: cseqOf(request)?.seq ?? 0, firstRSeq: randomInt(1, 0x40000000) });
      ua.earlyDialogs.set(this.earlyId, this);
    }
  }

  /** Whether provisional responses go out reliably (RFC 3262). */
  get reliableProvisionals(): boolean {
    return this.reliable !== undefined;
  }

  /** The early dialog's id on our side (Call-ID; our To-tag; their From-tag). */
  get earlyId(): string {
    return dialogId(this.callId, this.toTag, tagOf(this.from) ?? '');
  }

  get offer(): string | undefined {
    return this.request.body.length > 0 ? this.request.body.toString('utf8') : undefined;
  }

  get callId(): string {
    return header(this.request, 'call-id') ?? '';
  }

  get from(): string | undefined {
    return header(this.request, 'from');
  }

  get to(): string | undefined {
    return header(this.request, 'to');
  }

  ringing(extraHeaders: SipHeader[] = []): void {
    this.provisional(180, extraHeaders);
  }

  /** 183 with early media SDP; reliable (RFC 3262) when the caller supports 100rel. */
  progress(sdp: string, extraHeaders: SipHeader[] = []): void {
    this.provisional(183, [...extraHeaders, { name: 'content-type', value: 'application/sdp' }], Buffer.from(sdp));
  }

  private provisional(status: number, hdrs: SipHeader[], body?: Buffer): void {
    if (this.state !== 'pending') return;
    const headers: SipHeader[] = [{ name: 'contact', value: this.ua.contactFor(this.source.transport, schemeOf(this.request.uri), this.source.address) }];
    const reliable = this.reliable;
    const rseq = reliable?.claim();
    if (rseq !== undefined) {
      headers.push({ name: 'require', value: '100rel' }, { name: 'rseq', value: String(rseq) }, { name: 'allow', value: UA_ALLOW });
    }
    headers.push(...hdrs);
    const res = buildResponse(this.request, status, { toTag: this.toTag, headers, ...(body ? { body } : {}) });
    if (reliable && rseq !== undefined) this.run(reliable.send(res, rseq, this.ua.clock.monotonic()));
    else this.tx.respond(res);
  }

  /** A PRACK in our early dialog (routed here by the UA core while reliable provisionals are in play). */
  handlePrack(req: SipRequest, tx: ServerTransaction): void {
    const reliable = this.reliable;
    if (!reliable) {
      tx.respond(buildResponse(req, 481));
      return;
    }
    const { status, actions } = reliable.prack(parseRAck(header(req, 'rack')), this.ua.clock.monotonic());
    tx.respond(buildResponse(req, status));
    this.run(actions);
    const held = this.deferred;
    if (held && reliable.mayAnswer) {
      this.deferred = undefined;
      this.send2xx(held.res, held.dialog);
    }
  }

  private run(actions: ReliableAction[]): void {
    for (const a of actions) {
      if (a.type === 'send') this.tx.respond(a.response);
      else this.prackTimedOut();
    }
    this.arm();
  }

  private arm(): void {
    this.wake?.cancel();
    this.wake = undefined;
    const at = this.reliable?.wakeAtMs;
    if (at === undefined) return;
    const clock = this.ua.clock;
    this.wake = clock.setTimeout(() => {
      this.wake = undefined;
      if (this.reliable) this.run(this.reliable.tick(clock.monotonic()));
    }, Math.max(0, at - clock.monotonic()));
  }

  private prackTimedOut(): void {
    const held = this.deferred;
    this.deferred = undefined;
    this.stopReliable();
    if (this.state === 'pending') this.finish('rejected');
    this.tx.respond(buildResponse(this.request, 500, { toTag: this.toTag, reason: 'Reliable Provisional Not Acknowledged' }));
    held?.dialog.abandon('prack-timeout');
    this.emit('prackTimeout');
  }

  private stopReliable(): void {
    this.reliable?.finish();
    this.wake?.cancel();
    this.wake = undefined;
    if (this.ua.earlyDialogs.get(this.earlyId) === this) this.ua.earlyDialogs.delete(this.earlyId);
  }

  reject(status: number, reason?: string, extraHeaders: SipHeader[] = []): void {
    if (this.state !== 'pending') return;
    if (status < 300 || status > 699) throw new RangeError(`reject needs a 3xx-6xx status, got ${status}`);
    this.finish('rejected');
    this.stopReliable();
    this.tx.respond(buildResponse(this.request, status, { toTag: this.toTag, headers: extraHeaders, ...(reason ? { reason } : {}) }));
  }

  /** Sends 200 OK with the answer and returns the confirmed dialog; it resends the 2xx until ACK. */
  accept(sdpAnswer: string, extraHeaders: SipHeader[] = []): Dialog {
    if (this.state !== 'pending') throw new Error(`cannot accept an INVITE that is ${this.state}`);
    this.finish('accepted');
    const contact = this.ua.contactFor(this.source.transport, schemeOf(this.request.uri), this.source.address);
    const hdrs: SipHeader[] = [
      { name: 'contact', value: contact },
      { name: 'allow', value: UA_ALLOW },
      { name: 'supported', value: UA_SUPPORTED },
    ];
    if (this.sessionTimer.kind === 'use') hdrs.push(...this.sessionTimer.headers);
    hdrs.push(...extraHeaders, { name: 'content-type', value: 'application/sdp' });
    const res = buildResponse(this.request, 200, { toTag: this.toTag, headers: hdrs, body: Buffer.from(sdpAnswer) });
    const dialog = new Dialog(this.ua, {
      role: 'uas',
      addressing: uasAddressing(this.request, this.toTag, contact),
      localSeq: 0,
      remoteSeq: cseqOf(this.request)?.seq,
      localSdp: sdpAnswer,
      remoteSdp: this.offer,
      remoteAllow: allowedMethods(this.request),
    });
    this.ua.addDialog(dialog);
    // RFC 3262 §3: a 2xx never overtakes an unacknowledged reliable provisional that carried SDP.
    if (this.reliable && !this.reliable.mayAnswer) this.deferred = { res, dialog };
    else this.send2xx(res, dialog);
    return dialog;
  }

  private send2xx(res: SipResponse, dialog: Dialog): void {
    this.stopReliable();
    if (dialog.isEnded) return;
    this.tx.respond(res);
    dialog.await2xxAck(res, this.tx.responseDest);
    if (this.sessionTimer.kind === 'use') dialog.armSessionTimer(this.sessionTimer.deltaSec, this.sessionTimer.weRefresh);
  }

  /** Called by the UA core when a matching CANCEL arrived (§9.2). */
  cancelledByPeer(): void {
    if (this.state !== 'pending') return;
    this.finish('cancelled');
    this.stopReliable();
    this.tx.respond(buildResponse(this.request, 487, { toTag: this.toTag }));
    this.emit('cancel');
  }

  /** UA shutdown: stops resending without answering. */
  close(): void {
    this.deferred = undefined;
    this.stopReliable();
  }

  private finish(state: IncomingInviteState): void {
    this.state = state;
    this.ua.pendingIncoming.delete(this.tx);
  }
}

/** The scheme our Contact takes for a request to `uri`. */
function schemeOf(uri: string): 'sip' | 'sips' {
  return /^sips:/i.test(uri) ? 'sips' : 'sip';
}
