/**
 * A registration binding kept alive (RFC 3261 §10.2): same Call-ID and rising CSeq for every
 * refresh, refreshed ahead of the expiry the registrar granted, answered challenges through the
 * credential seam, and an unregister (Expires: 0) on request.
 */
import { EventEmitter } from 'eventemitter3';
import type { Timer } from '../util/clock.ts';
import { header, headers, type SipHeader, type SipRequest, type SipResponse } from './message.ts';
import { parseNameAddr } from './name-addr.ts';
import { answerChallenge, withCredentials, type DigestResponder } from './user-agent-auth.ts';
import type { UaContext } from './user-agent-context.ts';
import type { Destination, TransportKind } from './transaction-types.ts';

export interface RegisterOptions {
  /** Registrar Request-URI, e.g. `sip:pbx.example.com:5060`. */
  registrar: string;
  /** Address of record, e.g. `sip:100@pbx.example.com`. */
  aor: string;
  expiresSec?: number;
  credentials?: DigestResponder;
  headers?: SipHeader[];
}

export interface RegistrationEvents {
  registered: (expiresSec: number) => void;
  failed: (status: number, reason: string) => void;
}

export class Registration extends EventEmitter<RegistrationEvents> {
  private readonly callId: string;
  private readonly fromTag: string;
  private cseq = 0;
  private refreshTimer: Timer | undefined;
  private closed = false;
  private readonly untrack: () => void;
  /** Seconds granted by the last successful REGISTER; 0 when not registered. */
  grantedSec = 0;

  constructor(
    private readonly ua: UaContext,
    private readonly opts: RegisterOptions,
  ) {
    super();
    this.callId = ua.newCallId();
    this.fromTag = ua.newTag();
    this.untrack = ua.track(this);
  }

  /** Registers (or refreshes) now; resolves with the final response. */
  async register(expiresSec = this.opts.expiresSec ?? 3600): Promise<SipResponse> {
    this.refreshTimer?.cancel();
    let req = this.build(expiresSec);
    // The registrar's places in RFC 3263 order, each told a Contact of its own address family; a
    // challenge is answered to the one that sent it.
    const fit = (r: SipRequest, d: Destination): boolean => this.fitContact(r, d);
    let { res, dest } = await this.ua.sendFailover(req, await this.ua.locate(req), undefined, fit);
    fit(req, dest);
    for (let attempt = 0; attempt < 2 && (res.status === 401 || res.status === 407); attempt++) {
      const auth = await answerChallenge(this.opts.credentials, req, res);
      if (!auth || this.closed) break;
      req = withCredentials(req, auth, ++this.cseq);
      res = await this.ua.sendRequestTo(req, dest);
    }
    if (this.closed && expiresSec > 0) return res;
    if (res.status >= 200 && res.status < 300) {
      this.grantedSec = expiresSec === 0 ? 0 : grantedExpiry(res, header(req, 'contact') ?? '', expiresSec);
      if (this.grantedSec > 0) {
        this.scheduleRefresh(this.grantedSec);
        this.emit('registered', this.grantedSec);
      }
    } else {
      this.grantedSec = 0;
      this.emit('failed', res.status, res.reason);
    }
    return res;
  }

  /** Removes the binding (Expires: 0) and stops refreshing. */
  async unregister(): Promise<SipResponse> {
    this.refreshTimer?.cancel();
    return this.register(0);
  }

  private scheduleRefresh(grantedSec: number): void {
    // Refresh well before expiry: halfway for short grants, a minute early for long ones.
    const ms = grantedSec * 1000;
    const at = Math.max(1000, ms - Math.min(ms / 2, 60_000));
    this.refreshTimer = this.ua.clock.setTimeout(() => {
      if (!this.closed) void this.register().catch(() => this.emit('failed', 503, 'refresh failed'));
    }, at);
  }

  /**
   * Our Contact toward `dest`: its transport, and the host of its address family (the same one
   * on every refresh to the same place). False when `dest` is IPv6 and we have no IPv6 host.
   */
  private fitContact(req: SipRequest, dest: Destination): boolean {
    if (this.ua.advertisedHost(dest.address) === undefined) return false;
    const contact = this.ua.contactFor(dest.transport, /^sips:/i.test(this.opts.registrar) ? 'sips' : 'sip', dest.address);
    req.headers = req.headers.map((h) => (h.name === 'contact' ? { name: 'contact', value: contact } : h));
    return true;
  }

  private build(expiresSec: number): SipRequest {
    const hdrs: SipHeader[] = [
      { name: 'max-forwards', value: '70' },
      ...this.ua.outboundRoute(),
      { name: 'from', value: `<${this.opts.aor}>;tag=${this.fromTag}` },
      { name: 'to', value: `<${this.opts.aor}>` },
      { name: 'call-id', value: this.callId },
      { name: 'cseq', value: `${++this.cseq} REGISTER` },
      { name: 'contact', value: this.ua.contactFor(namedTransport(this.opts.registrar)) },
      { name: 'expires', value: String(expiresSec) },
      { name: 'user-agent', value: this.ua.config.userAgent },
      ...(this.opts.headers ?? []),
    ];
    return { kind: 'request', method: 'REGISTER', uri: this.opts.registrar, version: 'SIP/2.0', headers: hdrs, body: Buffer.alloc(0) };
  }

  /** Stops refreshing (the binding simply lapses; call unregister() first to remove it). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.refreshTimer?.cancel();
    this.untrack();
    this.removeAllListeners();
  }
}

/** The expiry for our binding: its Contact `expires` param, else Expires, else what we asked. */
function grantedExpiry(res: SipResponse, ourContact: string, asked: number): number {
  const ours = parseNameAddr(ourContact)?.uri;
  for (const c of headers(res, 'contact')) {
    const na = parseNameAddr(c);
    const exp = na?.params.get('expires');
    if (na && na.uri === ours && exp) return Number(exp) || asked;
  }
  const e = Number(header(res, 'expires'));
  return Number.isFinite(e) && e > 0 ? e : asked;
}

/** The transport a registrar URI asks for (its `transport` parameter, TLS for sips:), else UDP. */
function namedTransport(registrar: string): TransportKind {
  if (/^sips:/i.test(registrar)) return 'tls';
  const t = /;transport=(udp|tcp|tls)\b/i.exec(registrar)?.[1]?.toLowerCase();
  return (t as TransportKind | undefined) ?? 'udp';
}
