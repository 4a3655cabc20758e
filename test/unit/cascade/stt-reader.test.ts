import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { QUIET_CHUNK_FRAMES, SttReader } from '../../../src/call/cascade/stt-reader.ts';
import { EventQueue } from '../../../src/providers/stt/event-queue.ts';
import type { SttEvent, SttProvider, SttStream } from '../../../src/providers/stt/types.ts';
import { ManualClock } from '../../../src/util/clock.ts';

class RecordingStream implements SttStream {
  copiesOnWrite?: boolean;
  readonly log: string[] = [];
  readonly writes: AudioFrame[] = [];
  private readonly events = new EventQueue<SttEvent>();
  write(frame: AudioFrame): void {
    this.writes.push(frame);
    this.log.push(`write ${frame.samples.length}:${[...new Set(frame.samples)].join(',')}`);
  }
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

function reader(chunkFrames: number, copiesOnWrite?: boolean, streaming = true) {
  const stream = new RecordingStream();
  stream.copiesOnWrite = copiesOnWrite;
  const provider: SttProvider = { label: 'test', capabilities: { interim: true, streaming }, open: () => stream };
  const hooks = { now: () => 0, onInterim: () => {}, onAnyFinal: () => {}, onFinal: () => {}, onError: () => {}, track: () => {} };
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
