/**
 * The shared rules on a manual clock (src/cluster): leases lapse when a node stops beating, a
 * node never takes itself for dead, commands and bans reach the right nodes, a campaign stop
 * reaches every node, inactivity ends each conversation once, and a slot is taken atomically.
 */
import { describe, expect, it } from 'vitest';
import { CallRegistry } from '../../../src/call/call-registry.ts';
import { clusterCampaignRunner } from '../../../src/cluster/campaign-stop.ts';
import { LeaseBook } from '../../../src/cluster/lease-book.ts';
import { MemoryCluster, MemoryHub } from '../../../src/cluster/memory.ts';
import type { Envelope } from '../../../src/cluster/types.ts';
import { InactivitySweeper } from '../../../src/chat/inactivity.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { createLogger } from '../../../src/util/logger.ts';

const caps = { maxPerAccount: 2, maxPerTrunk: 10 };

describe('LeaseBook', () => {
  it("a node's slots count until its last beat is leaseMs old, and stop counting after", () => {
    const clock = new ManualClock();
    const book = new LeaseBook(10_000);
    expect(book.acquire('b', 'b1', 7, 't', caps, clock.now())).toBe('ok');
    expect(book.acquire('b', 'b2', 7, 't', caps, clock.now())).toBe('ok');
    expect(book.acquire('a', 'a1', 7, 't', caps, clock.now())).toBe('account');
    clock.advance(10_000);
    expect(book.acquire('a', 'a1', 7, 't', caps, clock.now())).toBe('account');
    clock.advance(1);
    // B last beat 10 001 ms ago: dead, its slots are dropped.
    expect(book.acquire('a', 'a1', 7, 't', caps, clock.now())).toBe('ok');
    expect(book.counts(7, 't', clock.now(), 'a')).toEqual({ account: 1, trunk: 1 });
    expect(book.isAlive('b', clock.now())).toBe(false);
  });

  it('a beating node keeps its slots however long its calls last', () => {
    const clock = new ManualClock();
    const book = new LeaseBook(10_000);
    book.acquire('b', 'b1', 7, 't', caps, clock.now());
    for (let i = 0; i < 30; i++) {
      clock.advance(3_000);
      book.beat('b', clock.now());
    }
    expect(book.counts(7, 't', clock.now(), 'a')).toEqual({ account: 1, trunk: 1 });
  });

  it('the asking node never drops its own slots (a node alone does not beat)', () => {
    const clock = new ManualClock();
    const book = new LeaseBook(10_000);
    book.acquire('a', 'a1', 7, 't', caps, clock.now());
    clock.advance(3_600_000);
    expect(book.counts(7, 't', clock.now(), 'a')).toEqual({ account: 1, trunk: 1 });
    expect(book.acquire('a', 'a2', 7, 't', caps, clock.now())).toBe('ok');
    expect(book.acquire('a', 'a3', 7, 't', caps, clock.now())).toBe('account');
  });
});

