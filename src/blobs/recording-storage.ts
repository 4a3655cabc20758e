/**
 * Where a call's recording and tape live, for everything that reads, archives or deletes them.
 * They are always written under the data directory first (the recorder writes them when the call
 * is over); with a bucket configured the archive then uploads each one and removes the local
 * copy once the bucket confirms it (HeadObject, same size). Until then, and for as long as the
 * bucket is unreachable, the local file is the copy that is served: a read tries the local file
 * first and then the bucket, under the same key (`recordings/<uuid>.wav`).
 *
 * Uploads and deletions go through ArchiveQueue (retried with backoff, never dropped); on start
 * `recover()` queues every file a previous run left under `recordings/`, so a restart during an
 * outage loses nothing either.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../util/clock.ts';
import { isValidKey, type BlobStore, type ByteRange } from './blob-store.ts';
import { ArchiveQueue, type ArchiveJob, type BackoffPolicy } from './archive-queue.ts';
import { resolveRange } from './byte-range.ts';
import type { LocalBlobStore } from './local-blob-store.ts';
import { describeS3Error } from './s3-errors.ts';
import type { Readable } from 'node:stream';

/** The folder under the data dir (and the key prefix in the bucket) of recordings and tapes. */
export const RECORDINGS_PREFIX = 'recordings';

export type RecordingRead =
  | { kind: 'missing' }
  | { kind: 'unsatisfiable'; size: number }
  | { kind: 'ok'; size: number; body: Readable; range?: ByteRange; from: 'local' | 'remote' };

export interface RecordingStorageOptions {
  local: LocalBlobStore;
  /** The bucket; absent: files stay local (today's behaviour). */
  remote?: BlobStore | undefined;
  clock: Clock;
  logger: Logger;
  backoff?: BackoffPolicy;
  concurrency?: number;
}

export interface ArchiveStats {
  uploaded: number;
  deleted: number;
  failures: number;
}

export function contentTypeOf(key: string): string {
  if (key.endsWith('.wav')) return 'audio/wav';
  if (key.endsWith('.json')) return 'application/json';
  return 'application/octet-stream';
}

export class RecordingStorage {
  readonly local: LocalBlobStore;
  readonly remote: BlobStore | undefined;
  readonly stats: ArchiveStats = { uploaded: 0, deleted: 0, failures: 0 };
  private readonly queue: ArchiveQueue;
  private readonly clock: Clock;
  private readonly log: Logger;
  private timer: Timer | undefined;
  private timerAtMs: number | undefined;
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(opts: RecordingStorageOptions) {
    this.local = opts.local;
    this.remote = opts.remote;
    this.clock = opts.clock;
    this.log = opts.logger.child({ part: 'recording-archive' });
    this.queue = new ArchiveQueue(opts.backoff ?? { baseMs: 2_000, maxMs: 300_000 }, opts.concurrency ?? 2);
  }

  /** Whether finished files go to a bucket. */
  get archiving(): boolean {
    return this.remote !== undefined;
  }

  /** Keys still owed an upload or a deletion. */
  get pendingCount(): number {
    return this.queue.size;
  }

  /**
   * A stored key's bytes, or the range `rangeHeader` asks for (an HTTP Range header value): the
   * local copy if there is one, else the bucket's.
   */
  async read(key: string, rangeHeader?: string): Promise<RecordingRead> {
    if (!isValidKey(key)) return { kind: 'missing' };
    const sources: Array<[BlobStore, 'local' | 'remote']> = [[this.local, 'local']];
    if (this.remote) sources.push([this.remote, 'remote']);
    for (const [store, from] of sources) {
      const info = await store.head(key);
      if (!info) continue;
      const decision = resolveRange(rangeHeader, info.size);
      if (decision.kind === 'unsatisfiable') return { kind: 'unsatisfiable', size: info.size };
      const got = await store.get(key, decision.kind === 'partial' ? decision.range : undefined);
      // Gone between the two requests (archived, or deleted): try the next place.
      if (!got) continue;
      return { kind: 'ok', size: got.size, body: got.body, from, ...(got.range ? { range: got.range } : {}) };
    }
    return { kind: 'missing' };
  }

