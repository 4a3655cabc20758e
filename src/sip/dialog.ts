/**
 * One INVITE dialog (RFC 3261 §12–§15): identifiers, CSeq spaces, remote target and route set;
 * in-dialog requests (BYE, re-INVITE, UPDATE, INFO, ACK for 2xx); UAS 2xx retransmission; and
 * RFC 4028 session timers. Sockets and transactions stay behind `DialogHost`.
 */
import { EventEmitter } from 'eventemitter3';
import type { Clock } from '../util/clock.ts';
import { header, type SipHeader, type SipRequest, type SipResponse } from './message.ts';
import { Dialog2xxRetransmitter } from './dialog-2xx-retransmitter.ts';
import { buildInDialogRequest, contactUri, dialogId, type DialogAddressing } from './dialog-requests.ts';
import { negotiateAsUac, negotiateAsUas, SessionTimer } from './dialog-session-timer.ts';
import { mediaType } from './header-values.ts';
import { INFO_DTMF_TYPES, parseInfoDtmf } from './info-dtmf.ts';
import type { ServerTransaction } from './transaction-layer.ts';
import { cseqOf } from './transaction-headers.ts';
import { buildResponse } from './transaction-response.ts';
import type { Destination, TimerConfig } from './transaction-types.ts';

export interface DialogHost {
  readonly clock: Clock;
  readonly timers: TimerConfig;
  /** Our Min-SE in seconds (RFC 4028 §5); refreshes below it are refused with 422. */
  readonly minSeSec: number;
  /** Sends an in-dialog request in a new client transaction; resolves with the final response. */
  sendRequest(req: SipRequest): Promise<SipResponse>;
  /** Sends an ACK for a 2xx outside any transaction (adds a Via once, so resends are identical). */
  sendAck(ack: SipRequest): void;
  /** Sends a response outside its transaction (2xx retransmissions). */
  sendResponse(res: SipResponse, dest: Destination): void;
  dialogEnded(dialog: Dialog): void;
}

export type DialogEndReason = 'local-bye' | 'remote-bye' | 'ack-timeout' | 'session-expired' | 'prack-timeout' | 'closed';

export interface IncomingReinvite {
  request: SipRequest;
  offer: string | undefined;
  accept(sdpAnswer?: string): void;
  reject(status: number, reason?: string): void;
}

export interface DialogEvents {
  ended: (info: { reason: DialogEndReason }) => void;
  /** Without a listener a re-INVITE is accepted with the current local SDP. */
  reinvite: (incoming: IncomingReinvite) => void;
  /** An INFO we answered 200 (DTMF ones also emit `dtmf`). */
  info: (req: SipRequest) => void;
  /** A key press signalled in INFO (application/dtmf-relay or application/dtmf). */
  dtmf: (event: { digit: string; durationMs: number }) => void;
  /** The ACK for our 2xx arrived (UAS). */
  confirmed: () => void;
  /**
   * Any other in-dialog request (REFER, NOTIFY of a transfer, MESSAGE). Without a listener it is
   * refused with 405; a listener must call `respond` exactly once.
   */
  request: (req: SipRequest, respond: (status: number, headers?: SipHeader[]) => void) => void;
}

export interface DialogInit {
  role: 'uac' | 'uas';
  addressing: DialogAddressing;
  localSeq: number;
  remoteSeq: number | undefined;
  localSdp: string | undefined;
  remoteSdp: string | undefined;
  /** Methods the peer said it allows (to pick UPDATE for refreshes). */
  remoteAllow: string[];
}

export class Dialog extends EventEmitter<DialogEvents> {
  readonly role: 'uac' | 'uas';
  state: 'confirmed' | 'terminated' = 'confirmed';
  localSdp: string | undefined;
  remoteSdp: string | undefined;
  private readonly addr: DialogAddressing;
  private localSeq: number;
  private remoteSeq: number | undefined;
  private readonly remoteAllow: string[];
  private readonly retransmitter: Dialog2xxRetransmitter;
  private readonly sessionTimer: SessionTimer;
  private lastAck: SipRequest | undefined;
  private outgoingInvite = false;

