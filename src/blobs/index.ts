/**
 * Object storage for recordings and call tapes (docs/OBJECT-STORAGE.md): the BlobStore boundary,
 * its local-disk and S3 implementations, and the RecordingStorage that serves, archives and
 * deletes a call's files.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../util/clock.ts';
import { LocalBlobStore } from './local-blob-store.ts';
import { RecordingStorage } from './recording-storage.ts';

export type { BlobStore, BlobRead, BlobInfo, BlobSource, ByteRange } from './blob-store.ts';
export { LocalBlobStore } from './local-blob-store.ts';
export { RecordingStorage, RECORDINGS_PREFIX, type RecordingRead } from './recording-storage.ts';

/**
 * The data dir's files, and the bucket when SWITCHBOARD_S3_BUCKET is set (the AWS SDK is loaded
 * only then: it is large, and an engine without a bucket has no use for it).
 */
export async function createRecordingStorage(config: Pick<Config, 'dataDir' | 's3'>, clock: Clock, logger: Logger): Promise<RecordingStorage> {
  const s3 = config.s3;
  const remote = s3 ? new (await import('./s3-blob-store.ts')).S3BlobStore(s3) : undefined;
  return new RecordingStorage({
    local: new LocalBlobStore(config.dataDir),
    remote,
    clock,
    logger,
    ...(s3 ? { backoff: { baseMs: s3.retryBaseMs, maxMs: s3.retryMaxMs } } : {}),
  });
}

const forConfig = new WeakMap<object, RecordingStorage>();

/** The context's storage; a context built without one (tests) gets the data dir's, files only. */
export function recordingsOf(ctx: { config: Pick<Config, 'dataDir'>; clock: Clock; logger: Logger; recordings?: RecordingStorage | undefined }): RecordingStorage {
  if (ctx.recordings) return ctx.recordings;
  let r = forConfig.get(ctx.config);
  if (!r) {
    r = new RecordingStorage({ local: new LocalBlobStore(ctx.config.dataDir), clock: ctx.clock, logger: ctx.logger });
    forConfig.set(ctx.config, r);
  }
  return r;
}
