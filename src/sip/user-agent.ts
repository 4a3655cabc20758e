/**
 * The UA core: one transport, one transaction layer, the dialogs. Incoming INVITEs go to
 * `onInvite`; outgoing calls via invite(), registrations via register(), pings via options().
 * close() releases every dialog timer, transaction, socket and listener.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import { systemClock, type Clock } from '../util/clock.ts';
import type { Dialog } from './dialog.ts';
import { header, type SipHeader, type SipMessage, type SipRequest, type SipResponse } from './message.ts';
import { parseNameAddr } from './name-addr.ts';
import { TransactionLayer, type ClientTxHandlers } from './transaction-layer.ts';
import { cseqOf, formatVia, MAGIC_COOKIE, tagOf } from './transaction-headers.ts';
import { buildResponse } from './transaction-response.ts';
import type { ServerInviteTransaction } from './transaction-server.ts';
import type { Destination, TimerConfig, TransportKind } from './transaction-types.ts';
import { SipTransport, type SipTransportOptions } from './transport.ts';
import type { SourceGate } from './source-gate.ts';
import { dialogId } from './dialog-requests.ts';
import type { UaConfig, UaContext } from './user-agent-context.ts';
import type { IncomingInvite } from './user-agent-incoming-invite.ts';
import { handleInbound } from './user-agent-inbound.ts';
import { OutgoingInvite, type InviteOptions, type OfferFor } from './user-agent-outgoing-invite.ts';
import { Registration, type RegisterOptions } from './user-agent-register.ts';
import { parseSipUri } from './uri.ts';
import { locate, systemDns, type SipDns } from './locate.ts';
import { advertisedHost, advertisedMediaHost, NO_PUBLIC_IPV6 } from './advertised-host.ts';
import type { SipTls } from './tls/tls-streams.ts';

export interface UserAgentOptions {
  host?: string;
  /** 0 for an ephemeral port (tests). Default 5060. */
  port?: number;
  transports?: ReadonlyArray<'udp' | 'tcp'>;
  userName?: string;
  displayName?: string;
  clock?: Clock;
  timers?: Partial<TimerConfig>;
  /** RFC 4028 Min-SE we enforce, seconds. Default 90. */
  minSeSec?: number;
  userAgent?: string;
  onInvite?: (incoming: IncomingInvite) => void;
  /** Random token source for tags, branches and Call-IDs (tests may fix it). */
  random?: () => string;
  onError?: (err: Error) => void;
  /** Parser limits and the bounds on stream connections (admission, deadlines). */
  transport?: Pick<SipTransportOptions, 'limits' | 'idleTimeoutMs' | 'messageTimeoutMs' | 'maxDatagramBytes' | 'admission' | 'onRefused' | 'clock'>;
  /** Where NAPTR, SRV and address queries go (default: the system's resolver; locate.ts). */
  dns?: SipDns;
  /** SIP over TLS: outbound connections, and a listener when it holds a certificate. */
  tls?: SipTls;
  /**
   * SIP_OUTBOUND_PROXY: every out-of-dialog request (INVITE, REGISTER, OPTIONS) goes to this
   * proxy first, through a preloaded `Route: <sip:host:port;lr>`; the Request-URI keeps naming
   * the far end. In-dialog requests follow the dialog's route set as always.
   */
  outboundProxy?: { host: string; port: number } | undefined;
}

export interface UserAgentEvents {
  dialog: (dialog: Dialog) => void;
  error: (err: Error) => void;
}

export class UserAgent extends EventEmitter<UserAgentEvents> implements UaContext {
  readonly clock: Clock;
  readonly layer: TransactionLayer;
  readonly config: UaConfig;
  onInvite: ((incoming: IncomingInvite) => void) | undefined;
  unavailable: { retryAfterS: number } | undefined = undefined;
  readonly pendingIncoming = new Map<ServerInviteTransaction, IncomingInvite>();
  readonly earlyDialogs = new Map<string, IncomingInvite>();
  private readonly dialogs = new Map<string, Dialog>();
  private readonly tracked = new Set<{ close(): void }>();
  private readonly random: () => string;
  private readonly dns: SipDns;
  private readonly proxyRoute: SipHeader[];
  private transport!: SipTransport;
  private closing: Promise<void> | undefined;

