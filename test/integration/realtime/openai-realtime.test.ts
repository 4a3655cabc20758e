import { createServer, type Server } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rms, type AudioFrame } from '../../../src/audio/frame.ts';
import { resample } from '../../../src/audio/resample.ts';
import { OpenAiRealtime } from '../../../src/providers/realtime/openai-realtime.ts';
import { reconnect, type RealtimeConnectOptions, type RealtimeConnection, type RealtimeSessionConfig } from '../../../src/providers/realtime/realtime.ts';
import { ProviderError } from '../../../src/util/errors.ts';
import { RealtimeStandIn, standInSpeech, type RealtimeStandInOptions } from '../../support/realtime-stand-in.ts';
import { EventReader } from './event-reader.ts';

function tone(ms: number, amp = 8000, hz = 440, startSample = 0): AudioFrame[] {
  const frames: AudioFrame[] = [];
  for (let f = 0; f < ms / 20; f++) {
    const s = new Int16Array(320);
    for (let i = 0; i < 320; i++) s[i] = Math.round(amp * Math.sin((2 * Math.PI * hz * (startSample + f * 320 + i)) / 16_000));
    frames.push({ samples: s, sampleRate: 16_000 });
  }
  return frames;
}

let standIn: RealtimeStandIn;
let provider: OpenAiRealtime;
let ctl: AbortController;
const open: RealtimeConnection[] = [];

async function start(opts: RealtimeStandInOptions = {}): Promise<void> {
  standIn = await RealtimeStandIn.start({ audio: 'tone', ...opts });
}

function options(session: RealtimeSessionConfig = {}): RealtimeConnectOptions {
  return { model: 'gpt-realtime', apiKey: standIn.apiKey, baseUrl: standIn.baseUrl, session, signal: ctl.signal };
}

async function connect(session: RealtimeSessionConfig = {}): Promise<{ conn: RealtimeConnection; ev: EventReader }> {
  const conn = await provider.connect(options(session));
  open.push(conn);
  return { conn, ev: new EventReader(conn.events) };
}

beforeEach(() => {
  provider = new OpenAiRealtime({ connectTimeoutMs: 2000 });
  ctl = new AbortController();
});
afterEach(async () => {
  for (const c of open.splice(0)) c.close();
  await standIn?.close();
});

