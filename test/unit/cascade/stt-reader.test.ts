import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { IDLE_AFTER_FRAMES, PREROLL_FRAMES, QUIET_CHUNK_FRAMES, SttReader } from '../../../src/call/cascade/stt-reader.ts';
import { EventQueue } from '../../../src/providers/stt/event-queue.ts';
import type { SttEvent, SttProvider, SttStream } from '../../../src/providers/stt/types.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { ProviderError } from '../../../src/util/errors.ts';

class RecordingStream implements SttStream {
  copiesOnWrite?: boolean;
  readonly log: string[] = [];
  readonly writes: AudioFrame[] = [];
  private readonly events = new EventQueue<SttEvent>();
  write(frame: AudioFrame): void {
    this.writes.push(frame);
    this.log.push(`write ${frame.samples.length}:${[...new Set(frame.samples)].join(',')}`);
  }
  /** Call audio left out, ms (the stream's times move on by it). */
  skipped = 0;
  skip?(ms: number): void;
  finalize(): void {
    this.log.push('finalize');
  }
  async close(): Promise<void> {
    this.log.push('close');
    this.events.end();
  }
  [Symbol.asyncIterator](): AsyncIterator<SttEvent> {
    return this.events[Symbol.asyncIterator]();
  }
}

function reader(chunkFrames: number, copiesOnWrite?: boolean, streaming = true, skips = true) {
  const stream = new RecordingStream();
  stream.copiesOnWrite = copiesOnWrite;
  if (skips) stream.skip = (ms) => void (stream.skipped += ms);
  const provider: SttProvider = { label: 'test', capabilities: { interim: true, streaming }, open: () => stream };
  const hooks = { now: () => 0, onInterim: () => {}, onAnyFinal: () => {}, onFinal: () => {}, onError: () => {}, onLost: () => {}, track: () => {} };
  const r = new SttReader(provider, 'en-US', new ManualClock(0), new AbortController().signal, hooks, chunkFrames);
  r.open();
  return { r, stream };
}

const frame = (v: number): AudioFrame => ({ samples: new Int16Array(320).fill(v), sampleRate: 16000 });

