/**
 * S3BlobStore against a third-party S3 implementation, moto's server (moto_server, from the
 * Python package moto), when it is on PATH: the same requests the stand-in verifies are accepted
 * by an implementation we did not write, with S3's 5 MiB minimum part size enforced. Skipped,
 * saying so, where moto_server is not installed (it is not a Debian package).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3BlobStore } from '../../src/blobs/s3-blob-store.ts';

const available = spawnSync('sh', ['-c', 'command -v moto_server'], { encoding: 'utf8' }).status === 0;
if (!available) console.log('s3-moto interop: skipped, moto_server is not installed (pip package moto)');

const BUCKET = 'switchboard-interop';
const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
let moto: ChildProcess | undefined;
let endpoint = '';
const dir = mkdtempSync(path.join(tmpdir(), 'sb-s3-moto-'));

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function bytes(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe.skipIf(!available)('S3BlobStore ⇄ moto_server', () => {
  beforeAll(async () => {
    const port = await freePort();
    endpoint = `http://127.0.0.1:${port}`;
    moto = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    const deadline = Date.now() + 45_000;
    for (;;) {
      const up = await fetch(`${endpoint}/moto-api/`).then(() => true, () => false);
      if (up) break;
      if (Date.now() > deadline) throw new Error('moto_server did not start within 45 s');
      await new Promise((r) => setTimeout(r, 250));
    }
    const admin = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials });
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    admin.destroy();
  }, 60_000);

  afterAll(() => {
    moto?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('puts, reads whole and by range, heads and deletes; a large file goes up in 5 MiB parts', async () => {
    const store = new S3BlobStore({ bucket: BUCKET, region: 'us-east-1', endpoint, credentials }, { singlePutMaxBytes: 6 * 1024 * 1024, partBytes: 5 * 1024 * 1024 });
    const small = crypto.randomBytes(4096);
    await store.put('recordings/small.json', { bytes: small }, { contentType: 'application/json' });
    expect((await bytes((await store.get('recordings/small.json'))!.body)).equals(small)).toBe(true);
    const ranged = await store.get('recordings/small.json', { start: 100, end: 199 });
    expect(ranged?.size).toBe(4096);
    expect((await bytes(ranged!.body)).equals(small.subarray(100, 200))).toBe(true);

    const big = crypto.randomBytes(11 * 1024 * 1024 + 17);
    const file = path.join(dir, 'big.wav');
    writeFileSync(file, big);
    await store.put('recordings/big.wav', { file }, { contentType: 'audio/wav' });
    expect(await store.head('recordings/big.wav')).toEqual({ size: big.length });
    expect((await bytes((await store.get('recordings/big.wav'))!.body)).equals(big)).toBe(true);

    await store.delete('recordings/big.wav');
    await store.delete('recordings/small.json');
    expect(await store.head('recordings/big.wav')).toBeUndefined();
    expect(await store.get('recordings/small.json')).toBeUndefined();
    store.close();
  }, 60_000);
});