  private constructor(opts: UserAgentOptions) {
    super();
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? (() => randomBytes(8).toString('hex'));
    this.onInvite = opts.onInvite;
    this.dns = opts.dns ?? systemDns();
    const proxy = opts.outboundProxy;
    this.proxyRoute = proxy ? [{ name: 'route', value: `<sip:${uriHost(proxy.host)}:${proxy.port};lr>` }] : [];
    this.config = {
      userName: opts.userName ?? 'switchboard',
      displayName: opts.displayName,
      host: opts.host ?? '127.0.0.1',
      port: opts.port ?? 5060,
      minSeSec: opts.minSeSec ?? 90,
      userAgent: opts.userAgent ?? 'Switchboard',
    };
    this.layer = new TransactionLayer({
      clock: this.clock,
      timers: opts.timers ?? {},
      send: (msg, dest) => this.transport.send(msg, dest),
      tu: {
        onRequest: (req, tx, source) => handleInbound(this, req, tx, source),
        onStrayResponse: (res) => this.onStrayResponse(res),
      },
    });
  }

  static async create(opts: UserAgentOptions = {}): Promise<UserAgent> {
    const ua = new UserAgent(opts);
    ua.transport = await SipTransport.listen(
      {
        ...opts.transport,
        host: ua.config.host,
        port: ua.config.port,
        transports: opts.transports ?? ['udp', 'tcp'],
        onError: (err) => opts.onError?.(err),
        ...(opts.tls ? { tls: opts.tls } : {}),
      },
      {
        onRequest: (req, source) => ua.layer.receiveRequest(req, source),
        onResponse: (res, source) => ua.layer.receiveResponse(res, source),
      },
    );
    ua.config.port = ua.transport.localPort;
    return ua;
  }

  /** Who the transport may read and answer (the abuse guard); see src/sip/source-gate.ts. */
  useSourceGate(gate: SourceGate): void {
    this.transport.gate = gate;
  }

  get timers(): TimerConfig {
    return this.layer.timers;
  }

  get minSeSec(): number {
    return this.config.minSeSec;
  }

  get port(): number {
    return this.config.port;
  }

  /** The TLS listener's port; 0 when there is none. */
  get tlsPort(): number {
    return this.transport.localPortFor('tls');
  }

  /** Live counts, for leak checks. */
  /** Stream connections: open now, refused by admission and closed at a deadline (for /metrics). */
  get streams(): { open: number; refused: Readonly<SipTransport['refused']>; expired: Readonly<SipTransport['expired']> } {
    return { open: this.transport.connectionCount, refused: this.transport.refused, expired: this.transport.expired };
  }

  get stats(): { transactions: number; transactionTimers: number; dialogs: number; connections: number; pending: number } {
    return {
      transactions: this.layer.size,
      transactionTimers: this.layer.timerCount,
      dialogs: this.dialogs.size,
      connections: this.transport.connectionCount,
      pending: this.tracked.size + this.pendingIncoming.size + this.earlyDialogs.size,
    };
  }

  /** Places a call; await `result` for the Dialog. */
  invite(target: string, sdpOffer: string | OfferFor, opts: InviteOptions = {}): OutgoingInvite {
    const call = new OutgoingInvite(this, target, sdpOffer, opts);
    void call.start();
    return call;
  }

  /** Starts a registration and sends the first REGISTER. */
  register(opts: RegisterOptions): { registration: Registration; result: Promise<SipResponse> } {
    const registration = new Registration(this, opts);
    return { registration, result: registration.register() };
  }

  /** Out-of-dialog OPTIONS (keepalive / capability probe). */
  async options(target: string, extraHeaders: SipHeader[] = []): Promise<SipResponse> {
    const req: SipRequest = {
      kind: 'request',
      method: 'OPTIONS',
      uri: target,
      version: 'SIP/2.0',
      headers: [
        { name: 'max-forwards', value: '70' },
        { name: 'from', value: `${this.localUri()};tag=${this.newTag()}` },
        { name: 'to', value: `<${target}>` },
        { name: 'call-id', value: this.newCallId() },
        { name: 'cseq', value: '1 OPTIONS' },
        ...this.outboundRoute(),
        { name: 'accept', value: 'application/sdp' },
        ...extraHeaders,
      ],
      body: Buffer.alloc(0),
    };
    return this.sendRequest(req);
  }

