/**
 * The RTP I/O thread's guess of its next wake-up with nothing queued (src/media/rtp-io/send-grid.ts):
 * the media clock's 5 ms phases as seen in the due times of the packets it sends.
 */
import { describe, expect, it } from 'vitest';
import { SendGrid } from '../../../../src/media/rtp-io/send-grid.ts';

/** A due time on the grid: slot × 5 ms, plus the offset every due time shares. */
const at = (slot: number): number => 1000.3 + slot * 5;

describe('SendGrid', () => {
  it('has no guess before a packet; after one, its phase a period on (with sweeps, the slot before)', () => {
    const grid = new SendGrid();
    expect(grid.next(0, true)).toBe(Infinity);
    grid.sent(at(0));
    expect(grid.next(at(0), false)).toBe(at(4));
    expect(grid.next(at(0), true)).toBe(at(3));
  });

  it('under load (every phase sending) wakes at the next slot', () => {
    const grid = new SendGrid();
    for (let slot = 0; slot < 8; slot++) grid.sent(at(slot));
    expect(grid.next(at(7), false)).toBe(at(8));
    expect(grid.next(at(7), true)).toBe(at(8));
  });

  it('for a lone call wakes at its own phase a period on, and with sweeps also at the slot before it (its media pass)', () => {
    const grid = new SendGrid();
    grid.sent(at(2));
    grid.sent(at(6));
    expect(grid.next(at(6), false)).toBe(at(10));
    expect(grid.next(at(6), true)).toBe(at(9));
    // Woken at slot 9 with nothing sent: the next is its own slot.
    expect(grid.next(at(9), true)).toBe(at(10));
  });

  it('skips slots already past, and forgets a phase that stopped sending', () => {
    const grid = new SendGrid();
    grid.sent(at(1));
    grid.sent(at(3));
    grid.sent(at(5));
    grid.sent(at(7));
    // Phases of slots 1 and 3 (and so 5 and 7) send every other slot.
    expect(grid.next(at(7), false)).toBe(at(9));
    expect(grid.next(at(9), false)).toBe(at(11));
    // Nothing sent since slot 7: a guess reaches one period past the last packet, no further.
    expect(grid.next(at(11), false)).toBe(Infinity);
  });

  it('counts several packets due at one time once, and keeps the time base of their due times', () => {
    const grid = new SendGrid();
    for (const slot of [0, 0, 0, 4, 4]) grid.sent(at(slot));
    expect(grid.next(at(4) + 0.1, false)).toBe(at(8));
  });
});
