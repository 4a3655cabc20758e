/**
 * TurnSlicer (src/util/turn-slicer.ts): queued completions run in order, at most `perTurn` per
 * event-loop turn, and the next slice is queued ahead of whatever a slice's items set off for
 * the next turn (a helper's batch start), so that work sees every slice of the batch first.
 */
import { describe, expect, it } from 'vitest';
import { TurnSlicer } from '../../../src/util/turn-slicer.ts';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('TurnSlicer', () => {
  it('runs items in order, perTurn per turn', async () => {
    const ran: number[] = [];
    const slicer = new TurnSlicer<number>((n) => ran.push(n), 3);
    for (let i = 0; i < 7; i++) slicer.add(i);
    expect(ran).toEqual([]);
    expect(slicer.size).toBe(7);
    await nextTurn();
    expect(ran).toEqual([0, 1, 2]);
    await nextTurn();
    expect(ran).toEqual([0, 1, 2, 3, 4, 5]);
    await nextTurn();
    expect(ran).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(slicer.size).toBe(0);
  });

  it('queues the next slice before what its items schedule for the next turn', async () => {
    const events: string[] = [];
    let batchScheduled = false;
    // Each item asks for a "batch" on the next turn, as a stream answered by callback does.
    const slicer = new TurnSlicer<number>((n) => {
      events.push(`item ${n}`);
      if (batchScheduled) return;
      batchScheduled = true;
      setImmediate(() => {
        batchScheduled = false;
        events.push('batch');
      });
    }, 2);
    for (let i = 0; i < 5; i++) slicer.add(i);
    for (let i = 0; i < 4; i++) await nextTurn();
    expect(events).toEqual(['item 0', 'item 1', 'item 2', 'item 3', 'batch', 'item 4', 'batch']);
  });

  it('takes items added while it runs, in order', async () => {
    const ran: number[] = [];
    const slicer: TurnSlicer<number> = new TurnSlicer<number>((n) => {
      ran.push(n);
      if (n < 3) slicer.add(n + 10);
    }, 8);
    slicer.add(0);
    slicer.add(1);
    await nextTurn();
    await nextTurn();
    expect(ran).toEqual([0, 1, 10, 11]);
    expect(() => new TurnSlicer(() => {}, 0)).toThrow(RangeError);
  });
});
