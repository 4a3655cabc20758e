import { afterEach, describe, expect, it } from 'vitest';
import { concatPcm, rmsDbfs, type AudioFrame } from '../../../src/audio/frame.ts';
import { resample } from '../../../src/audio/resample.ts';
import { OpenAiTts } from '../../../src/providers/tts/openai-tts.ts';
import { ProviderError } from '../../../src/util/errors.ts';
import { OpenAiAudioStandIn, SPEECH_PATH, tone, type OpenAiAudioStandInOptions } from '../../support/openai-audio-stand-in.ts';

let standIn: OpenAiAudioStandIn | undefined;
afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
});

async function setup(opts: OpenAiAudioStandInOptions = {}, tts: ConstructorParameters<typeof OpenAiTts>[0] = {}) {
  // The tone keeps these tests about the protocol; Flite through the stand-in is covered once below.
  standIn = await OpenAiAudioStandIn.start({ ...opts, speech: { synth: async (t, _v, s) => tone(t, s), ...opts.speech } });
  const provider = new OpenAiTts({ apiKey: standIn.apiKey, baseUrl: standIn.baseUrl, ...tts });
  return { standIn, provider };
}

const TEXT = 'Thanks for calling, we are open from nine to five on weekdays and ten to two on Saturdays.';

describe('OpenAI TTS against the stand-in', () => {
  it('streams: the first 16 kHz frame arrives while the body is still being sent', async () => {
    const { standIn, provider } = await setup({ speech: { firstByteLatencyMs: 150, chunkMs: 200, chunkIntervalMs: 40, oddChunks: true } });
    let ttff = -1;
    const frames: AudioFrame[] = [];
    let bytesAtFirstFrame = -1;
    for await (const f of provider.synthesize(TEXT, { voice: 'alloy', signal: new AbortController().signal, onFirstFrame: (ms) => (ttff = ms) })) {
      if (frames.length === 0) bytesAtFirstFrame = standIn.requests[0]!.bytesSent;
      frames.push(f);
    }
    const req = standIn.requests[0]!;
    expect(req.json).toMatchObject({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: TEXT, response_format: 'pcm' });
    expect(req.headers.authorization).toBe('Bearer sk-test');
    expect(bytesAtFirstFrame).toBeGreaterThan(0);
    expect(bytesAtFirstFrame).toBeLessThan(req.totalBytes! / 4);
    expect(ttff).toBeGreaterThanOrEqual(140);
    // The whole body takes ~totalBytes/4800 chunks x 40 ms; the first frame comes long before.
    expect(ttff).toBeLessThan(req.finishedAt! - req.startedAt - 200);
    for (const f of frames) {
      expect(f.sampleRate).toBe(16000);
      expect(f.samples.length).toBe(320);
    }
    // 24 kHz in, 16 kHz out: two thirds the samples (plus filter tail and padding).
    const expected = ((req.totalBytes! / 2) * 2) / 3;
    expect(frames.length * 320).toBeGreaterThanOrEqual(expected);
    expect(frames.length * 320).toBeLessThan(expected + 2 * 320);
    // Sample for sample the audio the server sent, at 16 kHz (odd-byte chunk splits included),
    // from the first sample: the streaming resampler's 22-sample filter warm-up is trimmed.
    const got = concatPcm(frames.map((f) => f.samples));
    const want = resample(tone(TEXT), 24_000, 16_000);
    let maxDiff = 0;
    for (let i = 0; i < want.length - 64; i++) maxDiff = Math.max(maxDiff, Math.abs(got[i]! - want[i]!));
    expect(maxDiff).toBeLessThan(64);
    expect(rmsDbfs(got)).toBeGreaterThan(-30);
  });

  it('passes speed and an emotion instruction; stability and similarity are ignored', async () => {
    const { standIn, provider } = await setup();
    expect(provider.capabilities.options).toEqual({ speed: true, stability: false, similarity: false, emotion: true, language: false });
    const frames = provider.synthesize('Hello there.', { voice: 'nova', speed: 9, stability: 0.3, similarity: 0.8, emotion: true, signal: new AbortController().signal });
    for await (const _ of frames) break;
    const body = standIn.requests[0]!.json!;
    expect(body.speed).toBe(4); // clamped to the API's range
    expect(body.instructions).toMatch(/emotion/);
    expect(Object.keys(body).sort()).toEqual(['input', 'instructions', 'model', 'response_format', 'speed', 'voice']);
  });

  it('barge-in: aborting mid-stream stops the frames at once and closes the HTTP connection', async () => {
    const { standIn, provider } = await setup({ speech: { chunkMs: 40, chunkIntervalMs: 30 } });
    const ac = new AbortController();
    let count = 0;
    const t0 = Date.now();
    for await (const _ of provider.synthesize(TEXT, { voice: 'alloy', signal: ac.signal })) {
      count++;
      if (count === 5) ac.abort();
      expect(count).toBeLessThanOrEqual(5);
    }
    expect(Date.now() - t0).toBeLessThan(1000);
    const req = standIn.requests[0]!;
    await standIn.waitFor(() => req.finishedAt !== undefined);
    expect(req.closedEarly).toBe(true);
    expect(req.bytesSent).toBeLessThan(req.totalBytes!);
  });

  it('a consumer that stops reading (break) also closes the connection', async () => {
    const { standIn, provider } = await setup({ speech: { chunkMs: 40, chunkIntervalMs: 30 } });
    for await (const _ of provider.synthesize(TEXT, { voice: 'alloy', signal: new AbortController().signal })) break;
    const req = standIn.requests[0]!;
    await standIn.waitFor(() => req.finishedAt !== undefined);
    expect(req.closedEarly).toBe(true);
  });

  it('retries once after a 500 and then speaks', async () => {
    const { standIn, provider } = await setup();
    standIn.fail(SPEECH_PATH, { kind: 'status', status: 500 });
    let frames = 0;
    for await (const _ of provider.synthesize('Hello.', { voice: 'alloy', signal: new AbortController().signal })) frames++;
    expect(frames).toBeGreaterThan(5);
    expect(standIn.requests.map((r) => r.status)).toEqual([500, 200]);
  });

  it('after repeated 500s fails with a retryable ProviderError (two attempts, no more)', async () => {
    const { standIn, provider } = await setup();
    standIn.fail(SPEECH_PATH, { kind: 'status', status: 500 }, 3);
    const run = async () => {
      for await (const _ of provider.synthesize('Hello.', { voice: 'alloy', signal: new AbortController().signal }));
    };
    const err = await run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).retryable).toBe(true);
    expect((err as ProviderError).message).toMatch(/500/);
    expect(standIn.requests).toHaveLength(2);
  });

  it('a 401 is not retried and is not retryable', async () => {
    const { standIn } = await setup();
    const provider = new OpenAiTts({ apiKey: 'wrong', baseUrl: standIn.baseUrl });
    const err = await (async () => {
      for await (const _ of provider.synthesize('Hello.', { voice: 'alloy', signal: new AbortController().signal }));
    })().catch((e: unknown) => e);
    expect((err as ProviderError).retryable).toBe(false);
    expect(standIn.requests).toHaveLength(1);
  });

  it('a server that hangs hits the first-byte timeout, is retried once, then fails', async () => {
    const { standIn, provider } = await setup({}, { firstByteTimeoutMs: 150 });
    standIn.fail(SPEECH_PATH, { kind: 'hang' }, 2);
    const t0 = Date.now();
    const err = await (async () => {
      for await (const _ of provider.synthesize('Hello.', { voice: 'alloy', signal: new AbortController().signal }));
    })().catch((e: unknown) => e);
    expect((err as ProviderError).message).toMatch(/timed out after 150 ms/);
    expect((err as ProviderError).retryable).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(standIn.requests).toHaveLength(2);
  });

  it('speaks Flite speech through the stand-in (non-silent frames)', async () => {
    standIn = await OpenAiAudioStandIn.start();
    const provider = new OpenAiTts({ apiKey: standIn.apiKey, baseUrl: standIn.baseUrl });
    const frames: AudioFrame[] = [];
    for await (const f of provider.synthesize('Good morning, how can I help?', { voice: 'alloy', signal: new AbortController().signal })) frames.push(f);
    expect(frames.length).toBeGreaterThan(40);
    expect(frames.filter((f) => rmsDbfs(f.samples) > -35).length).toBeGreaterThan(frames.length / 3);
  });
});
