/**
 * One campaign dialed by two nodes (two CampaignDialers with their own lease names over one
 * store, on a manual clock): each lead is dialed once across both, a dead node's leads are
 * settled by the survivor once their leases lapse, and a node that lost its lease hangs up.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openMemoryStore, type Store } from '../../../src/store/db.ts';
import { createRepos, type Repos } from '../../../src/store/index.ts';
import { SecretBox } from '../../../src/store/secrets.ts';
import type { Campaign } from '../../../src/store/repos/campaigns.ts';
import type { Lead } from '../../../src/store/repos/leads.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { CampaignDialer, type CallOutcome, type DialerStore } from '../../../src/campaigns/dialer.ts';
import { sqliteDialerStore } from '../../../src/campaigns/dialer-store.ts';

const TTL = 30_000;
const settle = async () => {
  for (let i = 0; i < 40; i++) await new Promise((r) => setImmediate(r));
};

let store: Store;
let repos: Repos;
let clock: ManualClock;
let accountId: number;

beforeEach(async () => {
  clock = new ManualClock(Date.parse('2030-03-05T12:00:00Z'));
  store = openMemoryStore();
  repos = createRepos(store, clock, new SecretBox(Buffer.alloc(32, 1)));
  accountId = (await repos.accounts.create('acme')).id;
  await repos.ledger.adjust(accountId, 100_000_000, 'test balance');
});
afterEach(async () => {
  await store.close();
});

async function campaign(leads: number, max: number): Promise<Campaign> {
  const c = await repos.campaigns.create(accountId, { name: 'c', assistantId: 1, phoneNumberId: 1, maxConcurrentCalls: max, callingHours: null });
  repos.leads.add(accountId, c.id, Array.from({ length: leads }, (_, i) => ({ phoneNumber: `+1555000${String(i).padStart(4, '0')}` })));
  await repos.campaigns.setStatus(c.id, 'draft', 'in-progress');
  return (await repos.campaigns.getById(c.id))!;
}

interface Placed {
  node: string;
  lead: Lead;
  signal: AbortSignal;
  end(o: CallOutcome): void;
}

/** Every call any node places, in order; like the real placer, each writes its call record first. */
function network() {
  const placed: Placed[] = [];
  const open = new Set<Placed>();
  const placer = (node: string) => async (lead: Lead, c: Campaign, signal: AbortSignal) => {
    await repos.calls.create({ accountId, direction: 'outbound', fromNumber: '+1', toNumber: lead.phoneNumber, leadId: lead.id, campaignId: c.id, status: 'ringing' });
    return new Promise<CallOutcome>((resolve) => {
      const p: Placed = { node, lead, signal, end: (o) => (open.delete(p), resolve(o)) };
      signal.addEventListener('abort', () => p.end('failed'), { once: true });
      placed.push(p);
      open.add(p);
    });
  };
  return { placed, open, placer };
}

const nodeStore = (holder: string): DialerStore => sqliteDialerStore(store, repos, clock, { callsCarryLeadId: true, holder, leaseTtlMs: TTL });

/** A node that dies: from `dead` on, every store call fails (it can write nothing more). */
function mortal(holder: string) {
  const state = { dead: false };
  const real = nodeStore(holder);
  const s = new Proxy(real, {
    get: (t, k: keyof DialerStore) => (state.dead && typeof t[k] === 'function' ? () => Promise.reject(new Error('node gone')) : t[k]),
  });
  return { store: s, state };
}

