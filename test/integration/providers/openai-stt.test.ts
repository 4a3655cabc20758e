import { afterEach, describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, type AudioFrame } from '../../../src/audio/frame.ts';
import { OpenAiStt, type OpenAiSttOptions } from '../../../src/providers/stt/openai-stt.ts';
import type { SttEvent, SttStream } from '../../../src/providers/stt/types.ts';
import { OpenAiAudioStandIn, TRANSCRIPTIONS_PATH, type OpenAiAudioStandInOptions } from '../../support/openai-audio-stand-in.ts';

let standIn: OpenAiAudioStandIn | undefined;
afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
});

async function setup(opts: OpenAiAudioStandInOptions = {}, stt: OpenAiSttOptions = {}) {
  standIn = await OpenAiAudioStandIn.start(opts);
  const provider = new OpenAiStt({ apiKey: standIn.apiKey, baseUrl: standIn.baseUrl, ...stt });
  return { standIn, provider };
}

/** A ramp, so the uploaded WAV can be checked sample for sample. */
function frame(n: number): AudioFrame {
  const samples = new Int16Array(FRAME_SAMPLES);
  for (let i = 0; i < samples.length; i++) samples[i] = ((n * FRAME_SAMPLES + i) % 2000) - 1000;
  return { samples, sampleRate: 16000 };
}

async function drain(stream: SttStream): Promise<SttEvent[]> {
  const out: SttEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe('OpenAI segment STT against the stand-in', () => {
  it('uploads each finalized utterance as a valid 16 kHz WAV and emits its final with stream times', async () => {
    const { standIn, provider } = await setup({ transcripts: ['I would like to book a table', 'for two people'] });
    expect(provider.capabilities).toEqual({ interim: false, streaming: false });
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const events = drain(stream);
    for (let i = 0; i < 50; i++) stream.write(frame(i)); // 1 s
    stream.finalize();
    for (let i = 50; i < 75; i++) stream.write(frame(i)); // 0.5 s
    stream.finalize();
    await stream.close();
    expect(await events).toEqual([
      { type: 'final', text: 'I would like to book a table', startMs: 0, endMs: 1000, speechFinal: true },
      { type: 'final', text: 'for two people', startMs: 1000, endMs: 1500, speechFinal: true },
    ]);
    const [first, second] = standIn.requestsTo(TRANSCRIPTIONS_PATH);
    expect(first!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(first!.fields).toMatchObject({ model: 'gpt-4o-transcribe', language: 'en', response_format: 'json' });
    expect(first!.file).toMatchObject({ name: 'utterance.wav', type: 'audio/wav' });
    expect(first!.file!.wav).toMatchObject({ sampleRate: 16000, channels: 1 });
    expect(first!.file!.wav!.samples.length).toBe(16000);
    expect(Array.from(first!.file!.wav!.samples.subarray(0, 3))).toEqual([-1000, -999, -998]);
    expect(second!.file!.wav!.samples.length).toBe(8000);
    expect(second!.file!.wav!.samples[0]).toBe(frame(50).samples[0]);
  });

  it('a telephone-band stream uploads 8 kHz WAVs with times from 8 kHz samples', async () => {
    const { standIn, provider } = await setup({ transcripts: ['for two people'] });
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 8000 });
    const events = drain(stream);
    const narrow = (n: number): AudioFrame => ({ samples: frame(n).samples.subarray(0, 160), sampleRate: 8000 });
    for (let i = 0; i < 50; i++) stream.write(narrow(i)); // 1 s
    expect(() => stream.write(frame(50))).toThrow(/at 8000 Hz got 16000 Hz/);
    stream.finalize();
    await stream.close();
    expect(await events).toEqual([{ type: 'final', text: 'for two people', startMs: 0, endMs: 1000, speechFinal: true }]);
    const [upload] = standIn.requestsTo(TRANSCRIPTIONS_PATH);
    expect(upload!.file!.wav).toMatchObject({ sampleRate: 8000, channels: 1 });
    expect(upload!.file!.wav!.samples.length).toBe(8000);
  });

  it('a finalize() with (almost) no audio answers an empty final without a request', async () => {
    const { standIn, provider } = await setup();
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const events = drain(stream);
    stream.write(frame(0));
    stream.finalize();
    await stream.close();
    expect(await events).toEqual([{ type: 'final', text: '', startMs: 0, endMs: 20, speechFinal: true }]);
    expect(standIn.requests).toHaveLength(0);
  });

  it('with stream: true, SSE transcript deltas become interims before the final', async () => {
    const { provider } = await setup({ transcripts: ['please call me back tomorrow'] }, { stream: true });
    expect(provider.capabilities.interim).toBe(true);
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const events = drain(stream);
    for (let i = 0; i < 25; i++) stream.write(frame(i));
    stream.finalize();
    await stream.close();
    const got = await events;
    expect(got.filter((e) => e.type === 'interim').map((e) => e.text)).toEqual([
      'please', 'please call', 'please call me', 'please call me back', 'please call me back tomorrow',
    ]);
    expect(got.at(-1)).toEqual({ type: 'final', text: 'please call me back tomorrow', startMs: 0, endMs: 500, speechFinal: true });
  });

  it('retries once after a 500; a second failure becomes an error event and the stream goes on', async () => {
    const { standIn, provider } = await setup({ transcripts: ['first try works', 'later one'] });
    standIn.fail(TRANSCRIPTIONS_PATH, { kind: 'status', status: 500 });
    const stream = provider.open({ language: 'en-GB', signal: new AbortController().signal, sampleRate: 16000 });
    const events = drain(stream);
    for (let i = 0; i < 10; i++) stream.write(frame(i));
    stream.finalize();
    await standIn.waitFor(() => standIn.requests.filter((r) => r.status === 200).length === 1);
    standIn.fail(TRANSCRIPTIONS_PATH, { kind: 'status', status: 503 }, 2);
    for (let i = 0; i < 10; i++) stream.write(frame(i));
    stream.finalize();
    for (let i = 0; i < 10; i++) stream.write(frame(i));
    stream.finalize();
    await stream.close();
    const got = await events;
    expect(got[0]).toMatchObject({ type: 'final', text: 'first try works' });
    expect(got[1]?.type).toBe('error');
    expect(got[1]?.type === 'error' && got[1].error.retryable).toBe(true);
    expect(got[2]).toMatchObject({ type: 'final', text: 'later one', startMs: 400, endMs: 600 });
    expect(standIn.requests.map((r) => r.status)).toEqual([500, 200, 503, 503, 200]);
  });

  it('a hanging server times out; aborting the stream cancels the upload at once', async () => {
    const { standIn, provider } = await setup({}, { requestTimeoutMs: 100, retries: 0 });
    standIn.fail(TRANSCRIPTIONS_PATH, { kind: 'hang' }, 2);
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const events = drain(stream);
    for (let i = 0; i < 10; i++) stream.write(frame(i));
    stream.finalize();
    await stream.close();
    const got = await events;
    expect(got[0]?.type === 'error' && got[0].error.message).toMatch(/timed out after 100 ms/);

    const ac = new AbortController();
    const s2 = provider.open({ language: 'en-US', signal: ac.signal, sampleRate: 16000 });
    const e2 = drain(s2);
    for (let i = 0; i < 10; i++) s2.write(frame(i));
    s2.finalize();
    await standIn.waitFor(() => standIn.requests.length === 2);
    const t0 = Date.now();
    ac.abort();
    expect(await e2).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(250);
    await standIn.waitFor(() => standIn.requests[1]!.closedEarly);
  });
});