describe('SttReader audio chunks', () => {
  it('hands frames on one by one with a chunk of one frame', () => {
    const { r, stream } = reader(1);
    const f = frame(1);
    r.write(f);
    expect(stream.writes[0]).toBe(f);
  });

  it('sends two frames per write, in order, each chunk a fresh array', () => {
    const { r, stream } = reader(2);
    for (let i = 1; i <= 4; i++) r.write(frame(i));
    expect(stream.log).toEqual(['write 640:1,2', 'write 640:3,4']);
    expect(stream.writes[0]!.samples).not.toBe(stream.writes[1]!.samples);
    expect(stream.writes[0]!.samples.subarray(318, 322)).toEqual(Int16Array.of(1, 1, 2, 2));
  });

  it('sends a held frame before finalize and before close', async () => {
    const { r, stream } = reader(2);
    r.write(frame(1));
    expect(stream.log).toEqual([]);
    r.finalize();
    r.write(frame(2));
    await r.close();
    expect(stream.log).toEqual(['write 320:1', 'finalize', 'write 320:2', 'close']);
  });

  it('refills one array for a stream that copies on write (Deepgram), even for a short chunk', () => {
    const { r, stream } = reader(2, true);
    for (let i = 1; i <= 4; i++) r.write(frame(i));
    r.write(frame(5));
    r.finalize();
    r.write(frame(6));
    r.write(frame(7));
    expect(stream.log).toEqual(['write 640:1,2', 'write 640:3,4', 'write 320:5', 'finalize', 'write 640:6,7']);
    const buffers = new Set(stream.writes.map((w) => w.samples.buffer));
    expect(buffers.size).toBe(1);
  });

  it('sends a quiet line in 200 ms chunks once it has been quiet 200 ms, and the first loud frame at once', () => {
    const { r, stream } = reader(2, true);
    const quiet = 3; // −81 dBFS
    const loud = 3000; // −21 dBFS
    for (let i = 0; i < 35; i++) r.write(frame(quiet));
    for (let i = 0; i < 3; i++) r.write(frame(loud));
    const sizes = stream.writes.map((w) => w.samples.length / 320);
    // Ten frames at the normal pace (the hangover), then 10-frame chunks; the first loud frame
    // goes at once with the five quiet ones held, then the normal pace again.
    expect(sizes).toEqual([2, 2, 2, 2, 2, 10, 10, 6, 2]);
    expect([...new Set(stream.log.at(-2)!.split(':')[1]!.split(','))]).toEqual([String(quiet), String(loud)]);
    expect(QUIET_CHUNK_FRAMES).toBe(10);
  });

  it('sends nothing once the line has been quiet 600 ms, then the last 100–180 ms of it ahead of the first loud frame', () => {
    const { r, stream } = reader(2, true);
    const loud = 3000;
    // Quiet frames of distinct levels (1..30, all below −60 dBFS), so the pre-roll can be told apart.
    for (let i = 0; i < 60; i++) r.write(frame(1 + (i % 30)));
    const sentQuiet = stream.writes.reduce((s, w) => s + w.samples.length / 320, 0);
    expect(sentQuiet).toBe(IDLE_AFTER_FRAMES);
    // What was left out is reported, so that sent + skipped + held is all of the call's audio.
    expect(sentQuiet * 20 + stream.skipped + PREROLL_FRAMES * 20).toBe(60 * 20);
    r.write(frame(loud));
    r.write(frame(loud));
    r.write(frame(loud));
    const sizes = stream.writes.map((w) => w.samples.length / 320);
    expect(sizes).toEqual([2, 2, 2, 2, 2, 10, 10, PREROLL_FRAMES + 1, 2]);
    // The pre-roll is the quiet frames just before the loud one (the 56th to the 60th), in order.
    const preroll = stream.log.at(-2)!.split(':')[1]!.split(',').map(Number);
    expect(preroll).toEqual([26, 27, 28, 29, 30, loud]);
  });

  it('finalize on an idle line sends only the Finalize: the held pre-roll is silence', () => {
    const { r, stream } = reader(2, true);
    for (let i = 0; i < IDLE_AFTER_FRAMES + 3; i++) r.write(frame(2));
    const before = stream.writes.length;
    r.finalize();
    expect(stream.writes.length).toBe(before);
    expect(stream.log.at(-1)).toBe('finalize');
    expect(stream.skipped).toBe(3 * 20);
    // Speech after it is sent as before, with the pre-roll held since.
    for (let i = 0; i < 2; i++) r.write(frame(2));
    r.write(frame(3000));
    expect(stream.log.at(-1)).toBe('write 960:2,3000');
  });

  it('the frames that end the quiet stretch before idling are still sent (the recogniser needs the silence after a word)', () => {
    const { r, stream } = reader(4, true);
    for (let i = 0; i < 3; i++) r.write(frame(3000));
    for (let i = 0; i < 25; i++) r.write(frame(2));
    const beforeIdle = stream.writes.reduce((s, w) => s + w.samples.length / 320, 0);
    for (let i = 0; i < 10; i++) r.write(frame(2));
    const sent = stream.writes.reduce((s, w) => s + w.samples.length / 320, 0);
    expect(beforeIdle).toBeLessThan(28);
    expect(sent).toBe(3 + IDLE_AFTER_FRAMES);
  });

  it('a stream that cannot be told what is left out (no skip) is sent the whole quiet line', () => {
    const { r, stream } = reader(2, true, true, false);
    for (let i = 0; i < 60; i++) r.write(frame(2));
    r.finalize();
    expect(stream.writes.reduce((s, w) => s + w.samples.length / 320, 0)).toBe(60);
  });

  it('a segment uploader (not streaming) gets the frames themselves: chunks would only be copies', () => {
    const { r, stream } = reader(2, undefined, false);
    const frames = [frame(1), frame(2), frame(3)];
    for (const f of frames) r.write(f);
    expect(stream.writes).toEqual(frames);
    expect(stream.writes[0]).toBe(frames[0]);
  });

  it('a frame of another shape closes the chunk in progress', () => {
    const { r, stream } = reader(2);
    r.write(frame(1));
    r.write({ samples: new Int16Array(160).fill(5), sampleRate: 16000 });
    r.write({ samples: new Int16Array(160).fill(6), sampleRate: 16000 });
    expect(stream.log).toEqual(['write 320:1', 'write 320:5,6']);
  });
});

