/**
 * UAS-side 2xx retransmission (RFC 3261 §13.3.1.4): resend at T1, doubling up to T2, until the
 * ACK arrives; after 64*T1 without one the session is abandoned (the dialog sends BYE).
 */
import type { Clock, Timer } from '../util/clock.ts';
import type { SipResponse } from './message.ts';
import type { Destination, TimerConfig } from './transaction-types.ts';

export class Dialog2xxRetransmitter {
  private tick: Timer | undefined;
  private giveUp: Timer | undefined;
  /** CSeq number of the INVITE whose 2xx awaits an ACK. */
  pendingCseq: number | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly timers: TimerConfig,
    private readonly send: (res: SipResponse, dest: Destination) => void,
    private readonly onAckTimeout: () => void,
  ) {}

  start(res: SipResponse, dest: Destination, cseq: number): void {
    this.stop();
    this.pendingCseq = cseq;
    // Over a reliable transport the 2xx is not retransmitted, but the ACK is still awaited.
    if (dest.transport === 'udp') this.schedule(res, dest, this.timers.t1Ms);
    this.giveUp = this.clock.setTimeout(() => {
      this.stop();
      this.onAckTimeout();
    }, 64 * this.timers.t1Ms);
  }

  private schedule(res: SipResponse, dest: Destination, ms: number): void {
    this.tick = this.clock.setTimeout(() => {
      this.send(res, dest);
      this.schedule(res, dest, Math.min(2 * ms, this.timers.t2Ms));
    }, ms);
  }

  /** True when `cseq` acknowledged the pending 2xx. */
  ack(cseq: number): boolean {
    if (this.pendingCseq !== cseq) return false;
    this.stop();
    return true;
  }

  get waiting(): boolean {
    return this.pendingCseq !== undefined;
  }

  stop(): void {
    this.tick?.cancel();
    this.giveUp?.cancel();
    this.tick = undefined;
    this.giveUp = undefined;
    this.pendingCseq = undefined;
  }
}