describe('OpenAI realtime provider against the stand-in', () => {
  it('refuses a wrong key or model at the handshake, not retryable', async () => {
    await start({ models: ['gpt-realtime'] });
    await expect(provider.connect({ ...options(), apiKey: 'sk-wrong' })).rejects.toMatchObject({ retryable: false, message: /HTTP 401/ });
    await expect(provider.connect({ ...options(), model: 'gpt-nope' })).rejects.toMatchObject({ retryable: false, message: /HTTP 400/ });
    expect(provider.totals.connectFailures).toBe(2);
  });

  it('sends the session config and connects once the server confirms it', async () => {
    await start();
    const tools = [{ name: 'lookup', description: 'Find an order', parameters: { type: 'object', properties: { id: { type: 'number' } } } }];
    await connect({
      instructions: 'You are Ada.',
      voice: 'cedar',
      inputFormat: 'pcmu',
      outputFormat: 'pcmu',
      turnDetection: { type: 'server_vad', threshold: 0.8, silenceMs: 700 },
      tools,
    });
    const rec = standIn.last;
    expect(rec.headers.authorization).toBe(`Bearer ${standIn.apiKey}`);
    expect(rec.query.model).toBe('gpt-realtime');
    const [update] = standIn.eventsOf('session.update');
    expect(update).toEqual({
      type: 'session.update',
      session: {
        type: 'realtime',
        instructions: 'You are Ada.',
        audio: {
          input: { format: { type: 'audio/pcmu' }, turn_detection: { type: 'server_vad', threshold: 0.8, silence_duration_ms: 700 } },
          output: { format: { type: 'audio/pcmu' }, voice: 'cedar' },
        },
        tools: [{ type: 'function', ...tools[0] }],
        tool_choice: 'auto',
      },
    });
    expect(rec.sent.map((e) => e.type)).toEqual(['session.created', 'session.updated']);
  });

  it('appends caller frames as 24 kHz PCM that keeps the signal', async () => {
    await start();
    const { conn } = await connect({ turnDetection: null });
    for (const f of tone(1000)) conn.appendAudio(f);
    await standIn.waitFor(() => standIn.last.appends.length === 50);
    expect(standIn.last.appends.every((b) => Math.abs(b.length - 960) <= 2)).toBe(true);
    const got = standIn.last.inputPcm();
    expect(Math.abs(got.length - 24_000)).toBeLessThan(4);
    const want = resample(tone(1000).reduce((a, f) => Int16Array.from([...a, ...f.samples]), new Int16Array(0)), 16_000, 24_000);
    expect(rms(got.subarray(2400, 21_600))).toBeCloseTo(rms(want.subarray(2400, 21_600)), 2);
    expect(conn.counters.audioInMs).toBe(1000);
  });

  it('passes μ-law through byte for byte when both sides use it', async () => {
    await start();
    const { conn } = await connect({ inputFormat: 'pcmu', outputFormat: 'pcmu', turnDetection: null });
    const payloads = Array.from({ length: 10 }, (_, p) => Uint8Array.from({ length: 160 }, (_, i) => (p * 31 + i * 7) & 0xff));
    for (const p of payloads) conn.appendMulaw(p);
    await standIn.waitFor(() => standIn.last.appends.length === 10);
    expect(Buffer.concat(standIn.last.appends).equals(Buffer.concat(payloads))).toBe(true);
  });

  it('plays model speech back as ordered 20 ms 16 kHz frames with its transcript', async () => {
    await start({ script: [{ say: 'Thanks for calling Switchboard.', audio: 'flite' }] });
    const { conn, ev } = await connect({ turnDetection: null });
    conn.createResponse();
    const done = await ev.until('audio-done', undefined, 15_000);
    const audio = ev.of('audio');
    const frames = audio.flatMap((a) => a.frames ?? []);
    expect(frames.every((f) => f.samples.length === 320 && f.sampleRate === 16_000)).toBe(true);
    expect(audio.every((a, i) => i === 0 || a.receivedMs >= audio[i - 1]!.receivedMs)).toBe(true);
    expect(done.receivedMs).toBe(standIn.last.audioSentMs.get(done.itemId));
    expect(Math.abs(frames.length * 20 - done.receivedMs)).toBeLessThanOrEqual(40);
    // The frames are the stand-in's speech, in order: compare against its 16 kHz source.
    const source = await standInSpeech('Thanks for calling Switchboard.', 'flite');
    const got = Int16Array.from(frames.flatMap((f) => [...f.samples]));
    const third = Math.floor(source.length / 3);
    expect(rms(got.subarray(third, 2 * third))).toBeCloseTo(rms(source.subarray(third, 2 * third)), 1);
    const transcript = await ev.until('transcript-done');
    expect(ev.of('transcript-delta').map((d) => d.text).join('')).toBe('Thanks for calling Switchboard.');
    expect(transcript.text).toBe('Thanks for calling Switchboard.');
    const rd = await ev.until('response-done');
    expect(rd).toMatchObject({ status: 'completed', usage: { total_tokens: 100 } });
    await ev.until('rate-limits');
    expect(conn.counters.rateLimitUpdates).toBe(1);
  });

  it('returns μ-law model audio untouched in 160-byte payloads', async () => {
    await start({ script: [{ say: 'One moment please.' }] });
    const { conn, ev } = await connect({ inputFormat: 'pcmu', outputFormat: 'pcmu', turnDetection: null });
    conn.createResponse();
    const done = await ev.until('audio-done');
    const payloads = ev.of('audio').flatMap((a) => a.mulaw ?? []);
    expect(payloads.every((p) => p.length === 160)).toBe(true);
    const sent = Buffer.concat(
      standIn.last.sent.filter((e) => e.type === 'response.output_audio.delta').map((e) => Buffer.from(String(e.delta), 'base64')),
    );
    const got = Buffer.concat(payloads);
    expect(got.subarray(0, sent.length).equals(sent)).toBe(true);
    expect(done.receivedMs).toBe(sent.length / 8);
  });

  it('answers in text in the text modality (dualplex)', async () => {
    await start({ script: [{ say: 'We open at nine.' }] });
    const { conn, ev } = await connect({ outputModalities: 'text', turnDetection: null });
    conn.createResponse({ instructions: 'Greet the caller.' });
    const done = await ev.until('text-done');
    expect(done.text).toBe('We open at nine.');
    expect(ev.of('text-delta').map((d) => d.text).join('')).toBe('We open at nine.');
    expect(ev.of('audio')).toHaveLength(0);
    expect(standIn.last.responses[0]).toMatchObject({ instructions: 'Greet the caller.' });
  });

  it('runs a function call: arguments parsed, result sent, next response follows', async () => {
    await start({ script: [{ say: 'Let me check.', calls: [{ name: 'lookup', arguments: { id: 7 } }] }, { say: 'Order seven shipped.' }] });
    const { conn, ev } = await connect({ turnDetection: null, tools: [{ name: 'lookup', description: 'd', parameters: {} }] });
    conn.createResponse();
    const call = await ev.until('function-call');
    expect(call).toMatchObject({ name: 'lookup', arguments: { ok: true, value: { id: 7 } } });
    await ev.until('response-done');
    conn.sendFunctionResult(call.callId, '{"status":"shipped"}');
    conn.createResponse();
    const t = await ev.until('transcript-done', (e) => e.text === 'Order seven shipped.');
    expect(t.role).toBe('assistant');
    expect(standIn.last.functionOutputs).toEqual([{ callId: call.callId, output: '{"status":"shipped"}' }]);
    const types = standIn.last.clientEvents.map((e) => e.type);
    expect(types.lastIndexOf('conversation.item.create')).toBeLessThan(types.lastIndexOf('response.create'));
  });

  it('truncates at exactly the given position, clamped to the audio received', async () => {
    await start({ script: [{ say: 'A fairly long answer that the caller will interrupt.' }] });
    const { conn, ev } = await connect({ turnDetection: null });
    conn.createResponse();
    const done = await ev.until('audio-done');
    conn.truncate(done.itemId, 0, 420);
    expect(await ev.until('truncated')).toEqual({ type: 'truncated', itemId: done.itemId, audioEndMs: 420 });
    conn.truncate(done.itemId, 0, 1e9);
    await ev.until('truncated', (e) => e.audioEndMs !== 420);
    expect(standIn.last.truncations).toEqual([
      { itemId: done.itemId, contentIndex: 0, audioEndMs: 420 },
      { itemId: done.itemId, contentIndex: 0, audioEndMs: Math.floor(conn.receivedMs(done.itemId)) },
    ]);
    expect(standIn.eventsOf('conversation.item.truncate')[0]).toEqual({ type: 'conversation.item.truncate', item_id: done.itemId, content_index: 0, audio_end_ms: 420 });
  });

  it('detects the caller’s turn, transcribes it, answers, and cancels the answer on barge-in', async () => {
    await start({ script: [{ say: 'This answer is long enough to be interrupted by the caller.' }], deltaIntervalMs: 30, userTranscripts: ['When do you open?'] });
    const { conn, ev } = await connect({ turnDetection: { type: 'server_vad', threshold: 0.5, silenceMs: 300, prefixPaddingMs: 100 }, inputTranscription: { model: 'whisper-1' } });
    const feed = (frames: AudioFrame[]): void => frames.forEach((f) => conn.appendAudio(f));
    feed(tone(400, 0));
    feed(tone(600));
    feed(tone(400, 0));
    const started = await ev.until('speech-started');
    expect(started.audioStartMs).toBeGreaterThanOrEqual(300);
    expect(started.audioStartMs).toBeLessThanOrEqual(400);
    const stopped = await ev.until('speech-stopped');
    expect(stopped.itemId).toBe(started.itemId);
    expect((await ev.until('user-transcript')).text).toBe('When do you open?');
    const first = await ev.until('audio');
    feed(tone(200));
    const rd = await ev.until('response-done');
    expect(rd).toMatchObject({ responseId: first.responseId, status: 'cancelled', reason: 'turn_detected' });
    expect(ev.of('audio-done')).toHaveLength(0);
  });

  it('ignores unknown server events and keeps going', async () => {
    await start({ script: [{ say: 'Still here.', before: [{ type: 'response.future_feature', data: { x: 1 } }, { type: 'session.mystery' }] }] });
    const { conn, ev } = await connect({ turnDetection: null });
    standIn.send({ type: 'conversation.something_new', item: 42 });
    conn.createResponse();
    await ev.until('response-done');
    expect(conn.counters.unknownEvents).toBe(3);
    expect(ev.of('error')).toHaveLength(0);
  });

  it('surfaces model errors with retryable set, and counts them', async () => {
    await start({ script: [{ error: { type: 'server_error', message: 'The server had an error' } }] });
    const { conn, ev } = await connect({ turnDetection: null });
    conn.createResponse();
    expect(await ev.until('error')).toMatchObject({ code: 'server_error', retryable: true });
    conn.cancelResponse();
    expect(await ev.until('error')).toMatchObject({ code: 'response_cancel_not_active', retryable: false });
    expect(conn.counters.errors).toBe(2);
    expect(provider.totals.errors).toBe(2);
  });

  it('reports a dropped socket as retryable and reconnects with the conversation so far', async () => {
    await start({ script: [{ say: 'This answer gets cut off by a network failure.', dropAfterDeltas: 2 }, { say: 'As I was saying.' }] });
    const { conn, ev } = await connect({ turnDetection: null });
    conn.createResponse();
    const closed = await ev.until('closed');
    expect(closed).toMatchObject({ code: 1006, retryable: true });
    expect(ev.of('audio').length).toBeGreaterThan(0);
    expect(provider.totals.drops).toBe(1);
    conn.appendAudio(tone(20)[0]!); // a closed connection swallows writes
    const history = [
      { role: 'user' as const, text: 'Is my order on its way?' },
      { role: 'assistant' as const, text: 'Let me check that for you.' },
    ];
    const again = await reconnect(provider, options({ turnDetection: null }), history);
    open.push(again);
    expect(standIn.connections).toHaveLength(2);
    await standIn.waitFor(() => standIn.eventsOf('conversation.item.create').length === 2);
    expect(standIn.eventsOf('conversation.item.create').map((e) => e.item)).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Is my order on its way?' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check that for you.' }] },
    ]);
    const ev2 = new EventReader(again.events);
    again.createResponse();
    expect((await ev2.until('transcript-done')).text).toBe('As I was saying.');
  });

  it('closes on abort with a non-retryable closed event', async () => {
    await start();
    const { ev } = await connect();
    ctl.abort();
    expect(await ev.until('closed')).toMatchObject({ code: 1000, retryable: false });
    await standIn.waitFor(() => standIn.last.end === 'client');
  });

  it('times out a connect that never gets a session', async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const p = new OpenAiRealtime({ connectTimeoutMs: 300 });
    const t0 = Date.now();
    const err = await p
      .connect({ model: 'm', apiKey: 'k', baseUrl: `ws://127.0.0.1:${port}/v1`, session: {}, signal: ctl.signal })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).retryable).toBe(true);
    expect(Date.now() - t0).toBeLessThan(2000);
    // Giving up mid-connect hands back the caller's own abort reason.
    const mine = new AbortController();
    const pending = p.connect({ model: 'm', apiKey: 'k', baseUrl: `ws://127.0.0.1:${port}/v1`, session: {}, signal: mine.signal });
    setTimeout(() => mine.abort(new Error('caller hung up')), 50);
    await expect(pending).rejects.toThrow('caller hung up');
    silent.close();
    await start();
  });

  it('updates the session with only what changed', async () => {
    await start();
    const { conn } = await connect({ instructions: 'Old.', voice: 'alloy' });
    conn.updateSession({ instructions: 'New.', voice: 'alloy' });
    await standIn.waitFor(() => standIn.eventsOf('session.update').length === 2);
    expect(standIn.eventsOf('session.update')[1]).toEqual({ type: 'session.update', session: { type: 'realtime', instructions: 'New.' } });
    expect(conn.session.instructions).toBe('New.');
    expect(() => conn.updateSession({ outputFormat: 'pcmu' })).toThrow(RangeError);
  });

  it('speaks the beta protocol too: flat session, beta event names, beta header', async () => {
    await start({ dialect: 'beta', script: [{ say: 'Hello from beta.' }] });
    provider = new OpenAiRealtime({ dialect: 'beta' });
    const { conn, ev } = await connect({ voice: 'alloy', temperature: 0.7, turnDetection: null, outputModalities: 'audio' });
    expect(standIn.last.headers['openai-beta']).toBe('realtime=v1');
    expect(standIn.eventsOf('session.update')[0]!.session).toEqual({
      modalities: ['audio', 'text'],
      voice: 'alloy',
      turn_detection: null,
      temperature: 0.7,
    });
    conn.createResponse();
    await ev.until('audio-done');
    expect((await ev.until('transcript-done')).text).toBe('Hello from beta.');
  });
});
