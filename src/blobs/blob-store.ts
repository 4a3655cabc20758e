/**
 * The storage boundary for large per-call files (recordings, call tapes): a key → bytes store
 * with the few operations the engine needs. Two implementations: LocalBlobStore (files under the
 * data directory, today's behaviour and the default) and S3BlobStore (an S3-compatible bucket).
 * Keys are relative, slash-separated paths (`recordings/<uuid>.wav`), the same on both.
 */
import type { Readable } from 'node:stream';

/** An inclusive byte range already resolved against the object's size (`start <= end < size`). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobInfo {
  size: number;
}

export interface BlobRead extends BlobInfo {
  /** The bytes asked for: the whole object, or `range`. The reader must consume or destroy it. */
  body: Readable;
  /** Set when a range was asked for. */
  range?: ByteRange;
}

/** What to store: bytes in memory, or a local file (streamed or sent in parts, never read whole when large). */
export type BlobSource = { bytes: Uint8Array } | { file: string };

export interface PutOptions {
  contentType?: string;
}

export interface BlobStore {
  /** For logs: `local`, `s3://bucket`. */
  readonly label: string;
  put(key: string, source: BlobSource, opts?: PutOptions): Promise<void>;
  /** Undefined when there is no such object. */
  get(key: string, range?: ByteRange): Promise<BlobRead | undefined>;
  head(key: string): Promise<BlobInfo | undefined>;
  /** Deleting what is not there is not an error. */
  delete(key: string): Promise<void>;
  /** Releases connections (an S3 client's keep-alive sockets). */
  close?(): void;
}

/** Keys are relative paths of plain segments: no `..`, no empty or dot segments, no backslash or NUL. */
export function isValidKey(key: string): boolean {
  if (key.length === 0 || key.length > 512 || key.startsWith('/') || /[\\\0]/.test(key)) return false;
  return key.split('/').every((seg) => seg.length > 0 && seg !== '.' && seg !== '..');
}

export function assertValidKey(key: string): void {
  if (!isValidKey(key)) throw new Error(`invalid blob key ${JSON.stringify(key.slice(0, 80))}`);
}
