/**
 * Call control's additions to the call record's `details` (transfer legs, voicemail verdict,
 * assistant swaps, collected keypad input). Writes are read-merge-write, chained per call so two
 * of ours never lose each other's keys; `flush()` is awaited before the session closes, because
 * the recorder's own end-of-call write merges `details` the same way and must come after.
 */
import type { CallsRepo } from '../../store/repos/calls.ts';

export class DetailsWriter {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly calls: Pick<CallsRepo, 'getById' | 'update'>,
    private readonly callId: number,
    private readonly onError: (err: Error) => void = () => undefined,
  ) {}

  /** Sets top-level keys of `details`. */
  set(patch: Record<string, unknown>): Promise<void> {
    return this.apply((d) => ({ ...d, ...patch }));
  }

  /** Appends to an array under `key`. */
  push(key: string, item: Record<string, unknown>): Promise<void> {
    return this.apply((d) => ({ ...d, [key]: [...(Array.isArray(d[key]) ? (d[key] as unknown[]) : []), item] }));
  }

  flush(): Promise<void> {
    return this.chain;
  }

  private apply(fn: (d: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
    this.chain = this.chain
      .then(async () => {
        const row = await this.calls.getById(this.callId);
        await this.calls.update(this.callId, { details: fn(row?.details ?? {}) });
      })
      .catch((err: unknown) => this.onError(err as Error));
    return this.chain;
  }
}