  constructor(private readonly host: DialogHost, init: DialogInit) {
    super();
    this.role = init.role;
    this.addr = init.addressing;
    this.localSeq = init.localSeq;
    this.remoteSeq = init.remoteSeq;
    this.localSdp = init.localSdp;
    this.remoteSdp = init.remoteSdp;
    this.remoteAllow = init.remoteAllow;
    this.retransmitter = new Dialog2xxRetransmitter(host.clock, host.timers, (r, d) => host.sendResponse(r, d), () => {
      this.terminateWithBye('ack-timeout');
    });
    this.sessionTimer = new SessionTimer(host.clock, {
      refresh: () => void this.refreshSession(),
      expire: () => this.terminateWithBye('session-expired'),
    });
  }

  get isEnded(): boolean {
    return this.state === 'terminated';
  }

  /** Dialog id as `Call-ID;local-tag;remote-tag`. */
  get id(): string {
    return dialogId(this.addr.callId, this.addr.localTag, this.addr.remoteTag);
  }

  get callId(): string {
    return this.addr.callId;
  }

  get localTag(): string {
    return this.addr.localTag;
  }

  get remoteTag(): string {
    return this.addr.remoteTag;
  }

  get remoteTarget(): string {
    return this.addr.remoteTarget;
  }

  get routeSet(): readonly string[] {
    return this.addr.routeSet;
  }

  get sessionExpires(): { deltaSec: number; weRefresh: boolean } | undefined {
    return this.sessionTimer.active;
  }

  /** UAS: after sending the 2xx to the initial INVITE, keep resending it until the ACK. */
  await2xxAck(res: SipResponse, dest: Destination): void {
    const cseq = cseqOf(res)?.seq;
    if (cseq !== undefined) this.retransmitter.start(res, dest, cseq);
  }

  /** UAC: ACK a 2xx to an INVITE this dialog (or the UA) sent. */
  ack(inviteCseq: number, extraHeaders: SipHeader[] = []): void {
    this.lastAck = buildInDialogRequest(this.addr, 'ACK', { cseq: inviteCseq, headers: extraHeaders });
    this.host.sendAck(this.lastAck);
  }

  /** UAC: a retransmitted 2xx means our ACK was lost; send the same ACK again. */
  receive2xxRetransmission(res: SipResponse): void {
    const seq = cseqOf(res)?.seq;
    if (this.lastAck && seq !== undefined && cseqOf(this.lastAck)?.seq === seq) this.host.sendAck(this.lastAck);
  }

  /** Starts RFC 4028 timing from a negotiated interval. */
  armSessionTimer(deltaSec: number, weRefresh: boolean): void {
    if (this.state !== 'terminated') this.sessionTimer.arm(deltaSec, weRefresh);
  }

  /** Sends a non-INVITE in-dialog request (INFO, UPDATE, OPTIONS, …). */
  request(method: string, opts: { headers?: SipHeader[]; body?: Buffer; contentType?: string } = {}): Promise<SipResponse> {
    if (this.state === 'terminated') return Promise.reject(new Error('dialog terminated'));
    const req = buildInDialogRequest(this.addr, method, { cseq: ++this.localSeq, ...opts });
    return this.host.sendRequest(req);
  }

  /** Ends the session: the dialog is over as soon as the BYE is sent (§15.1.1). */
  bye(): Promise<SipResponse | undefined> {
    if (this.state === 'terminated') return Promise.resolve(undefined);
    const req = buildInDialogRequest(this.addr, 'BYE', { cseq: ++this.localSeq });
    this.end('local-bye');
    return this.host.sendRequest(req).catch(() => undefined);
  }

  /** Sends a re-INVITE with a new offer; on 2xx the ACK is sent and the answer stored. */
  async reinvite(sdpOffer: string, extraHeaders: SipHeader[] = []): Promise<SipResponse> {
    if (this.state === 'terminated') throw new Error('dialog terminated');
    if (this.outgoingInvite) throw new Error('re-INVITE already pending');
    const cseq = ++this.localSeq;
    const hdrs = [...this.sessionHeaders(), ...extraHeaders];
    const req = buildInDialogRequest(this.addr, 'INVITE', { cseq, headers: hdrs, body: Buffer.from(sdpOffer) });
    this.outgoingInvite = true;
    try {
      const res = await this.host.sendRequest(req);
      if (res.status >= 200 && res.status < 300 && !this.isEnded) {
        this.ack(cseq);
        this.localSdp = sdpOffer;
        if (res.body.length > 0) this.remoteSdp = res.body.toString('utf8');
        this.updateTarget(header(res, 'contact'));
        this.applyUacSessionTimer(res);
      }
      return res;
    } finally {
      this.outgoingInvite = false;
    }
  }

