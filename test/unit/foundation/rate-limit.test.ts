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

describe('rate limiter memory', () => {
  it('sweeps idle keys by itself on the manual clock: the map shrinks once their window is over', () => {
    const clock = new ManualClock(0);
    const limiter = new MemoryRateLimiter(API_WINDOWS);
    for (let i = 0; i < 5_000; i++) {
      limiter.hit(`ip:10.0.${i >> 8}.${i & 255}`, clock.now());
      clock.advance(1); // 5 000 visitors within 5 s
    }
    expect(limiter.size).toBe(5_000);
    // Still inside the minute window of the last ones: nothing is forgotten early.
    clock.advance(30_000);
    limiter.hit('ip:192.0.2.1', clock.now());
    expect(limiter.size).toBe(5_001);
    // A minute after the last of them, the next hit (one minute after the last sweep) sweeps.
    clock.advance(30_000); // t = 65 s
    limiter.hit('ip:192.0.2.2', clock.now());
    expect(limiter.size).toBe(2);
    clock.advance(60_000);
    limiter.hit('ip:192.0.2.3', clock.now());
    expect(limiter.size).toBe(1);
  });

  it('a swept key starts afresh, and a key still inside its window is kept with its count', () => {
    const limiter = new MemoryRateLimiter([{ limit: 2, windowMs: 1_000 }]);
    expect(limiter.hit('a', 0).allowed).toBe(true);
    expect(limiter.hit('a', 0).allowed).toBe(true);
    expect(limiter.hit('b', 999).allowed).toBe(true);
    expect(limiter.hit('a', 999).allowed).toBe(false);
    expect(limiter.hit('c', 1_000).allowed).toBe(true); // sweeps: a's last hit left the window, b's did not
    expect(limiter.size).toBe(2);
    expect(limiter.hit('b', 1_001).allowed).toBe(true);
    expect(limiter.hit('b', 1_001).allowed).toBe(false);
  });

  it('never holds more than maxKeys: the least recently seen goes first, a client that keeps knocking stays', () => {
    const limiter = new MemoryRateLimiter([{ limit: 2, windowMs: 60_000 }], 3);
    limiter.hit('flooder', 0);
    limiter.hit('flooder', 0);
    for (let i = 0; i < 1_000; i++) {
      expect(limiter.hit(`ip:${i}`, 1).allowed).toBe(true);
      // The flooder knocks again between every new address: still refused, never forgotten.
      expect(limiter.hit('flooder', 1).allowed, `after ${i}`).toBe(false);
      expect(limiter.size).toBeLessThanOrEqual(3);
    }
  });
});
