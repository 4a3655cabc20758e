/**
 * The archive's bookkeeping, a pure core on a caller's clock (no timer, no I/O): which keys are
 * owed an upload (local file → bucket, then the local copy removed) or a deletion (both copies),
 * when each may run next, and what a failure costs. The adapter (recording-archive.ts) asks
 * `take(nowMs)` for the jobs due, runs them, reports each with `settle`, and sleeps until
 * `wakeAtMs`.
 *
 * Per key at most one job runs at a time. A deletion asked for while an upload of the same key
 * runs waits for it and then runs (so the freshly uploaded object goes too); an upload asked for
 * a key whose deletion is owed is dropped. A failure is retried after base·2^(n-1) ms, capped:
 * never given up on, since giving up on an upload would mean keeping the file local forever
 * unbeknown, and on a deletion leaving a customer's recording behind.
 */
export type ArchiveOp = 'upload' | 'delete';

export interface ArchiveJob {
  key: string;
  op: ArchiveOp;
  /** 1 for the first try. */
  attempt: number;
}

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

interface Entry {
  op: ArchiveOp;
  /** Failures so far of this op. */
  failures: number;
  dueAtMs: number;
  running: boolean;
  /** A deletion asked for while this entry's upload ran. */
  deleteAfter: boolean;
}

export function backoffMs(policy: BackoffPolicy, failures: number): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
}

export class ArchiveQueue {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly policy: BackoffPolicy,
    /** At most this many jobs run at once. */
    private readonly concurrency = 2,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** What is owed for `key`, if anything. */
  pending(key: string): ArchiveOp | undefined {
    return this.entries.get(key)?.op;
  }

  upload(key: string, nowMs: number): void {
    if (this.entries.has(key)) return; // already owed an upload, or a deletion that wins
    this.entries.set(key, { op: 'upload', failures: 0, dueAtMs: nowMs, running: false, deleteAfter: false });
  }

  delete(key: string, nowMs: number): void {
    const e = this.entries.get(key);
    if (e?.running && e.op === 'upload') {
      e.deleteAfter = true;
      return;
    }
    if (e?.op === 'delete') {
      // Asked again: no need to wait out a backoff.
      if (!e.running) e.dueAtMs = Math.min(e.dueAtMs, nowMs);
      return;
    }
    this.entries.set(key, { op: 'delete', failures: 0, dueAtMs: nowMs, running: false, deleteAfter: false });
  }

  /** The jobs to start now (marked running), within the concurrency limit, oldest due first. */
  take(nowMs: number): ArchiveJob[] {
    let running = 0;
    for (const e of this.entries.values()) if (e.running) running++;
    const due = [...this.entries.entries()].filter(([, e]) => !e.running && e.dueAtMs <= nowMs).sort((a, b) => a[1].dueAtMs - b[1].dueAtMs);
    const jobs: ArchiveJob[] = [];
    for (const [key, e] of due) {
      if (running >= this.concurrency) break;
      e.running = true;
      running++;
      jobs.push({ key, op: e.op, attempt: e.failures + 1 });
    }
    return jobs;
  }

  /** A job is over: `ok` drops it (or turns it into the deletion asked for meanwhile); a failure schedules a retry. Returns the retry delay, if any. */
  settle(job: Pick<ArchiveJob, 'key' | 'op'>, ok: boolean, nowMs: number): number | undefined {
    const e = this.entries.get(job.key);
    if (!e || !e.running || e.op !== job.op) return undefined;
    e.running = false;
    if (e.deleteAfter) {
      this.entries.set(job.key, { op: 'delete', failures: 0, dueAtMs: nowMs, running: false, deleteAfter: false });
      return undefined;
    }
    if (ok) {
      this.entries.delete(job.key);
      return undefined;
    }
    e.failures++;
    const delay = backoffMs(this.policy, e.failures);
    e.dueAtMs = nowMs + delay;
    return delay;
  }

  /** When the next waiting job is due; undefined when nothing waits (running jobs wake the adapter when they settle). */
  get wakeAtMs(): number | undefined {
    let at: number | undefined;
    for (const e of this.entries.values()) if (!e.running && (at === undefined || e.dueAtMs < at)) at = e.dueAtMs;
    return at;
  }
}
