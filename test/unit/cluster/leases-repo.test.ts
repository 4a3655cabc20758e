/**
 * The leases repository as two nodes see it, each through its own connection: to one SQLite file
 * (WAL), and to one PostgreSQL database (two pools) where the test server is installed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeasesRepo } from '../../../src/store/repos/leases.ts';
import { NamedLease } from '../../../src/cluster/named-lease.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { AVAILABLE_BACKENDS } from '../../support/postgres.ts';
import { openTwoNodeStore, type TwoNodeStore } from '../../support/two-node-store.ts';

const quiet = { info() {}, warn() {} };

describe.each(AVAILABLE_BACKENDS)('leases on %s', (backend) => {
  let nodes: TwoNodeStore | undefined;
  let a: LeasesRepo;
  let b: LeasesRepo;
  beforeEach(async () => {
    nodes = await openTwoNodeStore(backend, 'leases');
    a = new LeasesRepo(nodes.a);
    b = new LeasesRepo(nodes.b);
  });
  afterEach(async () => {
    await nodes?.close();
    nodes = undefined;
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

    it('two nodes racing for a free or lapsed lease: exactly one wins each time', async () => {
      for (let round = 0; round < 10; round++) {
        const now = 10_000 + round * 1000; // the previous round's lease (ttl 500) has lapsed
        const wins = await Promise.all([a.take('race', 'node-a', now, 500), b.take('race', 'node-b', now, 500)]);
        expect(wins.filter(Boolean)).toHaveLength(1);
        expect((await a.get('race'))?.holder).toBe(wins[0] ? 'node-a' : 'node-b');
      }
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
      // Each step of the manual clock waits for the store round trips it started (a PostgreSQL
      // query takes longer than a few turns of the event loop).
      const pending = () => [la, lb].map((l) => (l as unknown as { step?: Promise<void> }).step).filter((p) => p !== undefined);
      const run = async (ms: number) => {
        for (let t = 0; t < ms; t += 100) {
          clock.advance(100);
          for (let i = 0; i < 5 && pending().length > 0; i++) await Promise.all(pending());
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
});
