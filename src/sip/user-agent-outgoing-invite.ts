/**
 * An INVITE we sent (RFC 3261 §13.2): provisional responses as events, a Dialog on 2xx (ACKed
 * here), one retry per 401/407 challenge through the credential seam, and CANCEL (§9.1) which is
 * held back until a provisional response shows the far end has the INVITE. The target's places
 * come from RFC 3263 (locate.ts); a timeout, a transport error or a 503 moves the INVITE on to the
 * next place, in a new transaction (§4.3), unless a CANCEL is wanted.
 *
 * We say `Supported: 100rel`: a reliable provisional (RFC 3262: `Require: 100rel` and RSeq) is
 * PRACKed in its early dialog, once per RSeq; a resent one (RSeq not one past the last) is
 * neither PRACKed again nor reported again. A PRACK challenged with 401/407 is resent with the
 * INVITE's credentials (prack-sender.ts).
 */
import { EventEmitter } from 'eventemitter3';
import type { Timer } from '../util/clock.ts';
import { Dialog } from './dialog.ts';
import { allowedMethods, buildInDialogRequest, dialogId, uacAddressing } from './dialog-requests.ts';
import { negotiateAsUac } from './dialog-session-timer.ts';
import { header, headers, type SipHeader, type SipRequest, type SipResponse } from './message.ts';
import { lists100rel } from './reliable-provisionals.ts';
import { sendPrack } from './prack-sender.ts';
import { cseqOf, tagOf } from './transaction-headers.ts';
import type { Destination } from './transaction-types.ts';
import { answerChallenge, withCredentials, type DigestResponder } from './user-agent-auth.ts';
import type { UaContext } from './user-agent-context.ts';
import { NO_PUBLIC_IPV6 } from './advertised-host.ts';

export interface InviteOptions {
  headers?: SipHeader[];
  credentials?: DigestResponder;
  /** Ask for RFC 4028 session timers with this interval (we offer to refresh). */
  sessionExpiresSec?: number;
}

/**
 * The SDP offer for the media host we advertise to the place the INVITE goes (RTP_PUBLIC_HOST,
 * else SIP_PUBLIC_HOST, or SIP_PUBLIC_HOST6, by that place's family): called before each send to
 * a host not offered yet.
 */
export type OfferFor = (host: string) => string;

export class InviteFailedError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly response: SipResponse | undefined,
    /** Set when no place could be sent to because none had an address family we can advertise. */
    readonly code?: 'no-public-ipv6',
  ) {
    super(`INVITE failed: ${status} ${reason}`);
    this.name = 'InviteFailedError';
  }
}

export interface OutgoingInviteEvents {
  progress: (res: SipResponse) => void;
}

const MAX_AUTH_ATTEMPTS = 2;

export class OutgoingInvite extends EventEmitter<OutgoingInviteEvents> {
  readonly result: Promise<Dialog>;
  private resolveResult!: (d: Dialog) => void;
  private rejectResult!: (e: Error) => void;
  private settled = false;
  private current: SipRequest;
  /** The target's places in RFC 3263 order, and the one the current request went to. */
  private dests: Destination[] = [];
  private destIndex = 0;
  private dest: Destination | undefined;
  private gotProvisional = false;
  private cancelWanted = false;
  private cancelSent = false;
  private cancelGuard: Timer | undefined;
  private authAttempts = 0;
  private authHeader: SipHeader | undefined;
  private readonly untrack: () => void;
  /** Dialogs created by 2xx responses, by remote tag, so a retransmitted 2xx is only re-ACKed. */
  private readonly byRemoteTag = new Map<string, Dialog>();
  /** Last RSeq PRACKed per early dialog (remote tag). */
  private readonly rseqByTag = new Map<string, number>();
  /** CSeq of the last request we sent in an early dialog (PRACKs follow the INVITE's). */
  private earlySeq = 0;

