import { afterEach, describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, silenceFrame, type AudioFrame } from '../../../src/audio/frame.ts';
import { DeepgramStt, type DeepgramOptions } from '../../../src/providers/stt/deepgram.ts';
import type { SttEvent, SttStream } from '../../../src/providers/stt/types.ts';
import { DeepgramStandIn, type DeepgramStandInOptions } from '../../support/deepgram-stand-in.ts';

let standIn: DeepgramStandIn | undefined;
afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
});

async function setup(dg: DeepgramStandInOptions = {}, opts: DeepgramOptions = {}) {
  standIn = await DeepgramStandIn.start(dg);
  const provider = new DeepgramStt({ apiKey: 'dg-test-key', baseUrl: standIn.url, endpointingMs: 100, ...opts });
  return { standIn, provider };
}

function loudFrame(): AudioFrame {
  const samples = new Int16Array(FRAME_SAMPLES);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 200 * i) / 16000));
  return { samples, sampleRate: 16000 };
}

/** Drain events in the background so a test can look at them as they arrive. */
function collect(stream: SttStream): { events: SttEvent[]; done: Promise<void> } {
  const events: SttEvent[] = [];
  const done = (async () => {
    for await (const e of stream) events.push(e);
  })();
  return { events, done };
}

function writeMs(stream: SttStream, frame: () => AudioFrame, ms: number): void {
  for (let t = 0; t < ms; t += 20) stream.write(frame());
}

