import { describe, expect, it } from 'vitest';
import { ArchiveQueue, backoffMs } from '../../../src/blobs/archive-queue.ts';

const policy = { baseMs: 1000, maxMs: 8000 };

describe('ArchiveQueue (what the recording archive owes, on a manual clock)', () => {
  it('backoff doubles from the base and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 40].map((n) => backoffMs(policy, n))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('an upload is due at once; a success drops it', () => {
    const q = new ArchiveQueue(policy);
    q.upload('recordings/a.wav', 0);
    expect(q.wakeAtMs).toBe(0);
    const [job] = q.take(0);
    expect(job).toEqual({ key: 'recordings/a.wav', op: 'upload', attempt: 1 });
    expect(q.take(0)).toEqual([]); // running: not handed out twice
    expect(q.settle(job!, true, 10)).toBeUndefined();
    expect(q.size).toBe(0);
    expect(q.wakeAtMs).toBeUndefined();
  });

  it('a failure is retried after the backoff, never dropped', () => {
    const q = new ArchiveQueue(policy);
    q.upload('k', 0);
    let now = 0;
    for (let attempt = 1; attempt <= 6; attempt++) {
      const [job] = q.take(now);
      expect(job).toMatchObject({ key: 'k', attempt });
      const delay = q.settle(job!, false, now)!;
      expect(delay).toBe(backoffMs(policy, attempt));
      expect(q.take(now + delay - 1)).toEqual([]);
      now += delay;
      expect(q.wakeAtMs).toBe(now);
    }
    expect(q.pending('k')).toBe('upload');
  });

  it('no more than `concurrency` jobs run at once; the rest wait for a slot', () => {
    const q = new ArchiveQueue(policy, 2);
    for (const k of ['a', 'b', 'c']) q.upload(k, 0);
    const first = q.take(0);
    expect(first.map((j) => j.key)).toEqual(['a', 'b']);
    expect(q.take(0)).toEqual([]);
    q.settle(first[0]!, true, 1);
    expect(q.take(1).map((j) => j.key)).toEqual(['c']);
  });

  it('a deletion asked for during an upload runs after it (the fresh object goes too)', () => {
    const q = new ArchiveQueue(policy);
    q.upload('k', 0);
    const [up] = q.take(0);
    q.delete('k', 5);
    expect(q.take(5)).toEqual([]); // one job per key at a time
    q.settle(up!, true, 10);
    expect(q.take(10)).toEqual([{ key: 'k', op: 'delete', attempt: 1 }]);
  });

  it('a deletion replaces an upload still waiting; an upload asked for after is dropped', () => {
    const q = new ArchiveQueue(policy);
    q.upload('k', 0);
    q.settle(q.take(0)[0]!, false, 0); // waiting out a backoff
    q.delete('k', 1);
    q.upload('k', 2);
    expect(q.take(2)).toEqual([{ key: 'k', op: 'delete', attempt: 1 }]);
  });

  it('a deletion asked again during its backoff runs at once', () => {
    const q = new ArchiveQueue(policy);
    q.delete('k', 0);
    q.settle(q.take(0)[0]!, false, 0);
    expect(q.take(0)).toEqual([]);
    q.delete('k', 1);
    expect(q.take(1)).toEqual([{ key: 'k', op: 'delete', attempt: 2 }]);
  });

  it('a stale settle (the job was replaced) changes nothing', () => {
    const q = new ArchiveQueue(policy);
    q.delete('k', 0);
    expect(q.settle({ key: 'k', op: 'upload' }, true, 0)).toBeUndefined();
    expect(q.pending('k')).toBe('delete');
  });
});
