/**
 * native/rtp-udp/rtp_inbound.c under AddressSanitizer and UndefinedBehaviorSanitizer: the jitter
 * buffer and receiver statistics that take the caller's packets in C (fast_drain.c) see hostile
 * streams (native/rtp-udp/fuzz/inbound_fuzz.c says which) and must neither touch memory outside
 * their own nor overflow a conversion. Built here with the compiler that builds the module.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testTempDir } from '../../support/temp-dir.ts';

const DIR = path.resolve(import.meta.dirname, '../../../native/rtp-udp');

describe('rtp_inbound.c under the sanitizers', () => {
  it('takes a million hostile operations on each of three seeds without a finding', { timeout: 120_000 }, () => {
    const exe = path.join(testTempDir('inbound-fuzz'), 'inbound_fuzz');
    execFileSync('gcc', [
      '-O1', '-g', '-ffp-contract=off',
      '-fsanitize=address,undefined,float-cast-overflow,float-divide-by-zero', '-fno-sanitize-recover=all',
      path.join(DIR, 'fuzz/inbound_fuzz.c'), path.join(DIR, 'rtp_inbound.c'), '-lm', '-o', exe,
    ]);
    for (const seed of ['1', '2', '3']) {
      // A finding aborts the run (non-zero exit: execFileSync throws with the sanitizer's report).
      const out = execFileSync(exe, ['1000000', seed], { encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } });
      const m = /^ok frames (\d+) lost (\d+) refused (\d+)/.exec(out);
      expect(m, out).not.toBeNull();
      // The streams exercised every outcome: frames, losses concealed, payloads refused.
      expect(Number(m![1])).toBeGreaterThan(100_000);
      expect(Number(m![2])).toBeGreaterThan(10_000);
      expect(Number(m![3])).toBeGreaterThan(10_000);
    }
  });
});