describe('Deepgram live STT against the stand-in', () => {
  it('sends auth and audio parameters, and turns Results into interim and final events with times', async () => {
    const { standIn, provider } = await setup({ script: ['what are your opening hours'], interimEveryMs: 100 });
    const ac = new AbortController();
    const stream = provider.open({ language: 'en-US', signal: ac.signal, sampleRate: 16000 });
    const { events, done } = collect(stream);
    writeMs(stream, silenceFrame, 200);
    writeMs(stream, loudFrame, 600);
    writeMs(stream, silenceFrame, 300);
    await standIn.waitFor(() => events.some((e) => e.type === 'final'));
    await stream.close();
    await done;

    const conn = standIn.connections[0]!;
    expect(conn.headers.authorization).toBe('Token dg-test-key');
    expect(conn.query).toMatchObject({
      encoding: 'linear16', sample_rate: '16000', channels: '1', interim_results: 'true', punctuate: 'true', endpointing: '100', language: 'en-US', model: 'nova-3',
    });
    expect(conn.audioMs).toBe(1100);

    const interims = events.filter((e) => e.type === 'interim');
    expect(interims.length).toBeGreaterThanOrEqual(3);
    expect(interims[0]).toMatchObject({ text: 'what', startMs: 200 });
    const final = events.find((e) => e.type === 'final');
    expect(final).toEqual({ type: 'final', text: 'what are your opening hours', startMs: 200, endMs: 800, speechFinal: true });
    expect(events.indexOf(final!)).toBeGreaterThan(events.indexOf(interims[0]!));
  });

  it('a telephone-band call streams 8 kHz audio: sample_rate=8000, times from 8 kHz samples, other rates refused', async () => {
    const { standIn, provider } = await setup({ script: ['what are your opening hours'], interimEveryMs: 100 });
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 8000 });
    const { events, done } = collect(stream);
    const half = (f: AudioFrame): AudioFrame => ({ samples: f.samples.filter((_, i) => i % 2 === 0), sampleRate: 8000 });
    writeMs(stream, () => half(silenceFrame()), 200);
    writeMs(stream, () => half(loudFrame()), 600);
    writeMs(stream, () => half(silenceFrame()), 300);
    expect(() => stream.write(loudFrame())).toThrow(/at 8000 Hz got 16000 Hz/);
    await standIn.waitFor(() => events.some((e) => e.type === 'final'));
    await stream.close();
    await done;
    expect(standIn.connections[0]!.query).toMatchObject({ encoding: 'linear16', sample_rate: '8000' });
    expect(standIn.connections[0]!.audioMs).toBe(1100);
    expect(events.find((e) => e.type === 'final')).toMatchObject({ text: 'what are your opening hours', startMs: 200, endMs: 800 });
    expect(() => provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 24_000 as never })).toThrow(/16000 or 8000 Hz audio, not 24000/);
  });

  it('finalize() flushes the utterance (Finalize → from_finalize final) without waiting for endpointing', async () => {
    const { standIn, provider } = await setup({ script: ['yes please'] }, { endpointingMs: false });
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const { events, done } = collect(stream);
    writeMs(stream, loudFrame, 400);
    writeMs(stream, silenceFrame, 400);
    await standIn.waitFor(() => standIn.connections[0]?.audioMs === 800);
    expect(events.filter((e) => e.type === 'final')).toEqual([]);
    stream.finalize();
    await standIn.waitFor(() => events.some((e) => e.type === 'final'));
    expect(events.find((e) => e.type === 'final')).toMatchObject({ text: 'yes please', speechFinal: true, startMs: 0, endMs: 400 });
    expect(standIn.connections[0]!.controls.map((c) => c.type)).toContain('Finalize');
    await stream.close();
    await done;
  });

  it('sends KeepAlive while no audio flows, so the server idle timeout never fires', async () => {
    const { standIn, provider } = await setup({ idleTimeoutMs: 500 }, { keepAliveMs: 100 });
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const { events, done } = collect(stream);
    await standIn.waitFor(() => standIn.connections[0]?.controls.filter((c) => c.type === 'KeepAlive').length === 5, 2000);
    const conn = standIn.connections[0]!;
    expect(conn.end).toBeUndefined();
    // Audio resets the keepalive clock: nothing extra is sent while frames flow.
    const before = conn.controls.length;
    for (let i = 0; i < 5; i++) {
      stream.write(silenceFrame());
      await new Promise((r) => setTimeout(r, 40));
    }
    expect(conn.controls.length - before).toBeLessThanOrEqual(1);
    await stream.close();
    await done;
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
  });

  it('CloseStream: close() gets the last final, then Metadata, and the server closes normally', async () => {
    const { standIn, provider } = await setup({ script: ['goodbye'], finalLatencyMs: 50 });
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const { events, done } = collect(stream);
    writeMs(stream, loudFrame, 300); // still speaking when the call ends
    await stream.close();
    await done; // the events end once the socket has closed
    const conn = standIn.connections[0]!;
    expect(conn.controls.at(-1)?.type).toBe('CloseStream');
    expect(conn.audioMs).toBe(300); // audio written before close() was all delivered first
    expect(conn.sent.at(-1)?.type).toBe('Metadata');
    expect(conn.end).toBe('closed');
    await standIn.waitFor(() => conn.closeCode !== undefined);
    expect(conn.closeCode).toBe(1000);
    expect(events.filter((e) => e.type === 'final')).toEqual([{ type: 'final', text: 'goodbye', startMs: 0, endMs: 300, speechFinal: false }]);
  });

  it('reconnects once after a dropped socket, keeping times on the stream clock', async () => {
    const { standIn, provider } = await setup({ script: ['first', 'second part'] });
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const { events, done } = collect(stream);
    writeMs(stream, loudFrame, 200);
    writeMs(stream, silenceFrame, 200);
    await standIn.waitFor(() => events.some((e) => e.type === 'final'));
    standIn.drop();
    // Written while the socket is down: buffered and sent on the new socket.
    writeMs(stream, silenceFrame, 100);
    await standIn.waitFor(() => standIn.connections.length === 2);
    writeMs(stream, loudFrame, 200);
    writeMs(stream, silenceFrame, 200);
    await standIn.waitFor(() => events.filter((e) => e.type === 'final').length === 2);
    await stream.close();
    await done;
    expect(standIn.connections[0]!.end).toBe('dropped');
    expect(standIn.connections[1]!.headers.authorization).toBe('Token dg-test-key');
    const finals = events.filter((e) => e.type === 'final');
    expect(finals[0]).toMatchObject({ text: 'first', startMs: 0, endMs: 200 });
    // The second socket's t=0 is stream time 400 ms: 100 ms silence, then speech at 500 ms.
    expect(finals[1]).toMatchObject({ text: 'second part', startMs: 500, endMs: 700 });
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
  });

  it('skipped stretches are not sent, and result times are put back on the call clock around them', async () => {
    const { standIn, provider } = await setup({ script: ['first', 'second part', 'third'] });
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const { events, done } = collect(stream);
    writeMs(stream, loudFrame, 200);
    // Left out right where the words end: the words' end stays before the gap.
    stream.skip!(1000);
    stream.skip!(500); // a stretch left out in pieces is one gap
    writeMs(stream, silenceFrame, 300);
    writeMs(stream, loudFrame, 200);
    writeMs(stream, silenceFrame, 200);
    await standIn.waitFor(() => events.filter((e) => e.type === 'final').length === 2);
    standIn.drop();
    await standIn.waitFor(() => standIn.connections.length === 2);
    stream.skip!(300);
    writeMs(stream, loudFrame, 200);
    writeMs(stream, silenceFrame, 200);
    await standIn.waitFor(() => events.filter((e) => e.type === 'final').length === 3);
    await stream.close();
    await done;
    // The server got only what was written: 900 ms on the first socket, 400 on the second.
    expect(standIn.connections.map((c) => c.audioMs)).toEqual([900, 400]);
    const finals = events.filter((e) => e.type === 'final').map((e) => [e.text, e.startMs, e.endMs]);
    expect(finals).toEqual([
      ['first', 0, 200],
      // Stream time 500–700 ms, after 1500 ms left out at stream time 200.
      ['second part', 2000, 2200],
      // The second socket starts at stream time 900 (call time 2400); 300 ms more were left out.
      ['third', 2700, 2900],
    ]);
  });

  it('a second drop right after the reconnect ends the stream with a retryable error', async () => {
    const { standIn, provider } = await setup();
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const { events, done } = collect(stream);
    await standIn.waitFor(() => standIn.connections.length === 1);
    standIn.drop();
    await standIn.waitFor(() => standIn.connections.length === 2);
    await new Promise((r) => setTimeout(r, 20));
    standIn.drop();
    await done;
    const err = events.find((e) => e.type === 'error');
    expect(err?.type === 'error' && err.error.retryable).toBe(true);
  });

  it('retries the first connect once after a 503, and reports a bad key without retrying', async () => {
    const { standIn, provider } = await setup();
    standIn.failHandshakes(1, 503);
    const ok = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const a = collect(ok);
    await standIn.waitFor(() => standIn.connections.length === 1);
    await ok.close();
    await a.done;
    expect(standIn.rejected).toHaveLength(1);

    const bad = new DeepgramStt({ apiKey: 'wrong', baseUrl: standIn.url });
    const b = collect(bad.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 }));
    await b.done;
    expect(standIn.rejected).toHaveLength(2);
    expect(standIn.rejected[1]!.status).toBe(401);
    const err = b.events[0];
    expect(err?.type).toBe('error');
    expect(err?.type === 'error' && err.error.retryable).toBe(false);
    expect(err?.type === 'error' && err.error.message).toMatch(/401/);
  });

  it('with no API key it reports a permanent error naming the variable, and never connects', async () => {
    const { standIn } = await setup();
    const keyless = new DeepgramStt({ baseUrl: standIn.url });
    const events = collect(keyless.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 }));
    await events.done;
    const err = events.events[0];
    expect(err?.type).toBe('error');
    expect(err?.type === 'error' && err.error.retryable).toBe(false);
    expect(err?.type === 'error' && err.error.message).toContain('DEEPGRAM_API_KEY');
    expect(standIn.connections).toHaveLength(0);
    expect(standIn.rejected).toHaveLength(0);
  });

  it('abort tears the socket down at once and ends the events', async () => {
    const { standIn, provider } = await setup();
    const ac = new AbortController();
    const stream = provider.open({ language: 'en-US', signal: ac.signal, sampleRate: 16000 });
    const { done } = collect(stream);
    writeMs(stream, loudFrame, 100);
    await standIn.waitFor(() => standIn.connections[0]?.audioMs === 100);
    ac.abort();
    await done;
    await standIn.waitFor(() => standIn.connections[0]!.end !== undefined);
    expect(standIn.connections[0]!.controls.map((c) => c.type)).not.toContain('CloseStream');
  });
});

describe('Deepgram stand-in scripting', () => {
  it('trigger {afterMs} emits the next scripted utterance every N ms of audio, silence included', async () => {
    const { standIn, provider } = await setup({ script: ['one', 'two'], trigger: { afterMs: 400 } });
    const stream = provider.open({ language: 'en-US', signal: new AbortController().signal, sampleRate: 16000 });
    const { events, done } = collect(stream);
    writeMs(stream, silenceFrame, 800);
    await standIn.waitFor(() => events.filter((e) => e.type === 'final').length === 2);
    await stream.close();
    await done;
    expect(events.filter((e) => e.type === 'final').map((e) => [e.text, e.startMs, e.endMs])).toEqual([
      ['one', 0, 400],
      ['two', 400, 800],
    ]);
  });

  it('refuses a handshake without raw-audio parameters (400), as Deepgram does', async () => {
    const { standIn } = await setup();
    const { default: WebSocket } = await import('ws');
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${standIn.url}/v1/listen?sample_rate=16000`, { headers: { Authorization: 'Token dg-test-key' } });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => {});
    });
    expect(status).toBe(400);
  });
});
