import { describe, expect, it } from 'vitest';
import { LeaseCore, lapsed, mayTake, renewEveryMs } from '../../../src/cluster/lease-core.ts';

describe('lease rules', () => {
  it('a lease may be taken when free, by its holder, or once its expiry has passed', () => {
    expect(mayTake(undefined, 'a', 1000)).toBe(true);
    expect(mayTake({ holder: 'a', expiresAtMs: 5000 }, 'a', 1000)).toBe(true);
    expect(mayTake({ holder: 'b', expiresAtMs: 5000 }, 'a', 4999)).toBe(false);
    expect(mayTake({ holder: 'b', expiresAtMs: 5000 }, 'a', 5000)).toBe(true);
    expect(lapsed(null, 0)).toBe(true);
    expect(lapsed(10, 9)).toBe(false);
    expect(lapsed(10, 10)).toBe(true);
    expect(renewEveryMs({ ttlMs: 30_000 })).toBe(10_000);
  });
});

describe('LeaseCore on a manual clock', () => {
  it('acquires at once, renews every third of the lease, and holds without a gap while renewals succeed', () => {
    const core = new LeaseCore({ ttlMs: 30_000 }, 0);
    expect(core.due(0)).toBe('acquire');
    expect(core.due(0)).toBeNull(); // one request in flight at a time
    expect(core.granted(5)).toBe('gained');
    expect(core.holds(5)).toBe(true);
    expect(core.wakeAtMs).toBe(10_000);
    for (let t = 10_000; t <= 100_000; t += 10_000) {
      expect(core.due(t - 1)).toBeNull();
      expect(core.due(t)).toBe('renew');
      expect(core.granted(t + 3)).toBeNull();
      expect(core.holds(t + 3)).toBe(true);
    }
  });

  it('counts itself holder only until a guard before the expiry it wrote, measured from the request', () => {
    const core = new LeaseCore({ ttlMs: 30_000, guardMs: 3_000 }, 0);
    core.due(0);
    core.granted(2_000); // the answer came late: the row says 30 000, not 32 000
    expect(core.holds(26_999)).toBe(true);
    expect(core.holds(27_000)).toBe(false);
  });

  it('renewals that cannot reach the store keep the lease only while it lasts, then lose it before another node may take it', () => {
    const core = new LeaseCore({ ttlMs: 30_000 }, 0);
    core.due(0);
    core.granted(0);
    let lostAt: number | undefined;
    for (let t = 10_000; t <= 40_000 && lostAt === undefined; t = core.wakeAtMs) {
      if (core.tick(t) === 'lost') lostAt = t;
      else if (core.due(t)) {
        if (core.failed(t) === 'lost') lostAt = t;
      }
    }
    // Written expiry 30 000, guard 3 000: the work stops at 27 000, before anyone else may start.
    expect(lostAt).toBe(27_000);
    expect(core.holds(27_000)).toBe(false);
  });

  it('a refusal (another node holds it) is retried after retryEveryMs; a release gives it up', () => {
    const core = new LeaseCore({ ttlMs: 9_000, retryEveryMs: 2_000 }, 0);
    expect(core.due(0)).toBe('acquire');
    expect(core.refused(1)).toBeNull();
    expect(core.holds(1)).toBe(false);
    expect(core.wakeAtMs).toBe(2_001);
    expect(core.due(2_001)).toBe('acquire');
    expect(core.granted(2_001)).toBe('gained');
    expect(core.released(3_000)).toBe('lost');
    expect(core.holds(3_000)).toBe(false);
  });

  it('a renewal refused (the lease was taken over) loses it at once', () => {
    const core = new LeaseCore({ ttlMs: 30_000 }, 0);
    core.due(0);
    core.granted(0);
    expect(core.due(10_000)).toBe('renew');
    expect(core.refused(10_001)).toBe('lost');
    expect(core.holds(10_001)).toBe(false);
  });
});