  /** Entry point for every request the UA routed to this dialog. */
  handleRequest(req: SipRequest, tx: ServerTransaction | undefined): void {
    const cseq = cseqOf(req)?.seq ?? 0;
    if (req.method === 'ACK') {
      if (this.retransmitter.ack(cseq)) this.emit('confirmed');
      return;
    }
    if (!tx) return;
    if (this.state === 'terminated') {
      tx.respond(buildResponse(req, 481));
      return;
    }
    if (this.remoteSeq !== undefined && cseq <= this.remoteSeq) {
      tx.respond(buildResponse(req, 500, { reason: 'CSeq Out of Order' }));
      return;
    }
    this.remoteSeq = cseq;
    switch (req.method) {
      case 'BYE':
        tx.respond(buildResponse(req, 200));
        this.end('remote-bye');
        return;
      case 'INVITE':
        this.handleReinvite(req, tx);
        return;
      case 'UPDATE':
        this.handleUpdate(req, tx);
        return;
      case 'INFO':
        this.handleInfo(req, tx);
        return;
      case 'OPTIONS':
        tx.respond(buildResponse(req, 200));
        return;
      case 'PRACK':
        // RFC 3262 §3: every reliable provisional of this dialog is settled; nothing to match.
        tx.respond(buildResponse(req, 481));
        return;
      default:
        if (this.listenerCount('request') > 0) {
          let answered = false;
          this.emit('request', req, (status, headers = []) => {
            if (answered) return;
            answered = true;
            tx.respond(buildResponse(req, status, { headers }));
          });
          return;
        }
        tx.respond(buildResponse(req, 405, { headers: [{ name: 'allow', value: DIALOG_ALLOW }] }));
    }
  }

  private handleReinvite(req: SipRequest, tx: ServerTransaction): void {
    // §14.2: glare with our own re-INVITE → 491; an unacknowledged 2xx of theirs → 500.
    if (this.outgoingInvite) {
      tx.respond(buildResponse(req, 491));
      return;
    }
    if (this.retransmitter.waiting) {
      tx.respond(buildResponse(req, 500, { headers: [{ name: 'retry-after', value: '1' }] }));
      return;
    }
    const st = negotiateAsUas(req, this.host.minSeSec);
    if (st.kind === 'too-small') {
      tx.respond(buildResponse(req, 422, { headers: [{ name: 'min-se', value: String(st.minSeSec) }] }));
      return;
    }
    let answered = false;
    const incoming: IncomingReinvite = {
      request: req,
      offer: req.body.length > 0 ? req.body.toString('utf8') : undefined,
      accept: (sdpAnswer) => {
        if (answered || this.state === 'terminated') return;
        answered = true;
        this.updateTarget(header(req, 'contact'));
        if (incoming.offer !== undefined) this.remoteSdp = incoming.offer;
        if (sdpAnswer !== undefined) this.localSdp = sdpAnswer;
        const body = this.localSdp === undefined ? undefined : Buffer.from(this.localSdp);
        const hdrs: SipHeader[] = [{ name: 'contact', value: this.addr.localContact }, { name: 'allow', value: DIALOG_ALLOW }];
        if (st.kind === 'use') hdrs.push(...st.headers);
        if (body) hdrs.push({ name: 'content-type', value: 'application/sdp' });
        const res = buildResponse(req, 200, { headers: hdrs, ...(body ? { body } : {}) });
        tx.respond(res);
        this.retransmitter.start(res, tx.responseDest, cseqOf(req)?.seq ?? 0);
        if (st.kind === 'use') this.sessionTimer.arm(st.deltaSec, st.weRefresh);
      },
      reject: (status, reason) => {
        if (answered) return;
        answered = true;
        tx.respond(buildResponse(req, status, reason === undefined ? {} : { reason }));
      },
    };
    if (this.listenerCount('reinvite') === 0) incoming.accept();
    else this.emit('reinvite', incoming);
  }

