/**
 * Blobs in an S3-compatible bucket, on @aws-sdk/client-s3. A custom endpoint (MinIO, Ceph,
 * Garage...) gets path-style addressing (`<endpoint>/<bucket>/<key>`), which every such server
 * speaks; without one, AWS's own virtual-hosted endpoint for the region.
 *
 * Uploads from a file: one PutObject up to `singlePutMaxBytes` (16 MiB: about 2 minutes of a
 * stereo 16 kHz recording), else a multipart upload in `partBytes` parts (8 MiB; S3 wants 5 MiB
 * at least for every part but the last), read from the file part by part so a 20-minute
 * recording (about 77 MB) never sits in memory whole. A failed multipart upload is aborted, so
 * its parts do not linger in the bucket.
 *
 * Payloads are signed (SigV4 with the body's SHA-256) and the SDK's optional CRC checksums are
 * sent only where S3 requires them: the same requests then work on S3-compatible servers that do
 * not implement the newer checksum headers.
 */
import { open, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { S3Config } from '../config.ts';
import { assertValidKey, type BlobInfo, type BlobRead, type BlobSource, type BlobStore, type ByteRange, type PutOptions } from './blob-store.ts';

export interface S3BlobStoreOptions {
  /** Largest file sent in one PutObject (default 16 MiB). */
  singlePutMaxBytes?: number;
  /** Part size of a multipart upload (default 8 MiB; S3 refuses parts under 5 MiB but the last). */
  partBytes?: number;
  /** Per-request timeout (default 60 s) and TCP connect timeout (default 5 s). */
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
}

const MiB = 1024 * 1024;

export class S3BlobStore implements BlobStore {
  readonly label: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly singlePutMaxBytes: number;
  private readonly partBytes: number;

  constructor(config: Pick<S3Config, 'bucket' | 'region' | 'endpoint' | 'credentials'>, opts: S3BlobStoreOptions = {}) {
    this.bucket = config.bucket;
    this.label = `s3://${config.bucket}`;
    this.singlePutMaxBytes = opts.singlePutMaxBytes ?? 16 * MiB;
    this.partBytes = Math.max(1, opts.partBytes ?? 8 * MiB);
    this.client = new S3Client({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint, forcePathStyle: true } : {}),
      // A copy: the SDK marks the credentials object it is given, and the config's is frozen.
      ...(config.credentials ? { credentials: { ...config.credentials } } : {}),
      // The archive retries with its own backoff; one SDK retry covers a dropped keep-alive socket.
      maxAttempts: 2,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { requestTimeout: opts.requestTimeoutMs ?? 60_000, connectionTimeout: opts.connectTimeoutMs ?? 5_000 },
    });
  }

  async put(key: string, source: BlobSource, opts: PutOptions = {}): Promise<void> {
    assertValidKey(key);
    const ContentType = opts.contentType ?? 'application/octet-stream';
    if ('bytes' in source) {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: source.bytes, ContentType }));
      return;
    }
    const size = (await stat(source.file)).size;
    if (size <= this.singlePutMaxBytes) {
      const handle = await open(source.file, 'r');
      try {
        const bytes = await handle.readFile();
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType }));
      } finally {
        await handle.close();
      }
      return;
    }
    await this.putMultipart(key, source.file, size, ContentType);
  }

  private async putMultipart(key: string, file: string, size: number, ContentType: string): Promise<void> {
    const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType }));
    const UploadId = created.UploadId;
    if (!UploadId) throw new Error('S3 CreateMultipartUpload returned no UploadId');
    const handle = await open(file, 'r');
    try {
      const parts: { PartNumber: number; ETag: string }[] = [];
      const buf = Buffer.allocUnsafe(Math.min(this.partBytes, size));
      for (let offset = 0, PartNumber = 1; offset < size; offset += this.partBytes, PartNumber++) {
        const length = Math.min(this.partBytes, size - offset);
        const { bytesRead } = await handle.read(buf, 0, length, offset);
        if (bytesRead !== length) throw new Error(`file shrank while uploading (${file})`);
        const res = await this.client.send(
          new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId, PartNumber, Body: buf.subarray(0, length), ContentLength: length }),
        );
        if (!res.ETag) throw new Error(`S3 UploadPart ${PartNumber} returned no ETag`);
        parts.push({ PartNumber, ETag: res.ETag });
      }
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }));
    } catch (err) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId })).catch(() => undefined);
      throw err;
    } finally {
      await handle.close();
    }
  }

  async get(key: string, range?: ByteRange): Promise<BlobRead | undefined> {
    assertValidKey(key);
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      const body = res.Body as Readable | undefined;
      if (!body) throw new Error('S3 GetObject returned no body');
      const total = range ? sizeFromContentRange(res.ContentRange) : res.ContentLength;
      if (total === undefined) {
        body.destroy();
        throw new Error('S3 GetObject did not say the object size');
      }
      return { size: total, body, ...(range ? { range } : {}) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async head(key: string): Promise<BlobInfo | undefined> {
    assertValidKey(key);
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: res.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  close(): void {
    this.client.destroy();
  }
}

function sizeFromContentRange(header: string | undefined): number | undefined {
  const m = header ? /\/(\d+)\s*$/.exec(header) : null;
  return m ? Number(m[1]) : undefined;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  // A missing bucket is a configuration error, not a missing object.
  if (e?.name === 'NoSuchBucket') return false;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
