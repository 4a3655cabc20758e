/**
 * Timer bookkeeping shared by the four transaction state machines. Each named timer is held
 * once; restarting replaces it, and terminate() cancels all so no timer outlives its transaction.
 */
import type { Clock, Timer } from '../util/clock.ts';
import type { TimerConfig, TxAction, TxEmit } from './transaction-types.ts';

export interface TxContext {
  clock: Clock;
  timers: TimerConfig;
  emit: TxEmit;
}

export abstract class TransactionBase {
  private readonly running = new Map<string, Timer>();
  private done = false;

  protected constructor(protected readonly ctx: TxContext) {}

  get isTerminated(): boolean {
    return this.done;
  }

  /** Timers currently scheduled by this transaction (tests assert it drops to zero). */
  get timerCount(): number {
    return this.running.size;
  }

  protected startTimer(name: string, ms: number, onFire: () => void): void {
    this.stopTimer(name);
    const t = this.ctx.clock.setTimeout(() => {
      this.running.delete(name);
      if (!this.done) onFire();
    }, ms);
    this.running.set(name, t);
  }

  protected stopTimer(name: string): void {
    this.running.get(name)?.cancel();
    this.running.delete(name);
  }

  protected emit(action: TxAction): void {
    if (!this.done) this.ctx.emit(action);
  }

  /** Cancels every timer and reports `terminated` exactly once. */
  terminate(): void {
    if (this.done) return;
    for (const t of this.running.values()) t.cancel();
    this.running.clear();
    this.ctx.emit({ type: 'terminated' });
    this.done = true;
    this.onTerminated();
  }

  protected onTerminated(): void {}
}
