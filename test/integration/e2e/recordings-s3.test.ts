/**
 * Recordings and call tapes on S3-compatible storage, the whole way: real calls over SIP/RTP on
 * loopback to the engine configured with SWITCHBOARD_S3_* (the S3 stand-in verifies every
 * request's SigV4 signature). After a recorded call the WAV and the tape end up in the bucket,
 * the local files are gone, and the API serves them byte-identical (Range too); through an
 * outage of the S3 server the files stay local, are served from there, and go up once it is back;
 * deleting the assistant deletes the objects.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav } from '../../../src/audio/wav.ts';
import { parseCallTape } from '../../../src/call/tape.ts';
import { S3StandIn } from '../../support/s3-server.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { firstAudible, listen, startWorld, waitQuiet, waitUntil, type World } from './world.ts';

const BUCKET = 'switchboard-calls';
let s3: S3StandIn;
let w: World;
let phone: TestPhone;

beforeAll(async () => {
  s3 = await S3StandIn.start({ buckets: [BUCKET] });
  w = await startWorld({
    deepgram: { script: [] },
    env: { ...s3.env(BUCKET), SWITCHBOARD_S3_RETRY_BASE_MS: '200', SWITCHBOARD_S3_RETRY_MAX_MS: '1000' },
  });
  phone = await TestPhone.create({ userName: 'carrier' });
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await w?.close();
  await s3?.close();
});

async function download(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return patiently(() => fetch(url, { headers: { authorization: `Bearer ${w.account.key}`, ...headers } }));
}

/**
 * The world's account shares one API rate limit (20 requests per 10 s) across this file's calls,
 * downloads and polls: a request answered 429 is made again after a second, a bounded number of times.
 */
