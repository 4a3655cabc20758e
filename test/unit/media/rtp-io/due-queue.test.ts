/**
 * The I/O thread's send timing core (src/media/rtp-io/due-queue.ts) on a hand-driven clock:
 * packets leave at their due time in due order, a socket's packets never overtake each other,
 * and a closing socket takes its queued packets with it.
 */
import { describe, expect, it } from 'vitest';
import { DueQueue } from '../../../../src/media/rtp-io/due-queue.ts';

/** Everything due by `now`, in the order it leaves. */
function due<T>(q: DueQueue<T>, now: number): T[] {
  const out: T[] = [];
  for (let x = q.shift(now); x !== undefined; x = q.shift(now)) out.push(x);
  return out;
}

describe('DueQueue', () => {
  it('holds packets until they are due and sends them in due order across sockets', () => {
    const q = new DueQueue<string>();
    q.push(1, 25, 'a25');
    q.push(2, 10, 'b10');
    q.push(3, 15, 'c15');
    q.push(2, 30, 'b30');
    expect(q.nextDue).toBe(10);
    expect(due(q, 9.9)).toEqual([]);
    expect(due(q, 10)).toEqual(['b10']);
    expect(due(q, 24)).toEqual(['c15']);
    expect(due(q, 100)).toEqual(['a25', 'b30']);
    expect(q.size).toBe(0);
    expect(q.nextDue).toBe(Infinity);
  });

  it('keeps one socket’s hand-over order: an earlier due time waits for the packet before it', () => {
    const q = new DueQueue<string>();
    // Comfort noise due 5 ms after its slot; the talkspurt's first packet is due "now", earlier.
    q.push(7, 105, 'noise');
    q.push(7, 101, 'speech');
    q.push(8, 102, 'other');
    expect(due(q, 102)).toEqual(['other']);
    expect(due(q, 105)).toEqual(['noise', 'speech']);
  });

  it('keeps hand-over order for equal due times, also across a heap of thousands', () => {
    const q = new DueQueue<number>();
    const n = 5000;
    for (let i = 0; i < n; i++) q.push(i % 150, Math.floor(i / 150) * 20, i);
    const out = due(q, Infinity);
    expect(out).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('gives a closing socket its queued packets in order and forgets its floor', () => {
    const q = new DueQueue<string>();
    q.push(1, 50, 'x1');
    q.push(2, 40, 'y1');
    q.push(1, 60, 'x2');
    q.push(2, 70, 'y2');
    expect(q.takeLane(1)).toEqual(['x1', 'x2']);
    expect(q.size).toBe(2);
    q.push(1, 10, 'x3'); // a new socket with the same id starts without the old floor
    expect(due(q, 45)).toEqual(['x3', 'y1']);
    expect(due(q, 100)).toEqual(['y2']);
  });
});
