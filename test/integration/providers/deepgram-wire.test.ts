/**
 * The Deepgram stream's audio messages on the wire, against a bare `ws` server on loopback: what
 * the send path may skip (copies, compression) without changing a byte of what the service gets.
 */
import type { AddressInfo } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { DeepgramStt } from '../../../src/providers/stt/deepgram.ts';
import type { SttEvent, SttStream } from '../../../src/providers/stt/types.ts';

let server: WebSocketServer | undefined;
let ac = new AbortController();

afterEach(async () => {
  ac.abort();
  ac = new AbortController();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function start(replies: string[] = []) {
  const got: { binary: Buffer[]; text: string[]; upgrade?: IncomingMessage; extensions?: string } = { binary: [], text: [] };
  // A server that would accept permessage-deflate if the client offered it.
  server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: true });
  server.on('connection', (ws, req) => {
    got.upgrade = req;
    got.extensions = ws.extensions;
    ws.on('message', (data, isBinary) => {
      // The scripted replies answer the first audio, as a recogniser would.
      if (isBinary && got.binary.length === 0) for (const r of replies) ws.send(r);
      if (isBinary) got.binary.push(data as Buffer);
      else got.text.push(String(data));
    });
  });
  await new Promise<void>((resolve) => server!.once('listening', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const stt = new DeepgramStt({ baseUrl: `ws://127.0.0.1:${port}`, apiKey: 'k' });
  const stream: SttStream = stt.open({ language: 'en-US', signal: ac.signal, sampleRate: 16000 });
  return { got, stream };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

const le = (samples: Int16Array): Buffer => {
  const b = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => b.writeInt16LE(s, i * 2));
  return b;
};

describe('Deepgram audio messages', () => {
  it('copies on write: a reused array, before and after the socket opens, reaches the server as written, unmasked in place', async () => {
    const { got, stream } = await start();
    expect(stream.copiesOnWrite).toBe(true);
    const buf = new Int16Array(640);
    const sent: Buffer[] = [];
    const writeFilled = (seed: number): void => {
      for (let i = 0; i < buf.length; i++) buf[i] = ((i * 37 + seed * 1009) % 65536) - 32768;
      const before = le(buf);
      stream.write({ samples: buf, sampleRate: 16000 });
      // Masking (required of a client) must not have touched the caller's array.
      expect(le(buf).equals(before)).toBe(true);
      sent.push(before);
    };
    // Before the socket is open: held, so it must have been copied.
    writeFilled(1);
    writeFilled(2);
    await until(() => got.binary.length === 2);
    // Open: sent at once from the caller's own bytes.
    for (let k = 3; k <= 6; k++) writeFilled(k);
    await until(() => got.binary.length === 6);
    expect(got.binary.map((b) => b.toString('hex'))).toEqual(sent.map((b) => b.toString('hex')));
  });

  it('offers no permessage-deflate, so audio is never compressed', async () => {
    const { got, stream } = await start();
    stream.write({ samples: new Int16Array(640).fill(7), sampleRate: 16000 });
    await until(() => got.binary.length === 1);
    expect(got.upgrade!.headers['sec-websocket-extensions']).toBeUndefined();
    expect(got.extensions).toBe('');
    stream.finalize();
    await until(() => got.text.length === 1);
    expect(JSON.parse(got.text[0]!)).toEqual({ type: 'Finalize' });
  });

  it('reads Results by hand: interim and final events, other message types ignored, a malformed Results reported by field', async () => {
    const results = (fields: Record<string, unknown>): string =>
      JSON.stringify({ type: 'Results', start: 0.5, duration: 0.25, channel: { alternatives: [{ transcript: ' hello there ' }] }, ...fields });
    const { stream } = await start([
      'not json',
      JSON.stringify({ type: 'Metadata', request_id: 'r' }),
      JSON.stringify({ type: 'SpeechStarted', timestamp: 0.4 }),
      results({ is_final: false }),
      results({ start: '0.5' }),
      results({ channel: { alternatives: [{ transcript: 7 }] } }),
      results({ is_final: 'yes' }),
      results({ channel: {} }),
      results({ is_final: true, speech_final: true }),
    ]);
    stream.write({ samples: new Int16Array(640), sampleRate: 16000 });
    const events: SttEvent[] = [];
    for await (const e of stream) {
      events.push(e);
      if (e.type === 'final') break;
    }
    expect(events.map((e) => (e.type === 'error' ? e.error.message : e))).toEqual([
      { type: 'interim', text: 'hello there', startMs: 500, endMs: 750 },
      'Deepgram sent a malformed Results message: start is not a number',
      'Deepgram sent a malformed Results message: channel.alternatives[0].transcript is not a string',
      'Deepgram sent a malformed Results message: is_final is not a boolean',
      'Deepgram sent a malformed Results message: channel.alternatives is not an array',
      { type: 'final', text: 'hello there', startMs: 500, endMs: 750, speechFinal: true },
    ]);
  });
});