  // ---- UaContext / DialogHost ----

  outboundRoute(): SipHeader[] {
    return this.proxyRoute.map((h) => ({ ...h }));
  }

  contactFor(transport: TransportKind, scheme: 'sip' | 'sips' = 'sip', peer?: string): string {
    const port = this.portFor(transport);
    const host = uriHost(this.hostFor(peer));
    // A sips: request needs a sips: Contact (§8.1.1.8); TLS is then implied.
    if (scheme === 'sips') return `<sips:${this.config.userName}@${host}:${port}>`;
    const t = transport === 'udp' ? '' : `;transport=${transport}`;
    return `<sip:${this.config.userName}@${host}:${port}${t}>`;
  }

  advertisedHost(peer: string | undefined): string | undefined {
    return advertisedHost(peer, this.config);
  }

  advertisedMediaHost(peer: string | undefined): string | undefined {
    return advertisedMediaHost(peer, this.config);
  }

  /**
   * The host in Via and Contact toward `peer`: advertisedHost(), else (an IPv6 peer with no IPv6
   * host of ours, which only requests that need no reachable address get this far) `host`.
   */
  private hostFor(peer: string | undefined): string {
    return this.advertisedHost(peer) ?? this.config.host;
  }

  /** Our port for a transport in Via and Contact: the TLS listener's for TLS (5061 when we have none). */
  private portFor(transport: TransportKind): number {
    return transport === 'tls' ? this.transport.localPortFor('tls') || 5061 : this.config.port;
  }

  localUri(): string {
    const dn = this.config.displayName === undefined ? '' : `"${this.config.displayName.replace(/["\\]/g, '')}" `;
    return `${dn}<sip:${this.config.userName}@${uriHost(this.config.host)}>`;
  }

  newTag(): string {
    return this.random();
  }

  newCallId(): string {
    return `${this.random()}${this.random()}@${uriHost(this.config.host)}`;
  }

  addVia(req: SipRequest, transport: TransportKind, peer?: string): void {
    const via = formatVia({
      protocol: `SIP/2.0/${transport.toUpperCase()}`,
      transport: transport.toUpperCase(),
      host: this.hostFor(peer),
      port: this.portFor(transport),
      params: new Map([['branch', `${MAGIC_COOKIE}${this.random()}`], ['rport', undefined]]),
    });
    const mine = req.headers.findIndex((h) => h.name === 'via');
    if (mine === 0) req.headers[0] = { name: 'via', value: via };
    else req.headers.unshift({ name: 'via', value: via });
  }

  async locate(req: SipRequest): Promise<Destination[]> {
    const route = header(req, 'route');
    const text = (route === undefined ? undefined : parseNameAddr(route)?.uri) ?? req.uri;
    return this.locateUri(text);
  }

  /** The places for a SIP URI, in RFC 3263 order (locate.ts). */
  async locateUri(text: string): Promise<Destination[]> {
    const uri = parseSipUri(text);
    if (!uri) throw new Error(`cannot route to ${text}`);
    return locate(uri, this.dns, Math.random, { tls: this.tlsPort > 0, ipv6: this.transport.ipv6 });
  }

  async resolve(req: SipRequest): Promise<Destination> {
    return (await this.locate(req))[0]!;
  }

  startClient(req: SipRequest, dest: Destination, handlers: ClientTxHandlers): void {
    if (!req.headers.some((h) => h.name === 'via')) this.addVia(req, dest.transport, dest.address);
    this.layer.sendRequest(req, dest, handlers);
  }

  sendRequestTo(req: SipRequest, dest: Destination, onProvisional?: (res: SipResponse) => void): Promise<SipResponse> {
    // §8.1.3.1: a timeout reads as 408 and a transport failure as 503.
    return this.exchange(req, dest, onProvisional).then((r) => (typeof r === 'number' ? buildResponse(req, r) : r));
  }

