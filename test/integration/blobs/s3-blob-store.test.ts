/**
 * S3BlobStore over real HTTP against the S3 stand-in (test/support/s3-server.ts), which verifies
 * every request's SigV4 signature and payload hash with the test credentials.
 */
import crypto from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../../../src/config.ts';
import { S3BlobStore } from '../../../src/blobs/s3-blob-store.ts';
import { describeS3Error } from '../../../src/blobs/s3-errors.ts';
import { S3StandIn } from '../../support/s3-server.ts';

const BUCKET = 'switchboard-recordings';
let s3: S3StandIn;
const dir = mkdtempSync(path.join(tmpdir(), 'sb-s3-store-'));

beforeAll(async () => {
  s3 = await S3StandIn.start({ buckets: [BUCKET], minPartBytes: 64 * 1024 });
});
afterAll(async () => {
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

function storeWith(over: { secret?: string; bucket?: string } = {}, opts: ConstructorParameters<typeof S3BlobStore>[1] = {}): S3BlobStore {
  return new S3BlobStore(
    {
      bucket: over.bucket ?? BUCKET,
      region: s3.region,
      endpoint: s3.endpoint,
      credentials: { accessKeyId: s3.credentials.accessKeyId, secretAccessKey: over.secret ?? s3.credentials.secretAccessKey },
    },
    opts,
  );
}

async function bytes(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('S3BlobStore against a SigV4-verifying S3 server', () => {
  it('puts bytes, reads them back whole and by range, heads and deletes them', async () => {
    const store = storeWith();
    const data = crypto.randomBytes(1000);
    await store.put('recordings/x y+z.json', { bytes: data }, { contentType: 'application/json' });
    expect(s3.objectBytes(BUCKET, 'recordings/x y+z.json')?.equals(data)).toBe(true);
    expect(await store.head('recordings/x y+z.json')).toEqual({ size: 1000 });
    const whole = await store.get('recordings/x y+z.json');
    expect(whole?.size).toBe(1000);
    expect((await bytes(whole!.body)).equals(data)).toBe(true);
    const part = await store.get('recordings/x y+z.json', { start: 990, end: 999 });
    expect(part?.size).toBe(1000);
    expect((await bytes(part!.body)).equals(data.subarray(990))).toBe(true);
    await store.delete('recordings/x y+z.json');
    await store.delete('recordings/x y+z.json'); // absent: still fine
    expect(await store.head('recordings/x y+z.json')).toBeUndefined();
    expect(await store.get('recordings/x y+z.json')).toBeUndefined();
    store.close();
  });

  it('a file up to the single-PUT size goes in one PutObject', async () => {
    const store = storeWith({}, { singlePutMaxBytes: 300 * 1024 });
    const file = path.join(dir, 'small.wav');
    const data = crypto.randomBytes(200 * 1024);
    writeFileSync(file, data);
    const before = s3.requests.length;
    await store.put('recordings/small.wav', { file }, { contentType: 'audio/wav' });
    expect(s3.requests.slice(before).map((r) => r.op)).toEqual(['PutObject']);
    expect(s3.objectBytes(BUCKET, 'recordings/small.wav')?.equals(data)).toBe(true);
    store.close();
  });

  it('a larger file goes as a multipart upload, part by part, byte-identical', async () => {
    const store = storeWith({}, { singlePutMaxBytes: 100 * 1024, partBytes: 64 * 1024 });
    const file = path.join(dir, 'big.wav');
    const data = crypto.randomBytes(64 * 1024 * 3 + 123);
    writeFileSync(file, data);
    const before = s3.requests.length;
    await store.put('recordings/big.wav', { file }, { contentType: 'audio/wav' });
    const ops = s3.requests.slice(before).map((r) => `${r.op}:${r.status}`);
    expect(ops).toEqual(['CreateMultipartUpload:200', 'UploadPart:200', 'UploadPart:200', 'UploadPart:200', 'UploadPart:200', 'CompleteMultipartUpload:200']);
    expect(s3.objectBytes(BUCKET, 'recordings/big.wav')?.equals(data)).toBe(true);
    expect(s3.openUploads).toBe(0);
    store.close();
  });

  it('a refused multipart upload (parts under the server minimum) rejects and is aborted, leaving no parts', async () => {
    const store = storeWith({}, { singlePutMaxBytes: 10 * 1024, partBytes: 16 * 1024 });
    const file = path.join(dir, 'tiny-parts.wav');
    writeFileSync(file, crypto.randomBytes(40 * 1024));
    const err = await store.put('recordings/tiny-parts.wav', { file }).catch((e: unknown) => e);
    expect(describeS3Error(err)).toMatchObject({ status: 400, code: 'EntityTooSmall' });
    expect(s3.requests.at(-1)).toMatchObject({ op: 'AbortMultipartUpload', status: 204 });
    expect(s3.openUploads).toBe(0);
    expect(s3.objectBytes(BUCKET, 'recordings/tiny-parts.wav')).toBeUndefined();
    store.close();
  });

  it('a wrong secret is refused by signature (403 SignatureDoesNotMatch); the error names no secret', async () => {
    const store = storeWith({ secret: 'not-the-secret' });
    const err = await store.put('recordings/denied.json', { bytes: Buffer.from('{}') }).catch((e: unknown) => e);
    const described = describeS3Error(err);
    expect(described).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(JSON.stringify(described)).not.toContain('not-the-secret');
    expect(JSON.stringify(described)).not.toContain(s3.credentials.secretAccessKey);
    expect(s3.objectBytes(BUCKET, 'recordings/denied.json')).toBeUndefined();
    store.close();
  });

  it('takes its credentials from the frozen config as loaded from the environment', async () => {
    const config = loadConfig({ SWITCHBOARD_DATA_DIR: dir, ...s3.env(BUCKET) });
    expect(Object.isFrozen(config.s3!.credentials)).toBe(true);
    const store = new S3BlobStore(config.s3!);
    await store.put('recordings/frozen.json', { bytes: Buffer.from('{}') });
    expect(await store.head('recordings/frozen.json')).toEqual({ size: 2 });
    store.close();
  });

  it('a missing bucket is an error, not a missing object', async () => {
    const store = storeWith({ bucket: 'no-such-bucket' });
    const err = await store.get('recordings/a.wav').catch((e: unknown) => e);
    expect(describeS3Error(err)).toMatchObject({ status: 404, code: 'NoSuchBucket' });
    store.close();
  });

  it('the server refuses what is unsigned, or changed after signing, as S3 does', async () => {
    const anon = await fetch(`${s3.endpoint}/${BUCKET}/recordings/raw.json`);
    expect(anon.status).toBe(403);
    expect(await anon.text()).toMatch(/^<\?xml[\s\S]*<Error><Code>AccessDenied<\/Code>/);
    // A real client whose signed request is altered on its way out (after the signer ran).
    const tampered = async (alter: (req: { path: string; body: unknown; headers: Record<string, string> }) => void): Promise<unknown> => {
      const client = new S3Client({
        region: s3.region,
        endpoint: s3.endpoint,
        forcePathStyle: true,
        credentials: s3.credentials,
        maxAttempts: 1,
        requestChecksumCalculation: 'WHEN_REQUIRED',
      });
      client.middlewareStack.add(
        (next) => async (args) => {
          alter((args as unknown as { request: { path: string; body: unknown; headers: Record<string, string> } }).request);
          return next(args);
        },
        { step: 'deserialize', name: 'tamper' },
      );
      try {
        return await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'recordings/raw.json', Body: Buffer.from('{"a":1}'), ContentType: 'application/json' }));
      } catch (err) {
        return err;
      } finally {
        client.destroy();
      }
    };
    expect(await tampered(() => undefined)).toMatchObject({ $metadata: { httpStatusCode: 200 } });
    expect(describeS3Error(await tampered((r) => void (r.body = Buffer.from('{"a":2}'))))).toMatchObject({ status: 400, code: 'XAmzContentSHA256Mismatch' });
    expect(describeS3Error(await tampered((r) => void (r.headers['content-type'] = 'text/plain')))).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(describeS3Error(await tampered((r) => void (r.path = r.path.replace('raw.json', 'other.json'))))).toMatchObject({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(s3.keys(BUCKET)).not.toContain('recordings/other.json');
    expect(s3.objectBytes(BUCKET, 'recordings/raw.json')?.toString()).toBe('{"a":1}');
  });
});
