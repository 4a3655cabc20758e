/**
 * The call heartbeat: every `periodMs` the records of all answered calls live in this process
 * are stamped alive (`calls.last_alive_at`) in one UPDATE, however many calls there are: one
 * timer for the process, not one per call. If the process dies without ending its calls (a
 * crash, SIGKILL, power), the next start closes each such record at its last stamp (sweeper.ts
 * `closeOrphans`) and bills it by that length, at most one period short of the real one.
 *
 * A beat that fails (store busy) is logged and the next one tries again; beats never overlap.
 */
import type { Logger } from 'pino';
import type { CallsRepo } from '../store/repos/calls.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { CallRegistry } from './call-registry.ts';

/** How often live calls are stamped by default (SWITCHBOARD_CALL_HEARTBEAT_SECONDS). */
export const CALL_HEARTBEAT_MS = 15_000;

export interface CallHeartbeatDeps {
  registry: Pick<CallRegistry, 'list'>;
  calls: Pick<CallsRepo, 'markAlive'>;
  /** The store's clock: stamps are compared with the records' answer times. */
  clock: Clock;
  logger: Logger;
  periodMs?: number;
}

export class CallHeartbeat {
  private timer: Timer | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;
  private readonly periodMs: number;

  constructor(private readonly deps: CallHeartbeatDeps) {
    this.periodMs = deps.periodMs ?? CALL_HEARTBEAT_MS;
    if (!(this.periodMs > 0)) throw new RangeError(`heartbeat period must be > 0 ms, got ${this.periodMs}`);
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.arm();
  }

  /** One beat now: stamps every answered live call; resolves with how many records were stamped. */
  async beat(): Promise<number> {
    const ids = this.deps.registry
      .list()
      .filter((s) => s.state === 'active')
      .map((s) => s.recordId);
    if (ids.length === 0) return 0;
    return this.deps.calls.markAlive(ids, this.deps.clock.now());
  }

  /** No more beats; waits for one under way (call before the store closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.beating;
  }

  private arm(): void {
    this.timer = this.deps.clock.setTimeout(() => {
      this.beating = this.beat()
        .then(() => undefined)
        .catch((err: unknown) => this.deps.logger.error({ err: (err as Error).message }, 'call heartbeat could not be written'))
        .finally(() => {
          this.beating = undefined;
          if (!this.stopped) this.arm();
        });
    }, this.periodMs);
  }
}
