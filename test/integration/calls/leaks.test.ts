import { afterEach, describe, expect, it } from 'vitest';
import { TestPhone } from '../../support/test-phone.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
let p: TestPhone | undefined;
afterEach(async () => {
  await p?.close();
  await h?.close();
  h = p = undefined;
});

function resources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

describe('leaks', () => {
  it('200 calls set up and torn down leave no port, socket, transaction or timer behind', async () => {
    // 200 calls back to back on one trunk run far past its new-call rate (10/s): lifted here.
    h = await harness({ callRate: { perTrunk: { perSec: 0, burst: 1 } } });
    const trunk = await h.trunk();
    await h.assistant(trunk.phoneNumberId);
    p = await TestPhone.create({});
    // One warm-up call so lazily created things (codec tables, sockets of the phone) exist before the baseline.
    const warm = await p.call(h.target('+14155550100'));
    await warm.hangup();
    warm.rtp.close();
    await until(() => h!.server.registry.size === 0 && h!.pool.inUse === 0);
    const before = resources();

    for (let i = 0; i < 200; i++) {
      const call = await p.call(h.target(i % 2 === 0 ? '+14155550100' : 'echo'));
      if (i % 2 === 0) await call.hangup();
      else await h.server.registry.list()[0]!.hangup(); // the engine hangs up half of them
      await call.ended;
      call.rtp.close();
    }
    await until(() => h!.server.registry.size === 0, 3000, 'calls ended');
    expect(h.pool.inUse).toBe(0);
    // Non-INVITE server transactions linger for Timer J (64*T1 over UDP) by design.
    await until(() => h!.server.ua.stats.transactions === 0 && p!.ua.stats.transactions === 0, 8000, 'transactions drained');
    expect(h.server.ua.stats).toMatchObject({ transactions: 0, transactionTimers: 0, dialogs: 0, pending: 0 });
    const after = resources();
    // Same handles as before the 200 calls (one of slack for a timer that happens to be pending).
    for (const kind of new Set([...Object.keys(before), ...Object.keys(after)])) {
      expect({ kind, n: Math.min(after[kind] ?? 0, (before[kind] ?? 0) + 1) }).toEqual({ kind, n: after[kind] ?? 0 });
    }
    const calls = (await h.ctx.repos.calls.list(h.owner.id, { limit: 100 })).filter((c) => c.status !== 'completed');
    expect(calls).toEqual([]);
  }, 60_000);
});