describe('SttReader when the recogniser fails', () => {
  class FailingStream extends RecordingStream {
    readonly queue = new EventQueue<SttEvent>();
    override [Symbol.asyncIterator](): AsyncIterator<SttEvent> {
      return this.queue[Symbol.asyncIterator]();
    }
  }

  function failing(streaming: boolean) {
    const streams: FailingStream[] = [];
    const provider: SttProvider = {
      label: 'test',
      capabilities: { interim: true, streaming },
      open: () => {
        const s = new FailingStream();
        streams.push(s);
        return s;
      },
    };
    const lost: string[] = [];
    const errors: boolean[] = [];

    const hooks = {
      now: () => 0,
      onInterim: () => {},
      onAnyFinal: () => {},
      onFinal: () => {},
      onError: (_m: string, retrying: boolean) => void errors.push(retrying),
      onLost: (e: ProviderError) => void lost.push(e.message),
      track: () => {},
    };
    const r = new SttReader(provider, 'en-US', new ManualClock(0), new AbortController().signal, hooks);
    r.open();
    // The readers run on their own: a few turns of the event loop let them take what was pushed.
    const settle = async () => {
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    };
    return { streams, lost, errors, settle };
  }

  it('a live stream refused (401) is lost at once, without a pointless reopen', async () => {
    const { streams, lost, errors, settle } = failing(true);
    streams[0]!.queue.push({ type: 'error', error: new ProviderError('refused: HTTP 401', 'deepgram', false) });
    streams[0]!.queue.end();
    await settle();
    expect(streams).toHaveLength(1);
    expect(errors).toEqual([false]);
    expect(lost).toEqual(['refused: HTTP 401']);
  });

  it('a live stream that drops is reopened once; a second failure is lost', async () => {
    const { streams, lost, errors, settle } = failing(true);
    streams[0]!.queue.push({ type: 'error', error: new ProviderError('socket closed', 'deepgram', true) });
    streams[0]!.queue.end();
    await settle();
    expect(streams).toHaveLength(2);
    expect(lost).toEqual([]);
    streams[1]!.queue.push({ type: 'error', error: new ProviderError('HTTP 503', 'deepgram', true) });
    streams[1]!.queue.end();
    await settle();
    expect(errors).toEqual([true, false]);
    expect(lost).toEqual(['HTTP 503']);
  });

  it('a segment uploader: one failed upload is survived, two in a row are lost, a refusal at once', async () => {
    const a = failing(false);
    const transient = { type: 'error' as const, error: new ProviderError('HTTP 500', 'openai', true) };
    for (const ev of [transient, { type: 'final' as const, text: 'hello' }, transient]) a.streams[0]!.queue.push(ev);
    await a.settle();
    expect(a.lost).toEqual([]);
    a.streams[0]!.queue.push(transient);
    await a.settle();
    expect(a.lost).toEqual(['HTTP 500']);
    const b = failing(false);
    b.streams[0]!.queue.push({ type: 'error', error: new ProviderError('HTTP 401', 'openai', false) });
    await b.settle();
    expect(b.lost).toEqual(['HTTP 401']);
  });
});
