/**
 * The leases repository over two connections to one SQLite file (WAL), as two nodes see it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/db.ts';
import { LeasesRepo } from '../../../src/store/repos/leases.ts';
import { NamedLease } from '../../../src/cluster/named-lease.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { testTempDir } from '../../support/temp-dir.ts';

const quiet = { info() {}, warn() {} };
let stores: Store[] = [];
let a: LeasesRepo;
let b: LeasesRepo;
beforeEach(async () => {
  const dir = await testTempDir('leases');
  stores = [openStore(dir), openStore(dir)];
  a = new LeasesRepo(stores[0]!);
  b = new LeasesRepo(stores[1]!);
});
afterEach(async () => {
  for (const s of stores) await s.close();
});

describe('LeasesRepo', () => {
  it('one holder at a time; renewable by its holder; taken over only once expired; released at once', async () => {
    expect(await a.take('sweeper', 'node-a', 1000, 500)).toBe(true);
    expect(await b.take('sweeper', 'node-b', 1200, 500)).toBe(false);
    expect(await a.take('sweeper', 'node-a', 1400, 500)).toBe(true); // renewal: now until 1900
    expect(await b.take('sweeper', 'node-b', 1899, 500)).toBe(false);
    expect(await b.take('sweeper', 'node-b', 1900, 500)).toBe(true); // node-a let it lapse
    expect(await b.get('sweeper')).toEqual({ holder: 'node-b', expiresAtMs: 2400 });
    expect(await a.take('sweeper', 'node-a', 2000, 500)).toBe(false);
    expect(await a.release('sweeper', 'node-a')).toBe(false); // not its own any more
    expect(await b.release('sweeper', 'node-b')).toBe(true);
    expect(await a.take('sweeper', 'node-a', 2001, 500)).toBe(true);
    // Independent names.
    expect(await b.take('registrar', 'node-b', 2001, 500)).toBe(true);
  });
});

describe('NamedLease', () => {
  it('moves to the other node when its holder stops renewing (dies), and back after a release', async () => {
    const clock = new ManualClock(0);
    const changes: string[] = [];
    const mk = (repo: LeasesRepo, holder: string) =>
      new NamedLease({ leases: repo, name: 'registrar', holder, clock, timing: { ttlMs: 3000 }, logger: quiet, onChange: (held) => changes.push(`${holder}:${held}`) });
    const la = mk(a, 'node-a');
    const lb = mk(b, 'node-b');
    await la.start();
    await lb.start();
    expect(la.held).toBe(true);
    expect(lb.held).toBe(false);
    const run = async (ms: number) => {
      for (let t = 0; t < ms; t += 100) {
        clock.advance(100);
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      }
    };
    await run(10_000);
    expect(la.held && !lb.held).toBe(true); // renewed all along
    // node-a dies: nothing of it runs any more (no release, no renewal).
    (la as unknown as { stopped: boolean }).stopped = true;
    (la as unknown as { timer?: { cancel(): void } }).timer?.cancel();
    await run(4_500);
    expect(lb.held).toBe(true);
    await lb.stop();
    expect(changes).toEqual(['node-a:true', 'node-b:true', 'node-b:false']);
    expect(await a.get('registrar')).toBeUndefined();
  });
});
