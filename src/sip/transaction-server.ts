/**
 * Server transactions (RFC 3261 §17.2). The INVITE machine uses the RFC 6026 Accepted state:
 * after a 2xx it stays around (Timer L) to absorb INVITE retransmissions, while the 2xx itself
 * is retransmitted by the dialog layer until the ACK arrives.
 */
import type { SipRequest, SipResponse } from './message.ts';
import { TransactionBase, type TxContext } from './transaction-base.ts';
import { buildResponse } from './transaction-response.ts';
import {
  isReliable,
  type Destination,
  type ServerInviteState,
  type ServerNonInviteState,
} from './transaction-types.ts';

export class ServerInviteTransaction extends TransactionBase {
  state: ServerInviteState = 'proceeding';
  private lastResponse: SipResponse | undefined;

  constructor(
    ctx: TxContext,
    readonly request: SipRequest,
    /** §18.2.2 destination for responses, computed by the transport from the request. */
    readonly responseDest: Destination,
  ) {
    super(ctx);
  }

  /** Sends 100 Trying straight away, or after `trying100DelayMs` unless the TU answers first. */
  start(): void {
    const delay = this.ctx.timers.trying100DelayMs;
    if (delay <= 0) this.sendTrying();
    else this.startTimer('trying', delay, () => this.sendTrying());
  }

  private sendTrying(): void {
    if (this.lastResponse || this.state !== 'proceeding') return;
    this.respond(buildResponse(this.request, 100));
  }

  /** The TU's response. Returns false if the state no longer allows one. */
  respond(res: SipResponse): boolean {
    const { t1Ms } = this.ctx.timers;
    if (this.isTerminated) return false;
    if (this.state === 'accepted' && res.status >= 200 && res.status < 300) {
      this.send(res); // RFC 6026: 2xx retransmissions from the TU pass straight through.
      return true;
    }
    if (this.state !== 'proceeding') return false;
    this.stopTimer('trying');
    this.lastResponse = res;
    this.send(res);
    if (res.status < 200) return true;
    if (res.status < 300) {
      this.state = 'accepted';
      this.startTimer('L', 64 * t1Ms, () => this.terminate());
      return true;
    }
    this.state = 'completed';
    if (!isReliable(this.responseDest.transport)) this.armTimerG(t1Ms);
    this.startTimer('H', 64 * t1Ms, () => {
      if (this.state !== 'completed') return;
      this.emit({ type: 'timeout' });
      this.terminate();
    });
    return true;
  }

  private armTimerG(ms: number): void {
    this.startTimer('G', ms, () => {
      if (this.state !== 'completed' || !this.lastResponse) return;
      this.send(this.lastResponse);
      this.armTimerG(Math.min(2 * ms, this.ctx.timers.t2Ms));
    });
  }

  private send(res: SipResponse): void {
    this.emit({ type: 'send', message: res, dest: this.responseDest });
  }

  /** A retransmitted INVITE or an ACK that matched this transaction. */
  receiveRequest(req: SipRequest): void {
    if (this.isTerminated) return;
    if (req.method === 'ACK') {
      if (this.state === 'completed') {
        this.state = 'confirmed';
        this.stopTimer('G');
        this.stopTimer('H');
        const i = isReliable(this.responseDest.transport) ? 0 : this.ctx.timers.t4Ms;
        this.startTimer('I', i, () => this.terminate());
      } else if (this.state === 'accepted') {
        this.emit({ type: 'deliver-ack', request: req });
      }
      return;
    }
    if ((this.state === 'proceeding' || this.state === 'completed') && this.lastResponse) {
      this.send(this.lastResponse);
    }
  }

  transportError(): void {
    if (this.isTerminated) return;
    this.emit({ type: 'transport-error' });
    this.terminate();
  }

  protected override onTerminated(): void {
    this.state = 'terminated';
  }
}

export class ServerNonInviteTransaction extends TransactionBase {
  state: ServerNonInviteState = 'trying';
  private lastResponse: SipResponse | undefined;

  constructor(
    ctx: TxContext,
    readonly request: SipRequest,
    readonly responseDest: Destination,
  ) {
    super(ctx);
  }

  respond(res: SipResponse): boolean {
    if (this.isTerminated || this.state === 'completed') return false;
    this.lastResponse = res;
    this.emit({ type: 'send', message: res, dest: this.responseDest });
    if (res.status < 200) {
      this.state = 'proceeding';
      return true;
    }
    this.state = 'completed';
    const j = isReliable(this.responseDest.transport) ? 0 : 64 * this.ctx.timers.t1Ms;
    this.startTimer('J', j, () => this.terminate());
    return true;
  }

  /** Retransmissions in Trying are absorbed silently; later ones get the last response again. */
  receiveRequest(_req: SipRequest): void {
    if (this.isTerminated || !this.lastResponse) return;
    this.emit({ type: 'send', message: this.lastResponse, dest: this.responseDest });
  }

  transportError(): void {
    if (this.isTerminated) return;
    this.emit({ type: 'transport-error' });
    this.terminate();
  }

  protected override onTerminated(): void {
    this.state = 'terminated';
  }
}
