import { describe, expect, it } from 'vitest';
import { countOpenFds, planFds, readSoftFdLimit } from '../../../src/sip/fd-budget.ts';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                40000                files
Max locked memory         8388608              8388608              bytes
`;

describe('fd budget', () => {
  it('reads the soft open-files limit from /proc/self/limits', () => {
    expect(readSoftFdLimit(LIMITS)).toBe(20_000);
    expect(readSoftFdLimit(LIMITS.replace('20000     ', 'unlimited'))).toBe(Number.MAX_SAFE_INTEGER);
    expect(readSoftFdLimit('nothing here')).toBeUndefined();
    if (process.platform === 'linux') {
      expect(readSoftFdLimit()).toBeGreaterThan(0);
      expect(countOpenFds()).toBeGreaterThan(3);
    }
  });

  it('keeps 1024 plus 6 per call that fits for everything else, and gives SIP the rest up to 10,000', () => {
    // 500 calls (SWITCHBOARD_MAX_CALLS) fit in the default RTP range of 5,000 pairs.
    expect(planFds(20_000, 500, 20_000, 29_999)).toEqual({ limit: 20_000, reserve: 4_024, maxConnections: 10_000 });
    expect(planFds(8_192, 500, 20_000, 29_999)).toEqual({ limit: 8_192, reserve: 4_024, maxConnections: 4_168 });
    // The RTP range holds only 50 pairs: only 50 calls need room.
    expect(planFds(8_192, 500, 40_000, 40_099).reserve).toBe(1_324);
    // A small limit: half of it stays free, SIP gets the other half.
    expect(planFds(1_024, 500, 20_000, 29_999)).toEqual({ limit: 1_024, reserve: 512, maxConnections: 512 });
    expect(planFds(100, 500, 20_000, 29_999).maxConnections).toBe(64);
  });
});
