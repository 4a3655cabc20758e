import { describe, expect, it } from 'vitest';
import { FIRST_FALLBACK_MS, LOSS_WINDOW_MS, MAX_FALLBACK_MS, RESET_AFTER_MS, ThreadLossPolicy } from '../../../../src/media/rtp-io/loss-policy.ts';

describe('ThreadLossPolicy: where new RTP sockets go when the I/O thread keeps dying', () => {
  it('two losses in a minute change nothing; the third sends new sockets in-thread for 10 s', () => {
    const p = new ThreadLossPolicy();
    expect(p.lost(0)).toBe(0);
    expect(p.lost(20_000)).toBe(0);
    expect(p.fallingBack(20_001)).toBe(false);
    expect(p.lost(40_000)).toBe(FIRST_FALLBACK_MS);
    expect(p.fallingBack(40_000 + FIRST_FALLBACK_MS - 1)).toBe(true);
    expect(p.fallingBack(40_000 + FIRST_FALLBACK_MS)).toBe(false);
  });

  it('losses spread wider than the window never add up', () => {
    const p = new ThreadLossPolicy();
    for (let i = 0; i < 10; i++) expect(p.lost(i * (LOSS_WINDOW_MS / 2 + 1))).toBe(0);
  });

  it('a thread lost again soon after a fallback: at once, twice as long each time, up to 5 minutes', () => {
    const p = new ThreadLossPolicy();
    p.lost(0);
    p.lost(1);
    let t = 2;
    expect(p.lost(t)).toBe(FIRST_FALLBACK_MS);
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      t += seen.at(-1) ?? FIRST_FALLBACK_MS;
      expect(p.fallingBack(t)).toBe(false);
      seen.push(p.lost(t));
    }
    expect(seen).toEqual([20_000, 40_000, 80_000, 160_000, MAX_FALLBACK_MS, MAX_FALLBACK_MS, MAX_FALLBACK_MS, MAX_FALLBACK_MS]);
  });

  it('long after the last fallback, trouble starts from the beginning again', () => {
    const p = new ThreadLossPolicy();
    p.lost(0);
    p.lost(1);
    p.lost(2);
    p.lost(2 + FIRST_FALLBACK_MS); // again: 20 s
    const later = 2 + FIRST_FALLBACK_MS + RESET_AFTER_MS;
    expect(p.lost(later)).toBe(0);
    expect(p.lost(later + 1)).toBe(0);
    expect(p.lost(later + 2)).toBe(FIRST_FALLBACK_MS);
  });
});
