import { describe, expect, it } from 'vitest';
import { API_WINDOWS, MemoryRateLimiter } from '../../../src/api/rate-limit.ts';
import { ManualClock } from '../../../src/util/clock.ts';

describe('rate limiter at the spec boundaries', () => {
  it('admits 20 requests in 10 s and refuses the 21st, then admits once the window slides', () => {
    const clock = new ManualClock(0);
    const limiter = new MemoryRateLimiter(API_WINDOWS);
    for (let i = 0; i < 20; i++) {
      expect(limiter.hit('k', clock.now()).allowed).toBe(true);
      clock.advance(100); // 20 requests within 2 s
    }
    const refused = limiter.hit('k', clock.now());
    expect(refused.allowed).toBe(false);
    expect(refused.remaining).toBe(0);
    // The first request was at t=0, so the burst window frees a slot at t=10 000.
    expect(refused.retryAfterSec).toBe(8);
    clock.advance(10_000 - clock.now() - 1);
    expect(limiter.hit('k', clock.now()).allowed).toBe(false);
    clock.advance(1);
    expect(limiter.hit('k', clock.now()).allowed).toBe(true);
  });

  it('admits 100 requests in 60 s and refuses the 101st', () => {
    const clock = new ManualClock(0);
    const limiter = new MemoryRateLimiter(API_WINDOWS);
    // 100 requests spread so that no 10 s window holds more than 20: one every 550 ms.
    for (let i = 0; i < 100; i++) {
      expect(limiter.hit('k', clock.now()).allowed, `request ${i + 1}`).toBe(true);
      clock.advance(550);
    }
    expect(clock.now()).toBe(55_000);
    const refused = limiter.hit('k', clock.now());
    expect(refused.allowed).toBe(false);
    expect(refused.limit).toBe(100);
    expect(refused.retryAfterSec).toBe(5); // the request at t=0 leaves the minute window at 60 000
    clock.advance(5_000);
    expect(limiter.hit('k', clock.now()).allowed).toBe(true);
  });

  it('does not count refused requests and keeps keys apart', () => {
    const limiter = new MemoryRateLimiter([{ limit: 2, windowMs: 1000 }]);
    expect(limiter.hit('a', 0).allowed).toBe(true);
    expect(limiter.hit('a', 0).allowed).toBe(true);
    for (let i = 0; i < 10; i++) expect(limiter.hit('a', 500).allowed).toBe(false);
    expect(limiter.hit('b', 500).allowed).toBe(true);
    expect(limiter.hit('a', 1000).allowed).toBe(true);
  });

  it('reports remaining and reset of the tightest window', () => {
    const limiter = new MemoryRateLimiter(API_WINDOWS);
    const first = limiter.hit('k', 1_000_000);
    expect(first).toMatchObject({ allowed: true, limit: 20, remaining: 19, resetAtMs: 1_010_000 });
  });
});
