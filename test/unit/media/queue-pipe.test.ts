import { describe, expect, it } from 'vitest';
import { DropOldestQueue, readThrough, type PipeReader } from '../../../src/media/rtp-session-queue.ts';

/** A reader that records what it gets; `hold` keeps the pipe paused after each item until released. */
function recorder(hold = false) {
  const got: number[] = [];
  const ends: unknown[] = [];
  let control: { pause(): void; resume(): void; stop(): void } | undefined;
  const reader: PipeReader<number> = {
    item: (v) => {
      got.push(v);
      if (hold) control!.pause();
    },
    end: (error) => ends.push(error ?? 'end'),
  };
  return { got, ends, reader, set control(c: typeof control) { control = c; } };
}

async function* numbers(n: number): AsyncGenerator<number> {
  for (let i = 1; i <= n; i++) {
    await new Promise((r) => setImmediate(r));
    yield i;
  }
}

describe('DropOldestQueue.pipe', () => {
  it('starts paused, then hands queued items and each later push to the reader in the pusher’s turn', () => {
    const q = new DropOldestQueue<number>(10);
    q.push(1);
    q.push(2);
    const r = recorder();
    const c = q.pipe(r.reader);
    expect(r.got).toEqual([]);
    c.resume();
    expect(r.got).toEqual([1, 2]);
    q.push(3);
    expect(r.got).toEqual([1, 2, 3]);
    q.end();
    expect(r.ends).toEqual(['end']);
  });

  it('queues while the reader is paused, dropping the oldest past capacity, and delivers on resume', () => {
    const q = new DropOldestQueue<number>(3);
    const r = recorder(true);
    const c = q.pipe(r.reader);
    r.control = c;
    c.resume();
    q.push(1);
    for (let i = 2; i <= 6; i++) q.push(i);
    expect(r.got).toEqual([1]);
    expect(q.dropped).toBe(2);
    c.resume();
    expect(r.got).toEqual([1, 4]);
    c.resume();
    c.resume();
    expect(r.got).toEqual([1, 4, 5, 6]);
    q.end();
    expect(r.ends).toEqual([]); // paused: the end waits for the reader too
    c.resume();
    expect(r.ends).toEqual(['end']);
  });

  it('a reader that resumes inside item() gets the backlog in order, without nesting', () => {
    const q = new DropOldestQueue<number>(10);
    const got: number[] = [];
    let depth = 0;
    let maxDepth = 0;
    const c = q.pipe({
      item: (v) => {
        depth++;
        maxDepth = Math.max(maxDepth, depth);
        got.push(v);
        c.pause();
        c.resume();
        depth--;
      },
      end: () => {},
    });
    for (let i = 1; i <= 5; i++) q.push(i);
    c.resume();
    q.push(6);
    expect(got).toEqual([1, 2, 3, 4, 5, 6]);
    expect(maxDepth).toBe(1);
  });

  it('a throwing reader is detached and ended with the error, not thrown at the producer', () => {
    const q = new DropOldestQueue<number>(10);
    const ends: unknown[] = [];
    const boom = new Error('boom');
    q.pipe({
      item: () => {
        throw boom;
      },
      end: (e) => ends.push(e),
    }).resume();
    expect(() => q.push(1)).not.toThrow();
    expect(ends).toEqual([boom]);
    // The queue buffers again, so a new reader can come.
    q.push(2);
    expect(q.size).toBe(1);
  });

  it('has a single reader: pipe and for-await exclude each other; stop() lets another in', async () => {
    const q = new DropOldestQueue<number>(10);
    const c = q.pipe(recorder().reader);
    expect(() => q.pipe(recorder().reader)).toThrow(/single reader/);
    await expect(q[Symbol.asyncIterator]().next()).rejects.toThrow(/single reader/);
    c.stop();
    q.push(7);
    expect(await q[Symbol.asyncIterator]().next()).toEqual({ value: 7, done: false });
  });
});

describe('readThrough over a plain async iterable', () => {
  it('asks for the next item only while the reader is not paused, then ends', async () => {
    const r = recorder(true);
    const c = readThrough(numbers(3), r.reader);
    r.control = c;
    await new Promise((res) => setTimeout(res, 20));
    expect(r.got).toEqual([]); // starts paused
    c.resume();
    await new Promise((res) => setTimeout(res, 20));
    expect(r.got).toEqual([1]);
    c.resume();
    await new Promise((res) => setTimeout(res, 20));
    c.resume();
    await new Promise((res) => setTimeout(res, 20));
    expect(r.got).toEqual([1, 2, 3]);
    c.resume();
    await new Promise((res) => setTimeout(res, 20));
    expect(r.ends).toEqual(['end']);
  });

  it('ends the reader with the source’s error; stop() ends reading quietly', async () => {
    const boom = new Error('source failed');
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      throw boom;
    }
    const r = recorder();
    readThrough(failing(), r.reader).resume();
    await new Promise((res) => setTimeout(res, 20));
    expect(r.got).toEqual([1]);
    expect(r.ends).toEqual([boom]);

    const s = recorder();
    const c = readThrough(numbers(1_000_000), s.reader);
    c.resume();
    await new Promise((res) => setTimeout(res, 10));
    c.stop();
    const n = s.got.length;
    await new Promise((res) => setTimeout(res, 20));
    expect(s.got.length).toBe(n);
    expect(s.ends).toEqual([]);
  });
});
