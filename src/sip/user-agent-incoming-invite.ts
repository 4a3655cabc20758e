/**
 * An INVITE waiting for the application's answer: ringing(), reject(), accept() → Dialog.
 * A CANCEL from the caller answers the INVITE with 487 and emits `cancel`.
 */
import { EventEmitter } from 'eventemitter3';
import { Dialog } from './dialog.ts';
import { allowedMethods, uasAddressing } from './dialog-requests.ts';
import type { UasSessionDecision } from './dialog-session-timer.ts';
import { header, type SipHeader, type SipRequest } from './message.ts';
import type { ServerInviteTransaction } from './transaction-server.ts';
import { cseqOf } from './transaction-headers.ts';
import { buildResponse } from './transaction-response.ts';
import type { Source } from './transaction-types.ts';
import { UA_ALLOW, UA_SUPPORTED, type UaContext } from './user-agent-context.ts';

export type IncomingInviteState = 'pending' | 'accepted' | 'rejected' | 'cancelled';

export interface IncomingInviteEvents {
  cancel: () => void;
}

export class IncomingInvite extends EventEmitter<IncomingInviteEvents> {
  state: IncomingInviteState = 'pending';
  readonly toTag: string;

  constructor(
    private readonly ua: UaContext,
    readonly request: SipRequest,
    readonly tx: ServerInviteTransaction,
    readonly source: Source,
    private readonly sessionTimer: UasSessionDecision,
  ) {
    super();
    this.toTag = ua.newTag();
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

  /** 183 with early media SDP (no reliable provisionals / PRACK). */
  progress(sdp: string, extraHeaders: SipHeader[] = []): void {
    this.provisional(183, [...extraHeaders, { name: 'content-type', value: 'application/sdp' }], Buffer.from(sdp));
  }

  private provisional(status: number, hdrs: SipHeader[], body?: Buffer): void {
    if (this.state !== 'pending') return;
    const headers = [{ name: 'contact', value: this.ua.contactFor(this.source.transport, schemeOf(this.request.uri)) }, ...hdrs];
    this.tx.respond(buildResponse(this.request, status, { toTag: this.toTag, headers, ...(body ? { body } : {}) }));
  }

  reject(status: number, reason?: string, extraHeaders: SipHeader[] = []): void {
    if (this.state !== 'pending') return;
    if (status < 300 || status > 699) throw new RangeError(`reject needs a 3xx-6xx status, got ${status}`);
    this.finish('rejected');
    this.tx.respond(buildResponse(this.request, status, { toTag: this.toTag, headers: extraHeaders, ...(reason ? { reason } : {}) }));
  }

  /** Sends 200 OK with the answer and returns the confirmed dialog; it resends the 2xx until ACK. */
  accept(sdpAnswer: string, extraHeaders: SipHeader[] = []): Dialog {
    if (this.state !== 'pending') throw new Error(`cannot accept an INVITE that is ${this.state}`);
    this.finish('accepted');
    const contact = this.ua.contactFor(this.source.transport, schemeOf(this.request.uri));
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
    this.tx.respond(res);
    dialog.await2xxAck(res, this.tx.responseDest);
    if (this.sessionTimer.kind === 'use') dialog.armSessionTimer(this.sessionTimer.deltaSec, this.sessionTimer.weRefresh);
    return dialog;
  }

  /** Called by the UA core when a matching CANCEL arrived (§9.2). */
  cancelledByPeer(): void {
    if (this.state !== 'pending') return;
    this.finish('cancelled');
    this.tx.respond(buildResponse(this.request, 487, { toTag: this.toTag }));
    this.emit('cancel');
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