  /**
   * RFC 6086: we take no Info Package (469, with an empty Recv-Info); legacy INFO with a DTMF
   * body is a key press; an empty one is a keepalive (200); any other body is 415.
   */
  private handleInfo(req: SipRequest, tx: ServerTransaction): void {
    if (header(req, 'info-package') !== undefined) {
      tx.respond(buildResponse(req, 469, { reason: 'Bad Info Package', headers: [{ name: 'recv-info', value: '' }] }));
      return;
    }
    if (req.body.length === 0) {
      tx.respond(buildResponse(req, 200));
      this.emit('info', req);
      return;
    }
    const type = mediaType(header(req, 'content-type') ?? '') ?? '';
    if (!INFO_DTMF_TYPES.includes(type)) {
      tx.respond(buildResponse(req, 415, { headers: [{ name: 'accept', value: INFO_DTMF_TYPES.join(', ') }] }));
      return;
    }
    const key = parseInfoDtmf(type, req.body.toString('utf8'));
    if (!key) {
      tx.respond(buildResponse(req, 400, { reason: 'Bad DTMF Body' }));
      return;
    }
    tx.respond(buildResponse(req, 200));
    this.emit('info', req);
    this.emit('dtmf', key);
  }

  private handleUpdate(req: SipRequest, tx: ServerTransaction): void {
    if (req.body.length > 0) {
      // Offer/answer in UPDATE is not supported yet; refuse rather than ignore the offer.
      tx.respond(buildResponse(req, 488));
      return;
    }
    const st = negotiateAsUas(req, this.host.minSeSec);
    if (st.kind === 'too-small') {
      tx.respond(buildResponse(req, 422, { headers: [{ name: 'min-se', value: String(st.minSeSec) }] }));
      return;
    }
    this.updateTarget(header(req, 'contact'));
    const hdrs: SipHeader[] = [{ name: 'contact', value: this.addr.localContact }];
    if (st.kind === 'use') hdrs.push(...st.headers);
    tx.respond(buildResponse(req, 200, { headers: hdrs }));
    if (st.kind === 'use') this.sessionTimer.arm(st.deltaSec, st.weRefresh);
  }

  private sessionHeaders(): SipHeader[] {
    const st = this.sessionTimer.active;
    if (!st) return [];
    return [
      { name: 'session-expires', value: `${st.deltaSec};refresher=${st.weRefresh ? 'uac' : 'uas'}` },
      { name: 'supported', value: 'timer' },
    ];
  }

  /** We are the refresher: UPDATE if the peer allows it (no SDP churn), else re-INVITE. */
  private async refreshSession(): Promise<void> {
    const st = this.sessionTimer.active;
    if (!st || this.state === 'terminated') return;
    try {
      let res: SipResponse;
      if (this.remoteAllow.includes('UPDATE')) {
        const req = buildInDialogRequest(this.addr, 'UPDATE', { cseq: ++this.localSeq, headers: this.sessionHeaders() });
        res = await this.host.sendRequest(req);
        if (res.status >= 200 && res.status < 300) this.applyUacSessionTimer(res, st.deltaSec);
      } else {
        res = await this.reinvite(this.localSdp ?? '');
      }
      if (res.status === 481 || res.status === 408) this.terminateWithBye('session-expired');
      else if (res.status >= 300) this.sessionTimer.arm(st.deltaSec, false); // let it run out
    } catch {
      this.terminateWithBye('session-expired');
    }
  }

  private applyUacSessionTimer(res: SipResponse, fallbackSec?: number): void {
    const st = negotiateAsUac(res);
    if (st) this.sessionTimer.arm(st.deltaSec, st.weRefresh);
    else if (fallbackSec !== undefined) this.sessionTimer.arm(fallbackSec, true);
    else this.sessionTimer.cancel();
  }

  private updateTarget(contact: string | undefined): void {
    const uri = contactUri(contact);
    if (uri !== undefined) this.addr.remoteTarget = uri;
  }

  private terminateWithBye(reason: DialogEndReason): void {
    if (this.state === 'terminated') return;
    const req = buildInDialogRequest(this.addr, 'BYE', { cseq: ++this.localSeq });
    this.end(reason);
    this.host.sendRequest(req).catch(() => undefined);
  }

  private end(reason: DialogEndReason): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.retransmitter.stop();
    this.sessionTimer.cancel();
    this.host.dialogEnded(this);
    this.emit('ended', { reason });
  }

  /** Ends a dialog whose INVITE was answered with an error after all (no BYE: it was never confirmed). */
  abandon(reason: DialogEndReason): void {
    this.end(reason);
  }

  /** Releases timers without signalling the peer. Idempotent. */
  close(): void {
    this.end('closed');
    this.removeAllListeners();
  }
}

export const DIALOG_ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, PRACK';
