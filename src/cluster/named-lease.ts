/**
 * A named lease kept by this node: tries to take it, renews it while held, tells the owner when
 * it is gained and lost, and gives it up on stop. The decisions are LeaseCore's; this file only
 * sleeps until the core's `wakeAtMs` and talks to the store.
 */
import type { LeasesRepo } from '../store/repos/leases.ts';
import type { Clock, Timer } from '../util/clock.ts';
import { LeaseCore, type LeaseChange, type LeaseTiming } from './lease-core.ts';

export interface NamedLeaseOptions {
  leases: Pick<LeasesRepo, 'take' | 'release'>;
  name: string;
  holder: string;
  clock: Clock;
  timing: LeaseTiming;
  logger: { info(o: object, m?: string): void; warn(o: object, m?: string): void };
  /** Called when this node starts holding the lease, and when it stops (lost, or stop()). */
  onChange?: (held: boolean) => void;
}

export class NamedLease {
  private readonly core: LeaseCore;
  private timer: Timer | undefined;
  private stopped = true;
  private step: Promise<void> | undefined;

  constructor(private readonly o: NamedLeaseOptions) {
    this.core = new LeaseCore(o.timing, o.clock.now());
  }

  get name(): string {
    return this.o.name;
  }

  /** True while this node may do the lease's work. */
  get held(): boolean {
    return this.core.holds(this.o.clock.now());
  }

  /** Starts keeping the lease; resolves after the first attempt to take it. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.wake();
  }

  /** Stops renewing; gives the lease up when held, so another node takes over at once. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.step;
    const wasHeld = this.held;
    if (wasHeld) await this.o.leases.release(this.o.name, this.o.holder).catch(() => false);
    this.apply(this.core.released(this.o.clock.now()));
  }

  private wake(): Promise<void> {
    this.step ??= this.run().finally(() => {
      this.step = undefined;
      this.arm();
    });
    return this.step;
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer?.cancel();
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      void this.wake();
    }, Math.max(0, this.core.wakeAtMs - this.o.clock.now()));
  }

  private async run(): Promise<void> {
    const { clock } = this.o;
    this.apply(this.core.tick(clock.now()));
    const step = this.core.due(clock.now());
    if (!step || this.stopped) return;
    let change: LeaseChange;
    try {
      const ok = await this.o.leases.take(this.o.name, this.o.holder, clock.now(), this.o.timing.ttlMs);
      change = ok ? this.core.granted(clock.now()) : this.core.refused(clock.now());
    } catch (err) {
      this.o.logger.warn({ lease: this.o.name, err: (err as Error).message }, 'lease could not be renewed');
      change = this.core.failed(clock.now());
    }
    this.apply(change);
  }

  private apply(change: LeaseChange): void {
    if (change === null) return;
    this.o.logger.info({ lease: this.o.name, holder: this.o.holder }, change === 'gained' ? 'lease gained' : 'lease lost');
    this.o.onChange?.(change === 'gained');
  }
}
