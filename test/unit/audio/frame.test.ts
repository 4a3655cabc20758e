import { describe, expect, it } from 'vitest';
import {
  FRAME_MS,
  FRAME_SAMPLES,
  FrameChunker,
  SAMPLE_RATE,
  concatPcm,
  copySamples,
  pcmFromBytes,
  pcmToBytes,
  rmsDbfs,
  silenceFrame,
  splitPcm,
  toFrames,
} from '../../../src/audio/frame.ts';
import { sine } from './signal.ts';

describe('frame constants and helpers', () => {
  it('describes 20 ms at 16 kHz', () => {
    expect([SAMPLE_RATE, FRAME_MS, FRAME_SAMPLES]).toEqual([16000, 20, 320]);
    const f = silenceFrame();
    expect(f.samples.length).toBe(320);
    expect(f.sampleRate).toBe(16000);
    expect(silenceFrame(8000).samples.length).toBe(160);
  });

  it('measures level in dBFS', () => {
    expect(rmsDbfs(new Int16Array(320))).toBe(-Infinity);
    // A full-scale sine is -3 dBFS; half amplitude is about -9 dBFS.
    expect(rmsDbfs(sine(1000, 16000, 1600, 32767))).toBeCloseTo(-3.01, 1);
    expect(rmsDbfs(sine(1000, 16000, 1600, 16384))).toBeCloseTo(-9.03, 1);
    expect(rmsDbfs(new Int16Array(10).fill(-32768))).toBeCloseTo(0, 5);
  });

  it('concatenates and splits PCM', () => {
    const a = Int16Array.from([1, 2, 3]);
    const b = Int16Array.from([4, 5]);
    expect([...concatPcm([a, b])]).toEqual([1, 2, 3, 4, 5]);
    const frames = splitPcm(new Int16Array(700).fill(7));
    expect(frames.map((f) => f.length)).toEqual([320, 320, 320]);
    expect(frames[2]![59]).toBe(7);
    expect(frames[2]![60]).toBe(0);
    expect(splitPcm(new Int16Array(700), 320, false)).toHaveLength(2);
  });

  it('converts little-endian bytes from odd offsets', () => {
    const pcm = Int16Array.from([0, 1, -1, 32767, -32768]);
    const bytes = pcmToBytes(pcm);
    const shifted = Buffer.concat([Buffer.from([9]), bytes]).subarray(1);
    expect([...pcmFromBytes(shifted)]).toEqual([...pcm]);
  });

  it('writes exactly the samples of a view into a larger buffer, little-endian, as a copy', () => {
    const backing = Int16Array.from([111, 0x0102, -2, 222]);
    const view = backing.subarray(1, 3);
    const bytes = pcmToBytes(view);
    expect([...bytes]).toEqual([0x02, 0x01, 0xfe, 0xff]);
    backing[1] = 0;
    expect(bytes[0]).toBe(0x02);
  });
});

describe('FrameChunker', () => {
  it('turns arbitrary chunks into exact frames without losing or reordering samples', () => {
    const total = 16000;
    const ramp = Int16Array.from({ length: total }, (_, i) => i % 30000);
    const chunker = new FrameChunker();
    const out: Int16Array[] = [];
    let at = 0;
    for (const size of [1, 7, 319, 320, 321, 640, 1000, 13]) {
      for (const f of chunker.push(ramp.subarray(at, at + size))) out.push(f.samples);
      at += size;
    }
    for (const f of chunker.push(ramp.subarray(at))) out.push(f.samples);
    expect(out.every((f) => f.length === 320)).toBe(true);
    expect(out).toHaveLength(Math.floor(total / 320));
    expect([...concatPcm(out)]).toEqual([...ramp.subarray(0, out.length * 320)]);
    expect(chunker.pending).toBe(total % 320);
  });

  it('hands out frames that later pushes do not overwrite', () => {
    const chunker = new FrameChunker();
    chunker.push(new Int16Array(100).fill(1));
    const [first] = chunker.push(new Int16Array(220).fill(1));
    chunker.push(new Int16Array(400).fill(2));
    expect(first!.samples.every((s) => s === 1)).toBe(true);
  });

  it('pushInto appends the same frames to a caller\'s array and says how many', () => {
    const a = new FrameChunker();
    const b = new FrameChunker();
    const queue = [silenceFrame()];
    for (const size of [100, 500, 40, 320, 0]) {
      const chunk = Int16Array.from({ length: size }, (_, i) => size + i);
      const expected = a.push(chunk);
      expect(b.pushInto(chunk, queue)).toBe(expected.length);
      expect(queue.slice(queue.length - expected.length).map((f) => [...f.samples])).toEqual(expected.map((f) => [...f.samples]));
    }
    expect(queue).toHaveLength(1 + 3);
    expect(b.pending).toBe(a.pending);
  });

  it('flushes a padded last frame and can be reset', () => {
    const chunker = new FrameChunker();
    chunker.push(new Int16Array(50).fill(3));
    const last = chunker.flush()!;
    expect(last.samples.length).toBe(320);
    expect(last.samples[49]).toBe(3);
    expect(last.samples[50]).toBe(0);
    expect(chunker.flush()).toBeUndefined();
    chunker.push(new Int16Array(50));
    chunker.reset();
    expect(chunker.pending).toBe(0);
  });

  it('adapts an async stream of chunks', async () => {
    async function* chunks(): AsyncIterable<Int16Array> {
      yield new Int16Array(500);
      yield new Int16Array(500);
    }
    const frames = [];
    for await (const f of toFrames(chunks())) frames.push(f);
    expect(frames).toHaveLength(4); // 1000 samples → 3 full + 1 padded
  });
});

describe('copySamples', () => {
  it('copies into views of shared slabs: equal values, no byte shared, aligned, independent of the source', () => {
    const copies: Int16Array[] = [];
    for (let i = 0; i < 300; i++) {
      const src = Int16Array.from({ length: 320 + (i % 3) }, (_, k) => (k * 7 + i) % 32768);
      const copy = copySamples(src);
      expect([...copy]).toEqual([...src]);
      expect(copy.byteOffset % 8).toBe(0);
      src.fill(0);
      expect(copy[1]).not.toBe(0);
      copies.push(copy);
    }
    // 300 frames of ~640 bytes span several 64 KiB slabs, and each slab holds many frames.
    const slabs = new Set(copies.map((c) => c.buffer));
    expect(slabs.size).toBeGreaterThan(1);
    expect(slabs.size).toBeLessThan(10);
    const ends = new Map<ArrayBufferLike, number>();
    for (const c of copies) {
      expect(c.byteOffset).toBeGreaterThanOrEqual(ends.get(c.buffer) ?? 0);
      ends.set(c.buffer, c.byteOffset + c.byteLength);
    }
  });

  it('gives a large array a buffer of its own', () => {
    const big = copySamples(new Int16Array(8192));
    expect(big.byteOffset).toBe(0);
    expect(big.buffer.byteLength).toBe(16384);
  });
});