describe('MemoryCluster nodes on one hub', () => {
  it('slots count over both nodes; a node that stops beating frees its slots for the other and its calls can no longer be located', async () => {
    const clock = new ManualClock();
    const hub = new MemoryHub(clock, 5_000);
    const a = new MemoryCluster('a', hub);
    const b = new MemoryCluster('b', hub);
    expect(await b.leases.acquire('b1', 7, 't', caps)).toBe('ok');
    await b.directory.place('call-1');
    expect(await a.leases.acquire('a1', 7, 't', caps)).toBe('ok');
    expect(await a.leases.acquire('a2', 7, 't', caps)).toBe('account');
    expect(await a.directory.locate('call-1')).toBe('b');
    clock.advance(4_000);
    b.beat();
    clock.advance(4_000);
    expect(await a.leases.acquire('a2', 7, 't', caps)).toBe('account');
    clock.advance(1_001);
    // b's last beat is 5 001 ms old.
    expect(await a.directory.locate('call-1')).toBeUndefined();
    expect(await a.leases.acquire('a2', 7, 't', caps)).toBe('ok');
  });

  it('a message to one node reaches only it; a broadcast reaches all, the sender included, with its sender', async () => {
    const hub = new MemoryHub(new ManualClock());
    const a = new MemoryCluster('a', hub);
    const b = new MemoryCluster('b', hub);
    const heard: Record<string, Envelope[]> = { a: [], b: [] };
    a.bus.subscribe((m) => heard.a!.push(m));
    b.bus.subscribe((m) => heard.b!.push(m));
    expect(await a.bus.publish('b', { type: 'hangup', uuid: 'u', cause: 'local-hangup' })).toBe(1);
    expect(await a.bus.publish('c', { type: 'hangup', uuid: 'u', cause: 'local-hangup' })).toBe(0);
    expect(await a.bus.publish('all', { type: 'campaign-stop', campaignId: 3 })).toBe(2);
    expect(heard.a).toEqual([{ type: 'campaign-stop', campaignId: 3, from: 'a' }]);
    expect(heard.b).toEqual([
      { type: 'hangup', uuid: 'u', cause: 'local-hangup', from: 'a' },
      { type: 'campaign-stop', campaignId: 3, from: 'a' },
    ]);
  });

  it('a campaign stopped through one node is stopped on the others', async () => {
    const hub = new MemoryHub(new ManualClock());
    const stopped: Record<string, number[]> = { a: [], b: [] };
    const runner = (id: string) => ({ start: async () => undefined, stop: async (c: number) => void stopped[id]!.push(c) });
    const a = clusterCampaignRunner(runner('a'), new MemoryCluster('a', hub), createLogger('silent'));
    clusterCampaignRunner(runner('b'), new MemoryCluster('b', hub), createLogger('silent'));
    await a.stop(12);
    await new Promise((r) => setImmediate(r));
    expect(stopped).toEqual({ a: [12], b: [12] });
  });
});

describe('CallRegistry slots', () => {
  it('two calls being set up at once cannot both take the last slot (a reserved slot counts before its call exists)', async () => {
    const registry = new CallRegistry();
    const [x, y] = await Promise.all([registry.reserve(7, 't', { maxPerAccount: 1, maxPerTrunk: 9 }), registry.reserve(7, 't', { maxPerAccount: 1, maxPerTrunk: 9 })]);
    expect([typeof x, typeof y].sort()).toEqual(['object', 'string']);
    const slot = typeof x === 'object' ? x : y;
    if (typeof slot === 'string') throw new Error('no slot');
    await slot.release();
    await slot.release(); // idempotent: frees one slot, once
    expect(typeof (await registry.reserve(7, 't', { maxPerAccount: 1, maxPerTrunk: 9 }))).toBe('object');
    expect(await registry.reserve(7, 't', { maxPerAccount: 1, maxPerTrunk: 9 })).toBe('account');
  });

  it('hang-up of a call no node holds: not-found', async () => {
    expect(await new CallRegistry().hangup('nope')).toBe('not-found');
  });
});

describe('inactivity sweep on two nodes', () => {
  /** One store's due conversation, seen by both sweepers until it is ended. */
  function store() {
    const ended: string[] = [];
    let open = true;
    const conversations = { dueForEnd: async () => (open ? [{ id: 1, assistantId: 1 }] : []) };
    const service = (node: string) => ({
      end: async () => {
        // Ending takes a moment (an event written, a webhook queued): both may be in it at once.
        await new Promise((r) => setTimeout(r, 5));
        ended.push(node);
        open = false;
        return true;
      },
    });
    return { ended, conversations, service };
  }
  const sweeper = (s: ReturnType<typeof store>, node: string, claim?: (k: string, ttl: number) => Promise<boolean>) =>
    new InactivitySweeper({
      conversations: s.conversations as never,
      service: s.service(node) as never,
      assistant: async () => undefined,
      clock: new ManualClock(),
      logger: createLogger('silent'),
      ...(claim ? { claim } : {}),
    });

  it('with a shared claim, one node ends the conversation, once', async () => {
    const s = store();
    const hub = new MemoryHub(new ManualClock());
    const a = new MemoryCluster('a', hub);
    const b = new MemoryCluster('b', hub);
    await Promise.all([sweeper(s, 'a', (k, t) => a.claim(k, t)).sweep(), sweeper(s, 'b', (k, t) => b.claim(k, t)).sweep()]);
    expect(s.ended).toHaveLength(1);
  });

  it('without one, both nodes end it (what the claim prevents)', async () => {
    const s = store();
    await Promise.all([sweeper(s, 'a').sweep(), sweeper(s, 'b').sweep()]);
    expect(s.ended).toHaveLength(2);
  });
});
