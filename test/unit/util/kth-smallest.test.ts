import { describe, expect, it } from 'vitest';
import { kthSmallest } from '../../../src/util/kth-smallest.ts';
import { prng } from '../media/prng.ts';

describe('kthSmallest (the delay estimate\'s ranks)', () => {
  it('gives the value a sort would put at every rank: ties, unwritten +Infinity slots, sizes 1 to 150', () => {
    const rand = prng(4733);
    for (let trial = 0; trial < 400; trial++) {
      const n = 1 + Math.floor(rand() * 150);
      const written = Math.floor(rand() * (n + 1));
      // Few distinct values in some trials (many ties), wide ones in others.
      const levels = rand() < 0.3 ? 3 : 1000;
      const values = Float64Array.from({ length: n }, (_, i) => (i < written ? Math.floor(rand() * levels) - levels / 2 : Infinity));
      const sorted = Float64Array.from(values).sort();
      for (const k of [0, Math.floor(0.95 * (n - 1)), Math.floor(rand() * n), n - 1]) {
        const scratch = Float64Array.from(values);
        expect(kthSmallest(scratch, k)).toBe(sorted[k]);
        // Reordered, never changed: still the same values.
        expect(Float64Array.from(scratch).sort()).toEqual(sorted);
      }
    }
  });
});
