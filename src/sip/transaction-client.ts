/**
 * Client transactions (RFC 3261 §17.1), with the RFC 6026 "Accepted" state for INVITE so 2xx
 * retransmissions still reach the TU (which re-sends its ACK) instead of being lost.
 */
import { header, type SipRequest, type SipResponse } from './message.ts';
import { TransactionBase, type TxContext } from './transaction-base.ts';
import { cseqOf } from './transaction-headers.ts';
import {
  isReliable,
  type ClientInviteState,
  type ClientNonInviteState,
  type Destination,
} from './transaction-types.ts';

export class ClientInviteTransaction extends TransactionBase {
  state: ClientInviteState = 'calling';
  private ackForFinal: SipRequest | undefined;

  constructor(
    ctx: TxContext,
    readonly request: SipRequest,
    readonly dest: Destination,
  ) {
    super(ctx);
  }

  start(): void {
    const { t1Ms } = this.ctx.timers;
    this.send();
    if (!isReliable(this.dest.transport)) this.armTimerA(t1Ms);
    this.startTimer('B', 64 * t1Ms, () => {
      if (this.state !== 'calling' && this.state !== 'proceeding') return;
      this.emit({ type: 'timeout' });
      this.terminate();
    });
  }

  private armTimerA(ms: number): void {
    // Timer A doubles without a T2 cap for INVITE (§17.1.1.2).
    this.startTimer('A', ms, () => {
      if (this.state !== 'calling') return;
      this.send();
      this.armTimerA(ms * 2);
    });
  }

  private send(): void {
    this.emit({ type: 'send', message: this.request, dest: this.dest });
  }

  receiveResponse(res: SipResponse): void {
    const { t1Ms } = this.ctx.timers;
    if (this.isTerminated) return;
    if (res.status < 200) {
      if (this.state === 'calling' || this.state === 'proceeding') {
        this.state = 'proceeding';
        this.stopTimer('A');
        // Timer B only guards Calling; a provisional shows the far end is alive.
        this.stopTimer('B');
        this.emit({ type: 'deliver-response', response: res });
      }
      return;
    }
    if (res.status < 300) {
      if (this.state === 'calling' || this.state === 'proceeding') {
        this.state = 'accepted';
        this.stopTimer('A');
        this.stopTimer('B');
        this.emit({ type: 'deliver-response', response: res });
        this.startTimer('M', 64 * t1Ms, () => this.terminate());
      } else if (this.state === 'accepted') {
        this.emit({ type: 'deliver-response', response: res });
      }
      return;
    }
    if (this.state === 'calling' || this.state === 'proceeding') {
      this.state = 'completed';
      this.stopTimer('A');
      this.stopTimer('B');
      this.ackForFinal = buildAckForNon2xx(this.request, res);
      this.emit({ type: 'send', message: this.ackForFinal, dest: this.dest });
      this.emit({ type: 'deliver-response', response: res });
      const d = isReliable(this.dest.transport) ? 0 : 32_000;
      this.startTimer('D', d, () => this.terminate());
    } else if (this.state === 'completed' && this.ackForFinal) {
      this.emit({ type: 'send', message: this.ackForFinal, dest: this.dest });
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

/** §17.1.1.3: the transaction, not the TU, builds the ACK for a non-2xx final response. */
export function buildAckForNon2xx(invite: SipRequest, res: SipResponse): SipRequest {
  const hdrs: SipRequest['headers'] = [];
  const via = invite.headers.find((h) => h.name === 'via');
  if (via) hdrs.push({ ...via });
  for (const name of ['max-forwards', 'from']) {
    const v = header(invite, name);
    if (v !== undefined) hdrs.push({ name, value: v });
  }
  hdrs.push({ name: 'to', value: header(res, 'to') ?? header(invite, 'to') ?? '' });
  hdrs.push({ name: 'call-id', value: header(invite, 'call-id') ?? '' });
  hdrs.push({ name: 'cseq', value: `${cseqOf(invite)?.seq ?? 1} ACK` });
  for (const h of invite.headers) if (h.name === 'route') hdrs.push({ ...h });
  hdrs.push({ name: 'content-length', value: '0' });
  return { kind: 'request', method: 'ACK', uri: invite.uri, version: invite.version, headers: hdrs, body: Buffer.alloc(0) };
}

export class ClientNonInviteTransaction extends TransactionBase {
  state: ClientNonInviteState = 'trying';

  constructor(
    ctx: TxContext,
    readonly request: SipRequest,
    readonly dest: Destination,
  ) {
    super(ctx);
  }

  start(): void {
    const { t1Ms } = this.ctx.timers;
    this.send();
    if (!isReliable(this.dest.transport)) this.armTimerE(t1Ms);
    this.startTimer('F', 64 * t1Ms, () => {
      if (this.state !== 'trying' && this.state !== 'proceeding') return;
      this.emit({ type: 'timeout' });
      this.terminate();
    });
  }

  private armTimerE(ms: number): void {
    const { t2Ms } = this.ctx.timers;
    this.startTimer('E', ms, () => {
      if (this.state === 'trying') {
        this.send();
        this.armTimerE(Math.min(2 * ms, t2Ms));
      } else if (this.state === 'proceeding') {
        this.send();
        this.armTimerE(t2Ms);
      }
    });
  }

  private send(): void {
    this.emit({ type: 'send', message: this.request, dest: this.dest });
  }

  receiveResponse(res: SipResponse): void {
    if (this.isTerminated || this.state === 'completed') return;
    if (res.status < 200) {
      this.state = 'proceeding';
      this.emit({ type: 'deliver-response', response: res });
      return;
    }
    this.state = 'completed';
    this.stopTimer('E');
    this.stopTimer('F');
    this.emit({ type: 'deliver-response', response: res });
    const k = isReliable(this.dest.transport) ? 0 : this.ctx.timers.t4Ms;
    this.startTimer('K', k, () => this.terminate());
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