async function patiently<T extends { status: number }>(request: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    const res = await request();
    if (res.status !== 429 || i === 15) return res;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function newAssistant(over: Record<string, unknown>): Promise<number> {
  for (let i = 0; ; i++) {
    try {
      return await w.assistant(over);
    } catch (err) {
      if (!String((err as Error).message).startsWith('assistant: 429') || i === 15) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function bytesOf(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

/** A recorded call: the greeting, then the caller hangs up; the finished record. */
async function recordedCall(assistant: number): Promise<Record<string, any>> {
  const call = await phone.call(w.target());
  const answeredAt = performance.now();
  const heard = listen(call);
  await waitUntil(() => firstAudible(heard, answeredAt) !== undefined, 4000, 'greeting');
  await waitQuiet(heard, answeredAt, 600, 10_000);
  await call.hangup();
  const id = (await patiently(() => w.api('GET', `/user/calls?limit=1&assistant_id=${assistant}`))).body[0].id as number;
  return w.waitCall(id, (c) => c.recording_url !== null && c.tape_url !== null && c.status === 'completed');
}

function keysOf(uuid: string): { wav: string; tape: string } {
  return { wav: `recordings/${uuid}.wav`, tape: `recordings/${uuid}.tape.json` };
}

const local = (key: string): string => path.join(w.engine.ctx.config.dataDir, key);

describe('recordings and call tapes in an S3 bucket', () => {
  let assistant: number;
  let firstRecordingUrl = '';
  const archived: string[] = [];

  it('a recorded call ends up in the bucket, the local files go, the API serves them byte-identical (and by Range)', async () => {
    assistant = await newAssistant({ record: true, initial_message: 'Hello, this call is recorded.' });
    const rec = await recordedCall(assistant);
    firstRecordingUrl = rec.recording_url;
    const { wav, tape } = keysOf(rec.uuid);
    await waitUntil(() => s3.objectBytes(BUCKET, wav) !== undefined && s3.objectBytes(BUCKET, tape) !== undefined, 15_000, 'both objects in the bucket');
    await waitUntil(() => !existsSync(local(wav)) && !existsSync(local(tape)), 5000, 'local copies removed');
    archived.push(wav, tape);

    const res = await download(rec.recording_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    const served = await bytesOf(res);
    expect(served.equals(s3.objectBytes(BUCKET, wav)!)).toBe(true);
    const audio = readWav(new Uint8Array(served));
    expect(audio.sampleRate).toBe(16_000);
    expect(audio.samples.length / 2 / audio.sampleRate).toBeGreaterThan(0.5);

    const tapeRes = await download(rec.tape_url);
    expect(tapeRes.status).toBe(200);
    const tapeBytes = await bytesOf(tapeRes);
    expect(tapeBytes.equals(s3.objectBytes(BUCKET, tape)!)).toBe(true);
    expect(parseCallTape(JSON.parse(tapeBytes.toString('utf8'))).call.uuid).toBe(rec.uuid);

    // The RIFF header alone, then the last 100 bytes, then past the end.
    const head = await download(rec.recording_url, { range: 'bytes=0-43' });
    expect(head.status).toBe(206);
    expect(head.headers.get('content-range')).toBe(`bytes 0-43/${served.length}`);
    expect((await bytesOf(head)).equals(served.subarray(0, 44))).toBe(true);
    const tail = await download(rec.recording_url, { range: 'bytes=-100' });
    expect(tail.status).toBe(206);
    expect((await bytesOf(tail)).equals(served.subarray(served.length - 100))).toBe(true);
    const past = await download(rec.recording_url, { range: `bytes=${served.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${served.length}`);
    await past.arrayBuffer();
    // The same URL still needs the API key.
    expect((await fetch(rec.recording_url)).status).toBe(401);
  }, 60_000);

  it('through an S3 outage the files stay local and are served from there; the upload is retried and they go up once it is back', async () => {
    const failuresBefore = w.engine.ctx.recordings!.stats.failures;
    await s3.stop();
    let rec: Record<string, any>;
    let wav: string;
    let tape: string;
    let servedDuring: Buffer;
    try {
      rec = await recordedCall(assistant);
      ({ wav, tape } = keysOf(rec.uuid));
      await waitUntil(() => w.engine.ctx.recordings!.stats.failures >= failuresBefore + 2, 10_000, 'uploads failing');
      expect(existsSync(local(wav)) && existsSync(local(tape))).toBe(true);
      const res = await download(rec.recording_url);
      expect(res.status).toBe(200);
      servedDuring = await bytesOf(res);
      expect(servedDuring.equals(readFileSync(local(wav)))).toBe(true);
      expect((await download(rec.tape_url)).status).toBe(200);
      // What is only in the bucket cannot be had meanwhile: 503, retryable, not a bare 500.
      const unavailable = await download(firstRecordingUrl);
      expect(unavailable.status).toBe(503);
      expect(await unavailable.json()).toHaveProperty('message');
    } finally {
      await s3.restart();
    }
    await waitUntil(() => s3.objectBytes(BUCKET, wav) !== undefined && s3.objectBytes(BUCKET, tape) !== undefined, 15_000, 'uploaded after the outage');
    await waitUntil(() => !existsSync(local(wav)) && !existsSync(local(tape)), 5000, 'local copies removed after the outage');
    archived.push(wav, tape);
    expect(s3.objectBytes(BUCKET, wav)!.equals(servedDuring)).toBe(true);
    const after = await bytesOf(await download(rec.recording_url));
    expect(after.equals(servedDuring)).toBe(true);
  }, 60_000);

  it('deleting the assistant deletes its calls’ objects', async () => {
    expect(archived.length).toBe(4);
    expect(archived.every((k) => s3.keys(BUCKET).includes(k))).toBe(true);
    expect((await patiently(() => w.api('DELETE', `/user/assistant/${assistant}`))).status).toBe(200);
    await waitUntil(() => archived.every((k) => !s3.keys(BUCKET).includes(k)), 10_000, 'objects deleted');
    expect(archived.some((k) => existsSync(local(k)))).toBe(false);
  }, 30_000);

  it('a call whose assistant is deleted while it runs leaves no recording behind, local or in the bucket', async () => {
    const doomed = await newAssistant({ record: true, initial_message: 'Hello, this call is recorded too.' });
    const deletedBefore = w.engine.ctx.recordings!.stats.deleted;
    const call = await phone.call(w.target());
    const answeredAt = performance.now();
    const heard = listen(call);
    await waitUntil(() => firstAudible(heard, answeredAt) !== undefined, 4000, 'greeting');
    const live = (await patiently(() => w.api('GET', `/user/calls?limit=1&assistant_id=${doomed}`))).body[0] as { uuid: string };
    expect((await patiently(() => w.api('DELETE', `/user/assistant/${doomed}`))).status).toBe(200);
    await call.hangup().catch(() => undefined);
    // Written when the call ended, then deleted: two deletions done, nothing left anywhere.
    await waitUntil(() => w.engine.ctx.recordings!.stats.deleted >= deletedBefore + 2, 15_000, 'the late recording deleted');
    const { wav, tape } = keysOf(live.uuid);
    expect(existsSync(local(wav)) || existsSync(local(tape))).toBe(false);
    expect(s3.keys(BUCKET).filter((k) => k.includes(live.uuid))).toEqual([]);
  }, 30_000);
});
