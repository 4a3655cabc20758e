/**
 * Owns every live transaction: creates them, matches incoming messages to them (§17.1.3,
 * §17.2.3), turns their actions into transport sends and TU callbacks, and forgets them when
 * they terminate. No sockets here: `send` is injected.
 */
import type { Clock } from '../util/clock.ts';
import type { SipMessage, SipRequest, SipResponse } from './message.ts';
import type { TxContext } from './transaction-base.ts';
import { ClientInviteTransaction, ClientNonInviteTransaction } from './transaction-client.ts';
import { clientKey, inviteKeyForCancel, serverKey } from './transaction-headers.ts';
import { ServerInviteTransaction, ServerNonInviteTransaction } from './transaction-server.ts';
import { DEFAULT_TIMERS, type Destination, type Source, type TimerConfig, type TxAction } from './transaction-types.ts';
import { responseDestination } from './transport-via.ts';

export type ClientTransaction = ClientInviteTransaction | ClientNonInviteTransaction;
export type ServerTransaction = ServerInviteTransaction | ServerNonInviteTransaction;

export interface ClientTxHandlers {
  onResponse(res: SipResponse): void;
  onTimeout?(): void;
  onTransportError?(): void;
  onTerminated?(): void;
}

export interface TransactionUser {
  /** A new request (tx set) or an ACK that matched no transaction (tx undefined, an ACK for a 2xx). */
  onRequest(req: SipRequest, tx: ServerTransaction | undefined, source: Source): void;
  /** A response no client transaction claimed, e.g. a 2xx retransmission after Timer M. */
  onStrayResponse?(res: SipResponse, source: Source): void;
  /** An ACK that matched an INVITE server transaction in the Accepted state. */
  onAck?(ack: SipRequest, tx: ServerInviteTransaction): void;
  onServerFailure?(tx: ServerTransaction, reason: 'timeout' | 'transport-error'): void;
}

/** Sending may fail asynchronously (TCP connect); a rejection becomes a transport error. */
export type SendFn = (message: SipMessage, dest: Destination) => void | Promise<void>;

export interface TransactionLayerOptions {
  clock: Clock;
  send: SendFn;
  tu: TransactionUser;
  timers?: Partial<TimerConfig>;
}

export class TransactionLayer {
  readonly timers: TimerConfig;
  private readonly clients = new Map<string, ClientTransaction>();
  private readonly servers = new Map<string, ServerTransaction>();
  private closed = false;
  /** Sees every message handed to the transport (requests and responses, retransmissions too): for /metrics. */
  onSent: ((message: SipMessage) => void) | undefined;

  constructor(private readonly opts: TransactionLayerOptions) {
    this.timers = { ...DEFAULT_TIMERS, ...opts.timers };
  }

  /** Live transactions; zero after close() or once every transaction has terminated. */
  get size(): number {
    return this.clients.size + this.servers.size;
  }

  /** Timers held by live transactions, for leak checks in tests. */
  get timerCount(): number {
    let n = 0;
    for (const tx of this.clients.values()) n += tx.timerCount;
    for (const tx of this.servers.values()) n += tx.timerCount;
    return n;
  }

  /** Starts a client transaction. The request must already carry its Via with a fresh branch. */
  sendRequest(req: SipRequest, dest: Destination, handlers: ClientTxHandlers): ClientTransaction {
    const key = clientKey(req);
    if (this.closed) throw new Error('transaction layer closed');
    if (key === undefined) throw new Error('request needs a Via branch and CSeq');
    if (req.method === 'ACK') throw new Error('ACK is sent without a transaction; use sendStateless');
    let tx: ClientTransaction | undefined = undefined;
    const ctx = this.context((a) => this.onClientAction(key, tx, a, handlers));
    tx = req.method === 'INVITE' ? new ClientInviteTransaction(ctx, req, dest) : new ClientNonInviteTransaction(ctx, req, dest);
    this.clients.set(key, tx);
    tx.start();
    return tx;
  }

