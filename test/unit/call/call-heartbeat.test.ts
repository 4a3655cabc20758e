/**
 * The call heartbeat stamps every answered live call once per period in one batched write (not
 * a timer or a statement per call), leaves ringing and ended calls alone, and stops cleanly.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { CallHeartbeat } from '../../../src/call/call-heartbeat.ts';
import type { CallSession } from '../../../src/call/call-session.ts';
import { openMemoryStore, type SqliteStore } from '../../../src/store/db.ts';
import { createRepos } from '../../../src/store/index.ts';
import { ManualClock } from '../../../src/util/clock.ts';

const logger = pino({ level: 'silent' });
let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

function fakeSession(recordId: number, state: CallSession['state']): CallSession {
  return { recordId, state } as CallSession;
}

describe('CallHeartbeat', () => {
  it('stamps 200 live calls once per period in one batched write', async () => {
    const clock = new ManualClock(1_000_000);
    const sessions = Array.from({ length: 200 }, (_, i) => fakeSession(i + 1, 'active'));
    const writes: Array<{ ids: readonly number[]; at: number }> = [];
    const hb = new CallHeartbeat({
      registry: { list: () => sessions },
      calls: { markAlive: async (ids, at) => (writes.push({ ids, at }), ids.length) },
      clock,
      logger,
      periodMs: 15_000,
    });
    hb.start();
    clock.advance(14_999);
    await Promise.resolve();
    expect(writes).toHaveLength(0);
    clock.advance(1);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.ids).toHaveLength(200);
    expect(writes[0]!.at).toBe(1_015_000);
    clock.advance(15_000);
    await new Promise((r) => setImmediate(r));
    expect(writes.map((w) => w.at)).toEqual([1_015_000, 1_030_000]);
    // One timer for the process, whatever the number of calls.
    expect(clock.pendingCount).toBe(1);
    await hb.stop();
    expect(clock.pendingCount).toBe(0);
    clock.advance(60_000);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(2);
  });

  it('stamps answered calls only, and never a record already ended', async () => {
    store = openMemoryStore();
    const clock = new ManualClock(2_000_000);
    const repos = createRepos(store, clock);
    const account = await repos.accounts.create('hb');
    const mk = (status: string) => repos.calls.create({ accountId: account.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', status });
    const active = await mk('in-progress');
    const ringing = await mk('ringing');
    const ended = await mk('in-progress');
    // Ended between the registry read and the write: the stamp must not touch it.
    await repos.calls.update(ended.id, { status: 'completed', endAt: clock.now() });
    const hb = new CallHeartbeat({
      registry: { list: () => [fakeSession(active.id, 'active'), fakeSession(ringing.id, 'ringing'), fakeSession(ended.id, 'active')] },
      calls: repos.calls,
      clock,
      logger,
    });
    expect(await hb.beat()).toBe(1);
    const alive = (id: number) => (store!.sqlite.prepare('SELECT last_alive_at AS at FROM calls WHERE id = ?').get(id) as { at: number | null }).at;
    expect(alive(active.id)).toBe(2_000_000);
    expect(alive(ringing.id)).toBeNull();
    expect(alive(ended.id)).toBeNull();
  });

  it('markAlive stamps any number of calls (chunked under SQLite’s parameter limit)', async () => {
    store = openMemoryStore();
    const clock = new ManualClock(3_000_000);
    const repos = createRepos(store, clock);
    const account = await repos.accounts.create('hb');
    const ids: number[] = [];
    for (let i = 0; i < 1_200; i++) ids.push((await repos.calls.create({ accountId: account.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2' })).id);
    expect(await repos.calls.markAlive(ids, clock.now())).toBe(1_200);
    expect(await repos.calls.markAlive([], clock.now())).toBe(0);
  });
});
