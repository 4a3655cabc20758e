/**
 * RecordingStorage with the S3 stand-in: files are served from wherever they are, uploaded and
 * then removed locally, kept and served locally through an outage and retried (on a manual
 * clock) until the bucket takes them, deleted from both places, and recovered after a restart.
 */
import crypto from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalBlobStore } from '../../../src/blobs/local-blob-store.ts';
import { RecordingStorage, type RecordingRead } from '../../../src/blobs/recording-storage.ts';
import { S3BlobStore } from '../../../src/blobs/s3-blob-store.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { createLogger } from '../../../src/util/logger.ts';
import { S3StandIn } from '../../support/s3-server.ts';

const BUCKET = 'calls';
let s3: S3StandIn;
let dir: string;
let clock: ManualClock;
let logs: string[];
let storage: RecordingStorage;
let remote: S3BlobStore;

beforeAll(async () => {
  s3 = await S3StandIn.start({ buckets: [BUCKET] });
});
afterAll(() => s3?.close());

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sb-rec-storage-'));
  clock = new ManualClock();
  logs = [];
  remote = new S3BlobStore({ bucket: BUCKET, region: s3.region, endpoint: s3.endpoint, credentials: s3.credentials }, { connectTimeoutMs: 1000, requestTimeoutMs: 5000 });
  storage = make();
});
afterEach(async () => {
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

function make(): RecordingStorage {
  return new RecordingStorage({
    local: new LocalBlobStore(dir),
    remote,
    clock,
    logger: createLogger('info', { write: (line: string) => void logs.push(line) }),
    backoff: { baseMs: 1000, maxMs: 4000 },
  });
}

function writeLocal(key: string, size: number): Buffer {
  const data = crypto.randomBytes(size);
  mkdirSync(path.dirname(path.join(dir, key)), { recursive: true });
  writeFileSync(path.join(dir, key), data);
  return data;
}

async function body(read: RecordingRead): Promise<Buffer> {
  if (read.kind !== 'ok') throw new Error(`not readable: ${read.kind}`);
  const chunks: Buffer[] = [];
  for await (const c of read.body as Readable) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function until(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function idle(timeoutMs = 10_000): Promise<void> {
  await Promise.race([storage.whenIdle(), new Promise((_, reject) => setTimeout(() => reject(new Error('archive not idle')), timeoutMs))]);
}

describe('RecordingStorage: local first, archived to the bucket', () => {
  it('uploads a finished file, confirms it, removes the local copy, and serves it from the bucket byte-identical (with Range)', async () => {
    const wav = writeLocal('recordings/a.wav', 70_000);
    expect(await body(await storage.read('recordings/a.wav'))).toEqual(wav);
    storage.archive(['recordings/a.wav', null, undefined, '../escape']);
    await idle();
    expect(existsSync(path.join(dir, 'recordings/a.wav'))).toBe(false);
    expect(s3.objectBytes(BUCKET, 'recordings/a.wav')?.equals(wav)).toBe(true);
    const read = await storage.read('recordings/a.wav');
    expect(read).toMatchObject({ kind: 'ok', from: 'remote', size: 70_000 });
    expect((await body(read)).equals(wav)).toBe(true);
    const part = await storage.read('recordings/a.wav', 'bytes=-100');
    expect(part).toMatchObject({ kind: 'ok', from: 'remote', range: { start: 69_900, end: 69_999 } });
    expect((await body(part)).equals(wav.subarray(69_900))).toBe(true);
    expect(await storage.read('recordings/a.wav', 'bytes=70000-')).toEqual({ kind: 'unsatisfiable', size: 70_000 });
    expect(storage.stats.uploaded).toBe(1);
    expect(s3.keys(BUCKET)).toEqual(['recordings/a.wav']);
    storage.remove(['recordings/a.wav']);
    await idle();
  });

  it('through an outage the file stays local and is served from there; the upload is retried with backoff until the bucket is back', async () => {
    const tape = writeLocal('recordings/b.tape.json', 5_000);
    await s3.stop();
    try {
      storage.archive(['recordings/b.tape.json']);
      await until('the first failure', () => storage.stats.failures === 1);
      // Retried only when the backoff is over (1 s on the manual clock), then again after 2 s.
      clock.advance(999);
      await new Promise((r) => setTimeout(r, 200));
      expect(storage.stats.failures).toBe(1);
      clock.advance(1);
      await until('the second failure', () => storage.stats.failures === 2);
      expect(existsSync(path.join(dir, 'recordings/b.tape.json'))).toBe(true);
      const read = await storage.read('recordings/b.tape.json');
      expect(read).toMatchObject({ kind: 'ok', from: 'local' });
      expect((await body(read)).equals(tape)).toBe(true);
    } finally {
      await s3.restart();
    }
    clock.advance(2000);
    await idle();
    expect(existsSync(path.join(dir, 'recordings/b.tape.json'))).toBe(false);
    expect(s3.objectBytes(BUCKET, 'recordings/b.tape.json')?.equals(tape)).toBe(true);
    // The failures were logged with the key and the cause, never the credentials.
    const failures = logs.filter((l) => l.includes('upload failed'));
    expect(failures.length).toBe(2);
    expect(failures[0]).toContain('recordings/b.tape.json');
    for (const line of logs) {
      expect(line).not.toContain(s3.credentials.secretAccessKey);
      expect(line).not.toContain('Signature=');
    }
    storage.remove(['recordings/b.tape.json']);
    await idle();
    expect(s3.keys(BUCKET)).toEqual([]);
  });

  it('remove() deletes the local copy and the object; asked during an upload, it waits for it and deletes what it stored', async () => {
    writeLocal('recordings/c.wav', 20_000);
    storage.archive(['recordings/c.wav']);
    storage.remove(['recordings/c.wav']); // the upload has started: the deletion follows it
    await idle();
    expect(s3.keys(BUCKET)).toEqual([]);
    expect(existsSync(path.join(dir, 'recordings/c.wav'))).toBe(false);
    expect(await storage.read('recordings/c.wav')).toEqual({ kind: 'missing' });
  });

  it('recover() uploads what a previous run left local, not unfinished writes', async () => {
    const left = writeLocal('recordings/d.wav', 3_000);
    writeLocal('recordings/e.wav.123.0.part', 10);
    expect(await storage.recover()).toBe(1);
    await idle();
    expect(s3.objectBytes(BUCKET, 'recordings/d.wav')?.equals(left)).toBe(true);
    expect(s3.keys(BUCKET)).toEqual(['recordings/d.wav']);
    expect(existsSync(path.join(dir, 'recordings/e.wav.123.0.part'))).toBe(true);
    storage.remove(['recordings/d.wav']);
    await idle();
  });

  it('without a bucket nothing is uploaded, and remove() deletes the local file', async () => {
    const localOnly = new RecordingStorage({ local: new LocalBlobStore(dir), clock, logger: createLogger('silent') });
    writeLocal('recordings/f.wav', 100);
    localOnly.archive(['recordings/f.wav']);
    expect(localOnly.pendingCount).toBe(0);
    expect(await localOnly.recover()).toBe(0);
    expect(await localOnly.read('recordings/f.wav')).toMatchObject({ kind: 'ok', from: 'local', size: 100 });
    localOnly.remove(['recordings/f.wav']);
    await localOnly.whenIdle();
    expect(existsSync(path.join(dir, 'recordings/f.wav'))).toBe(false);
    await localOnly.close();
  });
});
