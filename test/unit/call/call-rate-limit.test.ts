import { describe, expect, it } from 'vitest';
import { CallRateLimiter, retryAfterSeconds, TokenBucket } from '../../../src/call/call-rate-limit.ts';

describe('TokenBucket', () => {
  it('admits a burst at once, then the sustained rate, and says how long until the next token', () => {
    const b = new TokenBucket({ perSec: 10, burst: 20 }, 0);
    for (let i = 0; i < 20; i++) {
      expect(b.waitMs(0)).toBe(0);
      b.take(0);
    }
    expect(b.waitMs(0)).toBe(100);
    expect(b.waitMs(40)).toBe(60);
    expect(b.waitMs(100)).toBe(0);
    b.take(100);
    expect(b.waitMs(100)).toBe(100);
    // Refills up to the burst, not beyond.
    expect(b.isFull(10_000)).toBe(true);
    for (let i = 0; i < 20; i++) b.take(10_000);
    expect(b.waitMs(10_000)).toBe(100);
  });

  it('a fractional rate waits whole milliseconds rounded up', () => {
    const b = new TokenBucket({ perSec: 0.5, burst: 1 }, 0);
    b.take(0);
    expect(b.waitMs(0)).toBe(2000);
    expect(b.waitMs(1500)).toBe(500);
  });
});

describe('CallRateLimiter', () => {
  it('one trunk over its rate is refused with a wait; another trunk is not affected', () => {
    const l = new CallRateLimiter({ perTrunk: { perSec: 10, burst: 20 } }, 0);
    const verdicts = Array.from({ length: 300 }, (_, i) => l.admit('flooded', Math.floor((i * 2000) / 300)));
    const admitted = verdicts.filter((v) => v.ok).length;
    // 20 from the burst plus 10 a second over the ~2 s of the flood.
    expect(admitted).toBeGreaterThanOrEqual(38);
    expect(admitted).toBeLessThanOrEqual(40);
    const refused = verdicts.find((v) => !v.ok);
    expect(refused).toMatchObject({ ok: false, limit: 'trunk' });
    expect(l.admit('quiet', 2000)).toEqual({ ok: true });
  });

  it('sustained under the rate is never refused', () => {
    const l = new CallRateLimiter({ perTrunk: { perSec: 10, burst: 1 } }, 0);
    for (let t = 0; t < 60_000; t += 100) expect(l.admit('steady', t)).toEqual({ ok: true });
  });

  it('the process bucket limits all trunks together, and a refusal takes no token from either', () => {
    const l = new CallRateLimiter({ perTrunk: { perSec: 10, burst: 2 }, process: { perSec: 1, burst: 3 } }, 0);
    expect(l.admit('a', 0).ok).toBe(true);
    expect(l.admit('a', 0).ok).toBe(true);
    expect(l.admit('a', 0)).toEqual({ ok: false, limit: 'trunk', retryAfterMs: 100 });
    expect(l.admit('b', 0).ok).toBe(true);
    // The process is now out of tokens: trunk c (full) is refused for the process's sake.
    expect(l.admit('c', 0)).toEqual({ ok: false, limit: 'process', retryAfterMs: 1000 });
    // c's refusal took nothing from c: after the process refills, c still has its burst.
    expect(l.admit('c', 1000).ok).toBe(true);
  });

  it('rate 0 turns a limit off', () => {
    const l = new CallRateLimiter({ perTrunk: { perSec: 0, burst: 1 }, process: { perSec: 0, burst: 1 } }, 0);
    for (let i = 0; i < 1000; i++) expect(l.admit('t', 0).ok).toBe(true);
    expect(l.tracked).toBe(0);
  });

  it('keeps its memory bounded: idle (full) buckets are forgotten first', () => {
    const l = new CallRateLimiter({ perTrunk: { perSec: 1, burst: 5 }, maxTracked: 50 }, 0);
    l.admit('busy', 0);
    for (let i = 0; i < 500; i++) l.admit(`t${i}`, 0);
    expect(l.tracked).toBeLessThanOrEqual(50);
  });

  it('rejects a limit that could never admit', () => {
    expect(() => new CallRateLimiter({ perTrunk: { perSec: 10, burst: 0 } }, 0)).toThrow(RangeError);
    expect(() => new CallRateLimiter({ perTrunk: { perSec: -1, burst: 1 } }, 0)).toThrow(RangeError);
  });

  it('Retry-After is whole seconds, at least one', () => {
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
  });
});
