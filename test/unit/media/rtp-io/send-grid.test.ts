/**
 * The RTP I/O thread's guess of its next wake-up with nothing queued (src/media/rtp-io/send-grid.ts):
 * the media clock's phases (GRID_PHASES of them, GRID_PHASE_MS apart) as seen in the due times of
 * the packets it sends.
 */
import { describe, expect, it } from 'vitest';
import { GRID_PHASE_MS, GRID_PHASES } from '../../../../src/media/rtp-io/protocol.ts';
import { SendGrid } from '../../../../src/media/rtp-io/send-grid.ts';

/** A due time on the grid: slot × GRID_PHASE_MS, plus the offset every due time shares. */
const at = (slot: number): number => 1000.3 + slot * GRID_PHASE_MS;
const P = GRID_PHASES;

describe('SendGrid', () => {
  it('plans on the media clock: one slot per phase, the phase apart', () => {
    expect(P).toBeGreaterThanOrEqual(2);
    expect(GRID_PHASE_MS * P).toBe(20);
  });

  it('has no guess before a packet; after one, its phase a period on (with sweeps, the slot before)', () => {
    const grid = new SendGrid();
    expect(grid.next(0, true)).toBe(Infinity);
    grid.sent(at(0));
    expect(grid.next(at(0), false)).toBe(at(P));
    expect(grid.next(at(0), true)).toBe(at(P - 1));
  });

  it('under load (every phase sending) wakes at the next slot, which is also when it sweeps', () => {
    const grid = new SendGrid();
    for (let slot = 0; slot < 2 * P; slot++) grid.sent(at(slot));
    expect(grid.next(at(2 * P - 1), false)).toBe(at(2 * P));
    expect(grid.next(at(2 * P - 1), true)).toBe(at(2 * P));
  });

  it('for a lone call wakes at its own phase a period on, and with sweeps also at the slot before it (its media pass)', () => {
    const grid = new SendGrid();
    grid.sent(at(1));
    grid.sent(at(1 + P));
    expect(grid.next(at(1 + P), false)).toBe(at(1 + 2 * P));
    expect(grid.next(at(1 + P), true)).toBe(at(2 * P));
    // Woken at the sweep with nothing sent: the next is its own slot.
    expect(grid.next(at(2 * P), true)).toBe(at(1 + 2 * P));
  });

  it('skips slots already past, and forgets a phase that stopped sending', () => {
    const grid = new SendGrid();
    grid.sent(at(1));
    grid.sent(at(1 + P));
    // The phase of slot 1 sends once a period.
    expect(grid.next(at(1 + P), false)).toBe(at(1 + 2 * P));
    // Past that slot, with nothing sent since: a guess reaches one period past the last packet, no further.
    expect(grid.next(at(1 + 2 * P), false)).toBe(Infinity);
  });

  it('counts several packets due at one time once, and keeps the time base of their due times', () => {
    const grid = new SendGrid();
    for (const slot of [0, 0, 0, P, P]) grid.sent(at(slot));
    expect(grid.next(at(P) + 0.1, false)).toBe(at(2 * P));
  });
});