describe('a campaign over two nodes', () => {
  it('dials each lead exactly once across both nodes and completes', async () => {
    const c = await campaign(12, 2);
    const net = network();
    const a = new CampaignDialer(nodeStore('node-a'), net.placer('node-a'), clock, { pollMs: 60_000 });
    const b = new CampaignDialer(nodeStore('node-b'), net.placer('node-b'), clock, { pollMs: 60_000 });
    await Promise.all([a.start(c.id), b.start(c.id)]);
    await settle();
    for (let i = 0; i < 40 && net.open.size > 0; i++) {
      expect(net.open.size).toBeLessThanOrEqual(2); // max_concurrent_calls across both nodes
      [...net.open][0]!.end('completed');
      await settle();
      // Each node also looks again now and then (the wiring's campaign watch).
      await Promise.all([a.start(c.id), b.start(c.id)]);
      await settle();
    }
    const ids = net.placed.map((p) => p.lead.id);
    expect(new Set(ids).size).toBe(12);
    expect(ids).toHaveLength(12);
    expect(net.placed.some((p) => p.node === 'node-a') && net.placed.some((p) => p.node === 'node-b')).toBe(true);
    const leads = await repos.leads.list(accountId, c.id, { limit: 100, offset: 0 });
    expect(leads.every((l) => l.status === 'done' && l.attempts === 1 && l.leaseHolder === null)).toBe(true);
    expect((await repos.campaigns.getById(c.id))!.status).toBe('completed');
    await a.close();
    await b.close();
  });

  it('nodes alive split the cap, so the first to look does not take every slot', async () => {
    const c = await campaign(10, 4);
    const net = network();
    // Both nodes announce themselves (the presence leases src/cluster/node-leases.ts keeps).
    await repos.leases.take('node:node-a', 'node-a', clock.now(), TTL);
    await repos.leases.take('node:node-b', 'node-b', clock.now(), TTL);
    const a = new CampaignDialer(nodeStore('node-a'), net.placer('node-a'), clock, { pollMs: 600_000 });
    const b = new CampaignDialer(nodeStore('node-b'), net.placer('node-b'), clock, { pollMs: 600_000 });
    await a.start(c.id);
    await settle();
    expect(net.placed.filter((p) => p.node === 'node-a')).toHaveLength(2);
    await b.start(c.id);
    await settle();
    expect(net.placed.filter((p) => p.node === 'node-b')).toHaveLength(2);
    await a.close();
    await b.close();
  });

  it("a dead node's leads wait for its leases to lapse, are settled by the survivor (never redialed), and the campaign finishes", async () => {
    const c = await campaign(8, 2);
    const net = network();
    const na = mortal('node-a');
    const a = new CampaignDialer(na.store, net.placer('node-a'), clock, { pollMs: 600_000, onError: () => {} });
    await a.start(c.id);
    await settle();
    expect(net.placed).toHaveLength(2);
    const aLeads = new Set(net.placed.map((p) => p.lead.id));
    // node-a dies with two calls up: it renews nothing, writes nothing.
    na.state.dead = true;
    const b = new CampaignDialer(nodeStore('node-b'), net.placer('node-b'), clock, { pollMs: 600_000 });
    await b.start(c.id);
    await settle();
    // node-a's two calls still count against max_concurrent_calls (2) while their leases live:
    // node-b neither redials them nor goes past the campaign's cap.
    expect(net.placed.filter((p) => p.node === 'node-b')).toHaveLength(0);
    clock.advance(TTL / 2);
    await b.start(c.id); // the wiring's watch
    await settle();
    expect(net.placed.filter((p) => p.node === 'node-b')).toHaveLength(0);
    const held = await repos.leads.list(accountId, c.id, { status: 'calling', limit: 100, offset: 0 });
    expect(held.map((l) => l.id).sort()).toEqual([...aLeads].sort());
    // The leases lapse: node-b wakes by itself (no watch here) and settles them from their records.
    clock.advance(TTL / 2 + 1);
    await settle();
    for (let i = 0; i < 20 && net.placed.filter((p) => p.node === 'node-b' && net.open.has(p)).length > 0; i++) {
      expect(net.placed.filter((p) => p.node === 'node-b' && net.open.has(p)).length).toBeLessThanOrEqual(2);
      net.placed.filter((p) => p.node === 'node-b' && net.open.has(p))[0]!.end('completed');
      await settle();
    }
    const ids = net.placed.map((p) => p.lead.id);
    expect(ids).toHaveLength(8);
    expect(new Set(ids).size).toBe(8);
    const leads = await repos.leads.list(accountId, c.id, { limit: 100, offset: 0 });
    // Their calls' records are open (the node died mid-call): the outcome is unknown, never a redial.
    expect(leads.filter((l) => aLeads.has(l.id)).every((l) => l.status === 'failed' && l.lastOutcome === 'failed-unknown')).toBe(true);
    expect((await repos.campaigns.getById(c.id))!.status).toBe('completed');
    await b.close();
  });

  it('a lead claimed by a node that died before placing the call goes back to the pool and is dialed once', async () => {
    const c = await campaign(1, 1);
    const ds = nodeStore('node-a');
    const [lead] = await repos.leads.list(accountId, c.id, { limit: 1, offset: 0 });
    expect(await ds.claim(lead!.id, 'dead-1')).toBe(true); // then node-a dies: no call record
    const net = network();
    const b = new CampaignDialer(nodeStore('node-b'), net.placer('node-b'), clock, { pollMs: 600_000 });
    await b.start(c.id);
    await settle();
    expect(net.placed).toHaveLength(0); // the lease is live
    clock.advance(TTL);
    await settle();
    expect(net.placed.map((p) => p.lead.id)).toEqual([lead!.id]);
    expect(net.placed[0]!.lead.attempts).toBe(1);
    net.placed[0]!.end('completed');
    await settle();
    expect((await repos.campaigns.getById(c.id))!.status).toBe('completed');
    await b.close();
  });

  it('a node that could not renew its lease in time (taken over meanwhile) hangs its call up', async () => {
    const c = await campaign(1, 1);
    const net = network();
    const na = mortal('node-a');
    const a = new CampaignDialer(na.store, net.placer('node-a'), clock, { pollMs: 600_000, onError: () => {} });
    await a.start(c.id);
    await settle();
    expect(net.placed).toHaveLength(1);
    // node-a stalls (its store unreachable) past its lease; node-b settles the lead.
    na.state.dead = true;
    clock.advance(TTL + 1);
    await settle();
    const b = new CampaignDialer(nodeStore('node-b'), net.placer('node-b'), clock, { pollMs: 600_000 });
    await b.start(c.id);
    await settle();
    expect((await repos.leads.list(accountId, c.id, { limit: 1, offset: 0 }))[0]).toMatchObject({ status: 'failed', lastOutcome: 'failed-unknown' });
    // node-a comes back: its next renewal finds the lead no longer its own and ends the call.
    na.state.dead = false;
    clock.advance(TTL / 3);
    await settle();
    expect(net.placed[0]!.signal.aborted).toBe(true);
    expect(net.placed).toHaveLength(1);
    await a.close();
    await b.close();
  });
});
