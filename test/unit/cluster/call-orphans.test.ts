/**
 * Call records in a cluster: a node starting up closes only the records it left open (and those
 * of older builds, with no node), never the live calls of another node; the sweep closes records
 * whose node stopped stamping them alive.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { openMemoryStore, type Store } from '../../../src/store/db.ts';
import { CallsRepo } from '../../../src/store/repos/calls.ts';
import { createRepos } from '../../../src/store/index.ts';
import { SecretBox } from '../../../src/store/secrets.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { ORPHAN_END_CAUSE, PostCallSweeper, type SweeperDeps } from '../../../src/call/wiring/sweeper.ts';

let store: Store;
let clock: ManualClock;
let accountId: number;
beforeEach(async () => {
  clock = new ManualClock(1_800_000_000_000);
  store = openMemoryStore();
  accountId = (await createRepos(store, clock, new SecretBox(Buffer.alloc(32, 2))).accounts.create('acme')).id;
});
afterEach(async () => {
  await store.close();
});

const sweeperOf = (nodeId: string) =>
  new PostCallSweeper({ store, logger: pino({ level: 'silent' }), nodeId, staleAfterMs: 4_000, staleRingingMs: 60_000 } as unknown as SweeperDeps);
const callOf = (nodeId: string | undefined, patch: Record<string, unknown> = {}) =>
  new CallsRepo(store, clock, nodeId).create({ accountId, direction: 'outbound', fromNumber: '+1', toNumber: '+2', status: 'in-progress', ...patch });
const endCause = async (id: number) => (await store.db.selectFrom('calls').select('end_cause').where('id', '=', id).executeTakeFirstOrThrow()).end_cause;

describe('call records of several nodes', () => {
  it("closeOrphans at start-up closes this node's records and older builds', not another node's live calls", async () => {
    const mine = await callOf('node-a');
    const older = await callOf(undefined);
    const theirs = await callOf('node-b');
    clock.advance(1000);
    expect(await sweeperOf('node-a').closeOrphans(clock.now())).toBe(2);
    expect(await endCause(mine.id)).toBe(ORPHAN_END_CAUSE);
    expect(await endCause(older.id)).toBe(ORPHAN_END_CAUSE);
    expect(await endCause(theirs.id)).toBeNull();
  });

  it('the sweep closes records no heartbeat stamped for too long, at their last stamp; live ones stay open', async () => {
    const t0 = clock.now();
    const dead = await callOf('node-b', { answerAt: t0 });
    await store.db.updateTable('calls').set({ last_alive_at: t0 + 2_000 }).where('id', '=', dead.id).execute();
    const ringing = await callOf('node-b', { status: 'ringing' });
    clock.advance(10_000);
    const alive = await callOf('node-a', { answerAt: clock.now() - 5_000 });
    await store.db.updateTable('calls').set({ last_alive_at: clock.now() - 500 }).where('id', '=', alive.id).execute();
    expect(await sweeperOf('node-a').closeStale(clock.now())).toBe(1);
    const row = await store.db.selectFrom('calls').selectAll().where('id', '=', dead.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ end_cause: ORPHAN_END_CAUSE, end_at: t0 + 2_000, status: 'completed' });
    expect(await endCause(ringing.id)).toBeNull(); // ringing for 10 s of the 60 s allowed here
    expect(await endCause(alive.id)).toBeNull();
    clock.advance(60_000);
    await store.db.updateTable('calls').set({ last_alive_at: clock.now() }).where('id', '=', alive.id).execute();
    expect(await sweeperOf('node-a').closeStale(clock.now())).toBe(1);
    expect(await store.db.selectFrom('calls').select(['status', 'end_cause']).where('id', '=', ringing.id).executeTakeFirstOrThrow()).toEqual({ status: 'failed', end_cause: ORPHAN_END_CAUSE });
  });
});