  async sendFailover(
    req: SipRequest,
    dests: readonly Destination[],
    onProvisional?: (res: SipResponse) => void,
    prepare?: (req: SipRequest, dest: Destination) => boolean,
  ): Promise<{ res: SipResponse; dest: Destination }> {
    if (dests.length === 0) throw new Error('no destination to send to');
    let sending = req;
    let outcome: { res: SipResponse; dest: Destination } | undefined;
    for (const dest of dests) {
      if (prepare && !prepare(sending, dest)) continue;
      const r = await this.exchange(sending, dest, onProvisional);
      outcome = { res: typeof r === 'number' ? buildResponse(sending, r) : r, dest };
      if (typeof r !== 'number' && r.status !== 503) return outcome;
      // §4.3: the next place gets the same request in a new transaction (a new Via branch).
      sending = { ...sending, headers: sending.headers.slice() };
    }
    return outcome ?? { res: buildResponse(req, 503, { reason: NO_PUBLIC_IPV6 }), dest: dests[dests.length - 1]! };
  }

  /** One client transaction: the final response, or 408 / 503 when none came (timeout / transport). */
  private exchange(req: SipRequest, dest: Destination, onProvisional?: (res: SipResponse) => void): Promise<SipResponse | 408 | 503> {
    return new Promise((resolve) => {
      this.addVia(req, dest.transport, dest.address);
      try {
        this.layer.sendRequest(req, dest, {
          onResponse: (res) => (res.status < 200 ? onProvisional?.(res) : resolve(res)),
          onTimeout: () => resolve(408),
          onTransportError: () => resolve(503),
        });
      } catch {
        resolve(503);
      }
    });
  }

  async sendRequest(req: SipRequest): Promise<SipResponse> {
    let dests: Destination[];
    try {
      dests = await this.locate(req);
    } catch {
      return buildResponse(req, 503);
    }
    return (await this.sendFailover(req, dests)).res;
  }

  sendAck(ack: SipRequest): void {
    void this.resolve(ack)
      .then((dest) => {
        if (!ack.headers.some((h) => h.name === 'via')) this.addVia(ack, dest.transport, dest.address);
        this.layer.sendStateless(ack, dest);
      })
      .catch((err: unknown) => this.emit('error', err instanceof Error ? err : new Error(String(err))));
  }

  sendResponse(res: SipResponse, dest: Destination): void {
    this.layer.sendStateless(res as SipMessage, dest);
  }

  addDialog(dialog: Dialog): void {
    this.dialogs.set(dialog.id, dialog);
    this.emit('dialog', dialog);
  }

  findDialog(id: string): Dialog | undefined {
    return this.dialogs.get(id);
  }

  dialogEnded(dialog: Dialog): void {
    if (this.dialogs.get(dialog.id) === dialog) this.dialogs.delete(dialog.id);
  }

  track(item: { close(): void }): () => void {
    this.tracked.add(item);
    return () => this.tracked.delete(item);
  }

  /** A 2xx to INVITE after the client transaction is gone: our ACK was lost, so resend it. */
  private onStrayResponse(res: SipResponse): void {
    if (res.status < 200 || res.status >= 300 || cseqOf(res)?.method !== 'INVITE') return;
    const id = dialogId(header(res, 'call-id') ?? '', tagOf(header(res, 'from')) ?? '', tagOf(header(res, 'to')) ?? '');
    this.dialogs.get(id)?.receive2xxRetransmission(res);
  }

  /** Releases dialogs (without BYE), pending work, transactions and sockets. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const item of [...this.tracked]) item.close();
      this.tracked.clear();
      for (const d of [...this.dialogs.values()]) d.close();
      this.dialogs.clear();
      for (const early of [...this.earlyDialogs.values()]) early.close();
      this.earlyDialogs.clear();
      this.pendingIncoming.clear();
      this.onInvite = undefined;
      this.layer.close();
      await this.transport.close();
      this.removeAllListeners();
    })();
    return this.closing;
  }
}

/** A host as written in a SIP URI or Call-ID: an IPv6 address in brackets (RFC 3261 §25.1). */
export function uriHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