  /** ACK for 2xx and 2xx retransmissions travel outside transactions (§13.3.1.4, §17.1.1.3). */
  sendStateless(message: SipMessage, dest: Destination): void {
    if (this.closed) return;
    this.dispatch(message, dest, undefined);
  }

  receiveRequest(req: SipRequest, source: Source): void {
    if (this.closed) return;
    const key = serverKey(req);
    if (key === undefined) return;
    const existing = this.servers.get(key);
    if (existing) {
      if (req.method === 'ACK' && existing instanceof ServerNonInviteTransaction) return;
      existing.receiveRequest(req);
      return;
    }
    if (req.method === 'ACK') {
      this.opts.tu.onRequest(req, undefined, source);
      return;
    }
    const dest = responseDestination(req, source);
    let tx: ServerTransaction | undefined = undefined;
    const ctx = this.context((a) => this.onServerAction(key, tx, a));
    tx = req.method === 'INVITE' ? new ServerInviteTransaction(ctx, req, dest) : new ServerNonInviteTransaction(ctx, req, dest);
    this.servers.set(key, tx);
    if (tx instanceof ServerInviteTransaction) tx.start();
    this.opts.tu.onRequest(req, tx, source);
  }

  receiveResponse(res: SipResponse, source: Source): void {
    if (this.closed) return;
    const key = clientKey(res);
    const tx = key === undefined ? undefined : this.clients.get(key);
    if (tx) tx.receiveResponse(res);
    else this.opts.tu.onStrayResponse?.(res, source);
  }

  /** The INVITE server transaction a CANCEL targets (§9.2), if it still exists. */
  findInviteForCancel(cancel: SipRequest): ServerInviteTransaction | undefined {
    const key = inviteKeyForCancel(cancel);
    const tx = key === undefined ? undefined : this.servers.get(key);
    return tx instanceof ServerInviteTransaction ? tx : undefined;
  }

  /** Terminates every transaction and cancels every timer. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const tx of [...this.clients.values(), ...this.servers.values()]) tx.terminate();
    this.clients.clear();
    this.servers.clear();
  }

  private context(emit: (a: TxAction) => void): TxContext {
    return { clock: this.opts.clock, timers: this.timers, emit };
  }

  private dispatch(message: SipMessage, dest: Destination, onError: (() => void) | undefined): void {
    this.onSent?.(message);
    try {
      const p = this.opts.send(message, dest);
      if (p) p.catch(() => onError?.());
    } catch {
      onError?.();
    }
  }

  private onClientAction(key: string, tx: ClientTransaction | undefined, a: TxAction, h: ClientTxHandlers): void {
    switch (a.type) {
      case 'send':
        this.dispatch(a.message, a.dest, () => tx?.transportError());
        break;
      case 'deliver-response':
        h.onResponse(a.response);
        break;
      case 'timeout':
        h.onTimeout?.();
        break;
      case 'transport-error':
        h.onTransportError?.();
        break;
      case 'terminated':
        if (this.clients.get(key) === tx) this.clients.delete(key);
        h.onTerminated?.();
        break;
      case 'deliver-ack':
        break;
    }
  }

  private onServerAction(key: string, tx: ServerTransaction | undefined, a: TxAction): void {
    switch (a.type) {
      case 'send':
        this.dispatch(a.message, a.dest, () => tx?.transportError());
        break;
      case 'deliver-ack':
        if (tx instanceof ServerInviteTransaction) this.opts.tu.onAck?.(a.request, tx);
        break;
      case 'timeout':
      case 'transport-error':
        if (tx) this.opts.tu.onServerFailure?.(tx, a.type);
        break;
      case 'terminated':
        if (this.servers.get(key) === tx) this.servers.delete(key);
        break;
      case 'deliver-response':
        break;
    }
  }
}