  /** The offer in the current request. */
  private sdpOffer: string;
  /** The media host the current request's SDP names (through OfferFor); Via and Contact name the SIP host. */
  advertised: string | undefined;
  constructor(
    private readonly ua: UaContext,
    target: string,
    private readonly offer: string | OfferFor,
    private readonly opts: InviteOptions = {},
  ) {
    super();
    this.result = new Promise<Dialog>((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
    // Callers may only await later; never leave an unhandled rejection behind.
    this.result.catch(() => undefined);
    this.sdpOffer = typeof offer === 'string' ? offer : '';
    this.current = this.build(target);
    this.untrack = ua.track(this);
  }

  get callId(): string {
    return header(this.current, 'call-id') ?? '';
  }

  private build(target: string): SipRequest {
    const hdrs: SipHeader[] = [
      { name: 'max-forwards', value: '70' },
      ...this.ua.outboundRoute(),
      { name: 'from', value: `${this.ua.localUri()};tag=${this.ua.newTag()}` },
      { name: 'to', value: `<${target}>` },
      { name: 'call-id', value: this.ua.newCallId() },
      { name: 'cseq', value: '1 INVITE' },
      { name: 'allow', value: 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, PRACK' },
      { name: 'supported', value: 'timer, 100rel' },
      { name: 'user-agent', value: this.ua.config.userAgent },
    ];
    if (this.opts.sessionExpiresSec !== undefined) {
      hdrs.push({ name: 'session-expires', value: `${this.opts.sessionExpiresSec};refresher=uac` });
    }
    hdrs.push(...(this.opts.headers ?? []), { name: 'content-type', value: 'application/sdp' });
    return { kind: 'request', method: 'INVITE', uri: target, version: 'SIP/2.0', headers: hdrs, body: Buffer.from(this.sdpOffer) };
  }

  /** Resolves the next hop and sends; errors end up in `result`. */
  async start(): Promise<void> {
    try {
      this.dests = await this.ua.locate(this.current);
      this.dest = this.dests[0];
      this.send();
    } catch (err) {
      this.fail(new InviteFailedError(503, `cannot resolve target: ${String(err)}`, undefined));
    }
  }

  /** The offer sent (for the place the INVITE went to). */
  get offerSdp(): string {
    return this.sdpOffer;
  }

  private send(): void {
    const dest = this.dest;
    if (!dest || this.settled) return;
    const host = this.ua.advertisedHost(dest.address);
    if (host === undefined) {
      this.skipUnreachable();
      return;
    }
    const mediaHost = this.ua.advertisedMediaHost(dest.address) ?? host;
    if (typeof this.offer !== 'string' && mediaHost !== this.advertised) {
      this.sdpOffer = this.offer(mediaHost);
      this.current = { ...this.current, body: Buffer.from(this.sdpOffer) };
    }
    this.advertised = mediaHost;
    this.ua.addVia(this.current, dest.transport, dest.address);
    // Contact follows the transport actually used.
    this.current.headers = this.current.headers.filter((h) => h.name !== 'contact');
    this.current.headers.splice(5, 0, { name: 'contact', value: this.ua.contactFor(dest.transport, /^sips:/i.test(this.current.uri) ? 'sips' : 'sip', dest.address) });
    const req = this.current;
    this.ua.startClient(req, dest, {
      onResponse: (res) => void this.onResponse(req, res),
      onTimeout: () => this.failOver(req, new InviteFailedError(408, 'Request Timeout', undefined)),
      onTransportError: () => this.failOver(req, new InviteFailedError(503, 'Transport Error', undefined)),
    });
  }

  /**
   * The current place is IPv6 and we have no IPv6 host: an INVITE naming our IPv4 host there
   * would set up a call whose media cannot flow. The next place, if any, is tried instead.
   */
  private skipUnreachable(): void {
    if (this.destIndex + 1 < this.dests.length && !this.cancelWanted) {
      this.dest = this.dests[++this.destIndex];
      this.send();
      return;
    }
    this.fail(new InviteFailedError(503, NO_PUBLIC_IPV6, undefined, 'no-public-ipv6'));
  }

  /** Tries the next place, if there is one and we still want the call; else fails with `err`. */
  private failOver(req: SipRequest, err: InviteFailedError): void {
    if (req !== this.current) return;
    if (this.settled || this.cancelWanted || this.destIndex + 1 >= this.dests.length) {
      this.fail(err);
      return;
    }
    this.dest = this.dests[++this.destIndex];
    this.current = { ...req, headers: req.headers.slice() };
    this.gotProvisional = false;
    this.send();
  }

  private async onResponse(req: SipRequest, res: SipResponse): Promise<void> {
    if (req !== this.current) return; // a response to a request superseded by an auth retry
    if (res.status < 200) {
      if (res.status > 100 && !this.acknowledgeReliable(req, res)) return;
      this.gotProvisional = true;
      if (!this.settled) this.emit('progress', res);
      if (this.cancelWanted) this.sendCancel();
      return;
    }
    if (res.status < 300) {
      this.on2xx(req, res);
      return;
    }
    if (res.status === 503) {
      this.failOver(req, new InviteFailedError(res.status, res.reason, res));
      return;
    }
    if ((res.status === 401 || res.status === 407) && !this.cancelWanted && this.authAttempts < MAX_AUTH_ATTEMPTS) {
      this.authAttempts++;
      const auth = await answerChallenge(this.opts.credentials, req, res).catch(() => undefined);
      if (auth && !this.settled) {
        this.authHeader = auth;
        this.current = withCredentials(req, auth, (cseqOf(req)?.seq ?? 1) + 1);
        this.gotProvisional = false;
        this.send();
        return;
      }
    }
    this.fail(new InviteFailedError(res.status, res.reason, res));
  }

  /**
   * RFC 3262 §4: PRACK a reliable provisional. False when it is one already PRACKed (or out of
   * order): it is then discarded. An unreliable one passes untouched.
   */
  private acknowledgeReliable(req: SipRequest, res: SipResponse): boolean {
    const rseqText = header(res, 'rseq');
    const remoteTag = tagOf(header(res, 'to'));
    if (!lists100rel(headers(res, 'require')) || rseqText === undefined || !/^\s*\d{1,10}\s*$/.test(rseqText) || remoteTag === undefined) return true;
    const rseq = Number(rseqText);
    const last = this.rseqByTag.get(remoteTag);
    if (last !== undefined && rseq !== last + 1) return false;
    this.rseqByTag.set(remoteTag, rseq);
    const inviteSeq = cseqOf(req)?.seq ?? 1;
    this.earlySeq = Math.max(this.earlySeq, inviteSeq) + 1;
    const addressing = uacAddressing(req, res, this.ua.contactFor(this.dest?.transport ?? 'udp', /^sips:/i.test(req.uri) ? 'sips' : 'sip', this.dest?.address));
    const prack = buildInDialogRequest(addressing, 'PRACK', { cseq: this.earlySeq, headers: [{ name: 'rack', value: `${rseq} ${inviteSeq} INVITE` }] });
    // The PRACK's own transaction resends it; a challenge is answered (prack-sender.ts); its
    // outcome changes nothing else here.
    sendPrack(
      {
        sendRequest: (r) => this.ua.sendRequest(r),
        credentials: this.opts.credentials,
        nextSeq: () => ++this.earlySeq,
        done: () => this.settled && !this.byRemoteTag.has(remoteTag),
      },
      prack,
    ).catch(() => undefined);
    return true;
  }

  private on2xx(req: SipRequest, res: SipResponse): void {
    const remoteTag = tagOf(header(res, 'to')) ?? '';
    const existing = this.byRemoteTag.get(remoteTag) ?? this.ua.findDialog(dialogId(this.callId, tagOf(header(req, 'from')) ?? '', remoteTag));
    if (existing) {
      existing.receive2xxRetransmission(res);
      return;
    }
    const contact = this.ua.contactFor(this.dest?.transport ?? 'udp', /^sips:/i.test(req.uri) ? 'sips' : 'sip', this.dest?.address);
    const dialog = new Dialog(this.ua, {
      role: 'uac',
      addressing: uacAddressing(req, res, contact),
      localSeq: Math.max(cseqOf(req)?.seq ?? 1, this.earlySeq),
      remoteSeq: undefined,
      localSdp: this.sdpOffer,
      remoteSdp: res.body.length > 0 ? res.body.toString('utf8') : undefined,
      remoteAllow: allowedMethods(res),
    });
    this.ua.addDialog(dialog);
    this.byRemoteTag.set(remoteTag, dialog);
    dialog.ack(cseqOf(req)?.seq ?? 1, this.authHeader ? [this.authHeader] : []);
    const st = negotiateAsUac(res);
    if (st) dialog.armSessionTimer(st.deltaSec, st.weRefresh);
    if (this.settled || this.cancelWanted) {
      // §13.2.2.4 / §9.1: a 2xx we no longer want (fork, or CANCEL lost the race) is ACKed and hung up.
      void dialog.bye();
      if (!this.settled) this.fail(new InviteFailedError(487, 'Request Terminated', res));
      return;
    }
    this.settle();
    this.resolveResult(dialog);
  }

  /** Cancels a pending INVITE; the result then rejects with 487 (unless a 2xx won the race). */
  cancel(): void {
    if (this.settled || this.cancelWanted) return;
    this.cancelWanted = true;
    if (this.gotProvisional) this.sendCancel();
    // §9.1: give the INVITE 64*T1 to finish after CANCEL, then stop waiting.
    this.cancelGuard = this.ua.clock.setTimeout(() => {
      this.fail(new InviteFailedError(487, 'Request Terminated', undefined));
    }, 64 * this.ua.timers.t1Ms);
  }

  private sendCancel(): void {
    if (this.cancelSent || !this.dest) return;
    this.cancelSent = true;
    const inv = this.current;
    const hdrs: SipHeader[] = [];
    const via = inv.headers.find((h) => h.name === 'via');
    if (via) hdrs.push({ ...via });
    for (const h of inv.headers) {
      if (['max-forwards', 'from', 'to', 'call-id', 'route'].includes(h.name)) hdrs.push({ ...h });
    }
    hdrs.push({ name: 'cseq', value: `${cseqOf(inv)?.seq ?? 1} CANCEL` }, { name: 'content-length', value: '0' });
    const cancel: SipRequest = { kind: 'request', method: 'CANCEL', uri: inv.uri, version: 'SIP/2.0', headers: hdrs, body: Buffer.alloc(0) };
    this.ua.startClient(cancel, this.dest, { onResponse: () => undefined });
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.settle();
    this.rejectResult(err);
  }

  private settle(): void {
    this.settled = true;
    this.cancelGuard?.cancel();
    this.untrack();
  }

  /** Stops waiting (UA shutdown); the transaction layer's close stops the retransmissions. */
  close(): void {
    this.fail(new InviteFailedError(503, 'User agent closed', undefined));
  }
}