  /** Files a finished call wrote (keys under the data dir): uploaded when a bucket is configured. */
  archive(keys: ReadonlyArray<string | null | undefined>): void {
    if (!this.remote || this.closed) return;
    for (const key of keys) if (key && isValidKey(key)) this.queue.upload(key, this.clock.now());
    this.pump();
  }

  /** A call's files are to go (its call or assistant was deleted): local copy and object both. */
  remove(keys: ReadonlyArray<string | null | undefined>): void {
    if (this.closed) return;
    for (const key of keys) if (key && isValidKey(key)) this.queue.delete(key, this.clock.now());
    this.pump();
  }

  /** On start: queue the upload of every recording and tape a previous run left local. */
  async recover(): Promise<number> {
    if (!this.remote) return 0;
    let names: string[];
    try {
      names = await readdir(path.dirname(this.local.pathOf(`${RECORDINGS_PREFIX}/x`)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    // Temporary names (`.part`) are writes that never completed: not a recording.
    const keys = names.filter((n) => !n.endsWith('.part')).map((n) => `${RECORDINGS_PREFIX}/${n}`);
    this.archive(keys);
    if (keys.length > 0) this.log.info({ files: keys.length, to: this.remote.label }, 'recording archive: uploading what a previous run left local');
    return keys.length;
  }

  /** Resolves once nothing is owed (tests, drain); never rejects. */
  whenIdle(): Promise<void> {
    if (this.queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** No new work; waits for the running jobs (each bounded by the store's request timeouts). What is owed stays local and is queued again by the next start's recover(). */
  async close(): Promise<void> {
    this.closed = true;
    this.timer?.cancel();
    this.timer = undefined;
    await Promise.allSettled([...this.running]);
    this.remote?.close?.();
  }

  private pump(): void {
    if (this.closed) return;
    const now = this.clock.now();
    for (const job of this.queue.take(now)) {
      const run = this.run(job).finally(() => {
        this.running.delete(run);
        this.pump();
      });
      this.running.add(run);
    }
    if (this.queue.size === 0) this.idleWaiters.splice(0).forEach((r) => r());
    const at = this.queue.wakeAtMs;
    if (at === undefined || at <= now) return; // nothing waits, or a due job waits for a running slot (its settle pumps)
    if (this.timer && this.timerAtMs === at) return;
    this.timer?.cancel();
    this.timerAtMs = at;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.timerAtMs = undefined;
      this.pump();
    }, at - now);
  }

  private async run(job: ArchiveJob): Promise<void> {
    try {
      if (job.op === 'upload') await this.upload(job.key);
      else await this.delete(job.key);
      this.queue.settle(job, true, this.clock.now());
    } catch (err) {
      this.stats.failures++;
      const retryInMs = this.queue.settle(job, false, this.clock.now());
      // The S3 error's message, status and code: never a header, a URL with a signature or a key.
      this.log.warn({ key: job.key, op: job.op, attempt: job.attempt, retryInMs, ...describeS3Error(err) }, `recording archive: ${job.op} failed; will retry`);
    }
  }

  private async upload(key: string): Promise<void> {
    const remote = this.remote!;
    const here = await this.local.head(key);
    if (!here) return; // archived already, or deleted meanwhile
    await remote.put(key, { file: this.local.pathOf(key) }, { contentType: contentTypeOf(key) });
    const there = await remote.head(key);
    if (!there || there.size !== here.size) throw new Error(`upload of ${key} not confirmed: ${there ? `${there.size} bytes` : 'no object'} in ${remote.label}, ${here.size} here`);
    await this.local.delete(key);
    this.stats.uploaded++;
    this.log.info({ key, bytes: here.size, to: remote.label }, 'recording archive: uploaded; local copy removed');
  }

  private async delete(key: string): Promise<void> {
    await this.local.delete(key);
    if (this.remote) await this.remote.delete(key);
    this.stats.deleted++;
  }
}
