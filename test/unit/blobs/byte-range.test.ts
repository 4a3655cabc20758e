import { describe, expect, it } from 'vitest';
import { contentRange, resolveRange } from '../../../src/blobs/byte-range.ts';

describe('resolveRange (one bytes= range against the object size)', () => {
  it('no header, another unit, a list of ranges or garbage: the whole object', () => {
    for (const h of [undefined, 'items=0-1', 'bytes=0-1,4-5', 'bytes=abc', 'bytes=-', 'bytes=5-2']) {
      expect(resolveRange(h, 100), String(h)).toEqual({ kind: 'whole' });
    }
  });

  it('first-last, open-ended and suffix ranges, clamped to the size', () => {
    expect(resolveRange('bytes=0-9', 100)).toEqual({ kind: 'partial', range: { start: 0, end: 9 } });
    expect(resolveRange('bytes=90-', 100)).toEqual({ kind: 'partial', range: { start: 90, end: 99 } });
    expect(resolveRange('bytes=90-500', 100)).toEqual({ kind: 'partial', range: { start: 90, end: 99 } });
    expect(resolveRange('bytes=-10', 100)).toEqual({ kind: 'partial', range: { start: 90, end: 99 } });
    expect(resolveRange('bytes=-1000', 100)).toEqual({ kind: 'partial', range: { start: 0, end: 99 } });
    expect(resolveRange(' Bytes = 1 - 1 ', 100)).toEqual({ kind: 'partial', range: { start: 1, end: 1 } });
  });

  it('a start at or past the end, a zero suffix, or any range of an empty object: unsatisfiable', () => {
    expect(resolveRange('bytes=100-', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(resolveRange('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(resolveRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
  });

  it('numbers too large to be exact are not trusted', () => {
    expect(resolveRange('bytes=99999999999999999999-', 100)).toEqual({ kind: 'whole' });
  });

  it('Content-Range names the range and the total', () => {
    expect(contentRange({ start: 90, end: 99 }, 100)).toBe('bytes 90-99/100');
  });
});
