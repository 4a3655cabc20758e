import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openMemoryStore, type Store } from '../../../src/store/db.ts';
import { createRepos, type Repos } from '../../../src/store/index.ts';
import { SecretBox } from '../../../src/store/secrets.ts';
import type { Campaign } from '../../../src/store/repos/campaigns.ts';
import type { Lead } from '../../../src/store/repos/leads.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { AppError } from '../../../src/util/errors.ts';
import { CampaignDialer, afterAttempt, errorResult, type CallOutcome } from '../../../src/campaigns/dialer.ts';
import { sqliteDialerStore } from '../../../src/campaigns/dialer-store.ts';
import type { CallingHours } from '../../../src/campaigns/calling-hours.ts';

const settle = async () => {
  for (let i = 0; i < 30; i++) await new Promise((r) => setImmediate(r));
};

interface PlacedCall {
  lead: Lead;
  campaign: Campaign;
  signal: AbortSignal;
  end(outcome: CallOutcome): void;
  fail(err: unknown): void;
}

/** A placeCall whose calls stay up until the test ends them; an abort ends a call as 'failed'. */
function fakePlacer() {
  const placed: PlacedCall[] = [];
  const ended = new Set<PlacedCall>();
  let maxLive = 0;
  const open = () => placed.filter((c) => !ended.has(c));
  const placeCall = (lead: Lead, campaign: Campaign, signal: AbortSignal) =>
    new Promise<CallOutcome>((resolve, reject) => {
      const c: PlacedCall = {
        lead,
        campaign,
        signal,
        end: (o) => (ended.add(c), resolve(o)),
        fail: (e) => (ended.add(c), reject(e)),
      };
      signal.addEventListener('abort', () => c.end('failed'), { once: true });
      placed.push(c);
      maxLive = Math.max(maxLive, open().length);
    });
  return {
    placed,
    placeCall,
    open,
    get live() {
      return open().length;
    },
    get maxLive() {
      return maxLive;
    },
    endAll: (outcome: CallOutcome) => open().forEach((c) => c.end(outcome)),
    endOne: (c: PlacedCall, outcome: CallOutcome) => c.end(outcome),
  };
}

let store: Store;
let repos: Repos;
let clock: ManualClock;
let accountId: number;

beforeEach(async () => {
  clock = new ManualClock(Date.parse('2030-03-05T12:00:00Z')); // a Tuesday, noon UTC
  store = openMemoryStore();
  repos = createRepos(store, clock, new SecretBox(Buffer.alloc(32, 1)));
  accountId = (await repos.accounts.create('acme')).id;
  await repos.ledger.adjust(accountId, 100_000_000, 'test balance');
});
afterEach(async () => {
  await store.close();
});

async function campaign(leads: number, opts: { max?: number; hours?: CallingHours | null } = {}): Promise<Campaign> {
  const c = await repos.campaigns.create(accountId, { name: 'c', assistantId: 1, phoneNumberId: 1, maxConcurrentCalls: opts.max ?? 3, callingHours: opts.hours ?? null });
  await repos.leads.add(
    accountId,
    c.id,
    Array.from({ length: leads }, (_, i) => ({ phoneNumber: `+1555000${String(i).padStart(4, '0')}`, variables: { name: `lead${i}` } })),
  );
  await repos.campaigns.setStatus(c.id, 'draft', 'in-progress');
  return (await repos.campaigns.getById(c.id))!;
}

const leadsOf = (id: number) => repos.leads.list(accountId, id, { limit: 1000, offset: 0 });
const dialler = (p: ReturnType<typeof fakePlacer>, extra: ConstructorParameters<typeof CampaignDialer>[3] = {}, storeOpts = {}) =>
  new CampaignDialer(sqliteDialerStore(store, repos, clock, storeOpts), p.placeCall, clock, { pollMs: 60_000, ...extra });

describe('CampaignDialer', () => {
  it('respects max_concurrent_calls, passes each lead, completes the campaign', async () => {
    const c = await campaign(10, { max: 3 });
    const p = fakePlacer();
    const d = dialler(p);
    await d.start(c.id);
    await settle();
    expect(p.placed).toHaveLength(3);
    expect(p.placed[0]!.lead.variables).toEqual({ name: 'lead0' });
    expect(p.placed[0]!.campaign.id).toBe(c.id);
    while (p.live > 0) {
      p.open()[0]!.end('completed');
      await settle();
    }
    expect(p.maxLive).toBe(3);
    expect(new Set(p.placed.map((x) => x.lead.id)).size).toBe(10);
    expect((await leadsOf(c.id)).every((l) => l.status === 'done' && l.attempts === 1 && l.lastOutcome === 'completed')).toBe(true);
    expect((await repos.campaigns.getById(c.id))!.status).toBe('completed');
    expect(d.status(c.id).running).toBe(false);
  });

  it('stop aborts every ongoing call, starts no new one, and leaves the leads resumable', async () => {
    const c = await campaign(10, { max: 3 });
    const p = fakePlacer();
    const d = dialler(p);
    await d.start(c.id);
    await settle();
    expect(p.placed).toHaveLength(3);
    await repos.campaigns.setStatus(c.id, 'in-progress', 'stopped'); // as update-status does
    await d.stop(c.id);
    expect(p.placed.every((x) => x.signal.aborted)).toBe(true);
    expect(p.live).toBe(0);
    clock.advance(24 * 3600_000);
    await settle();
    expect(p.placed).toHaveLength(3);
    const leads = await leadsOf(c.id);
    expect(leads.filter((l) => l.status === 'calling')).toHaveLength(0);
    expect(leads.filter((l) => l.lastOutcome === 'aborted')).toHaveLength(3);
    // Resume: the aborted three and the seven others are pending again.
    await repos.campaigns.setStatus(c.id, 'stopped', 'in-progress');
    await d.start(c.id);
    await settle();
    expect(p.placed).toHaveLength(6);
    await d.stop(c.id);
  });

  it('a restart mid-way never dials a lead twice: calling leads become failed-unknown', async () => {
    const c = await campaign(8, { max: 3 });
    const a = fakePlacer();
    // The first process "dies" by losing its store: every call fails except the attempt-guarded
    // finish, so a late answer reaching the store can be checked.
    let crashed = false;
    const real = sqliteDialerStore(store, repos, clock);
    const dying = new Proxy(real, {
      get: (t, k: keyof typeof real) => (crashed && k !== 'finish' ? () => Promise.reject(new Error('process gone')) : t[k]),
    });
    const first = new CampaignDialer(dying, a.placeCall, clock, { onError: () => {} });
    await first.start(c.id);
    await settle();
    expect(a.placed).toHaveLength(3);
    crashed = true;
    const b = fakePlacer();
    const second = dialler(b);
    await second.start(c.id);
    await settle();
    const firstIds = new Set(a.placed.map((x) => x.lead.id));
    expect(b.placed.some((x) => firstIds.has(x.lead.id))).toBe(false);
    const leads = await leadsOf(c.id);
    expect(leads.filter((l) => l.lastOutcome === 'failed-unknown').map((l) => l.id).sort()).toEqual([...firstIds].sort());
    // A late answer from the dead run cannot overwrite the resolution.
    a.endAll('completed');
    await settle();
    expect((await leadsOf(c.id)).filter((l) => firstIds.has(l.id)).every((l) => l.status === 'failed')).toBe(true);
    while (b.live > 0) {
      b.endAll('completed');
      await settle();
    }
    expect(b.placed).toHaveLength(5);
    expect((await repos.campaigns.getById(c.id))!.status).toBe('completed');
  });

  it('with call records carrying the lead id, a restart uses them: outcome kept, never-placed redialled once', async () => {
    const c = await campaign(2, { max: 2 });
    const ds = sqliteDialerStore(store, repos, clock, { callsCarryLeadId: true });
    const [l1, l2] = await leadsOf(c.id);
    await ds.claim(l1!.id, 'x1');
    await ds.claim(l2!.id, 'x2');
    await repos.calls.create({ accountId, direction: 'outbound', fromNumber: '+1', toNumber: l1!.phoneNumber, leadId: l1!.id, campaignId: c.id, status: 'completed' });
    const p = fakePlacer();
    const d = new CampaignDialer(ds, p.placeCall, clock);
    await d.start(c.id);
    await settle();
    expect(p.placed.map((x) => x.lead.id)).toEqual([l2!.id]);
    expect(p.placed[0]!.lead.attempts).toBe(1); // the never-placed attempt was given back
    const after = await leadsOf(c.id);
    expect(after.find((l) => l.id === l1!.id)).toMatchObject({ status: 'done', lastOutcome: 'completed' });
    await d.stop(c.id);
  });

  it('pauses when the balance no longer covers a minute, resumes after a top-up', async () => {
    const c = await campaign(5, { max: 1 });
    await repos.ledger.setBalance(accountId, 250_000, 'test'); // $0.25: two calls at $0.10
    const p = fakePlacer();
    const d = dialler(p);
    await d.start(c.id);
    await settle();
    for (let i = 0; i < 2; i++) {
      await repos.ledger.tryCharge(accountId, 100_000, 'call minute');
      p.endOne(p.placed[i]!, 'completed');
      await settle();
    }
    expect(p.placed).toHaveLength(2);
    expect(d.status(c.id)).toMatchObject({ running: true, paused: 'balance', active: 0 });
    clock.advance(60_000);
    await settle();
    expect(p.placed).toHaveLength(2);
    await repos.ledger.adjust(accountId, 10_000_000, 'top-up');
    clock.advance(60_000);
    await settle();
    expect(p.placed).toHaveLength(3);
    expect((await repos.campaigns.getById(c.id))!.status).toBe('in-progress');
    await d.stop(c.id);
  });

  it('calls only inside calling hours, in the campaign time zone', async () => {
    // 12:00 UTC is 07:00 in New York: before the 09:00–17:00 window.
    const c = await campaign(2, { max: 2, hours: { start: '09:00', end: '17:00', timezone: 'America/New_York' } });
    const p = fakePlacer();
    const d = dialler(p);
    await d.start(c.id);
    await settle();
    expect(p.placed).toHaveLength(0);
    expect(d.status(c.id).paused).toBe('hours');
    clock.advance(60 * 60_000); // 08:00 local
    await settle();
    expect(p.placed).toHaveLength(0);
    clock.advance(60 * 60_000); // 09:00 local
    await settle();
    expect(p.placed).toHaveLength(2);
    await d.stop(c.id);
  });

  it('retries busy, no-answer and voicemail after the delay, up to the attempt limit', async () => {
    const c = await campaign(3, { max: 3 });
    const p = fakePlacer();
    const d = dialler(p, { maxAttempts: 3, retryDelayMs: 10 * 60_000 });
    await d.start(c.id);
    await settle();
    const [busy, vm, na] = p.placed;
    p.endOne(busy!, 'busy');
    p.endOne(vm!, 'voicemail');
    p.endOne(na!, 'no-answer');
    await settle();
    expect(p.placed).toHaveLength(3); // nothing is due before the delay
    clock.advance(10 * 60_000);
    await settle();
    expect(p.placed.slice(3).map((x) => x.lead.id).sort()).toEqual([busy!.lead.id, vm!.lead.id, na!.lead.id].sort());
    for (const x of p.placed.slice(3)) p.endOne(x, x.lead.id === busy!.lead.id ? 'busy' : x.lead.id === vm!.lead.id ? 'voicemail' : 'completed');
    await settle();
    clock.advance(10 * 60_000);
    await settle();
    // Third and last attempt for the two still unreached; the answered lead is not called again.
    expect(p.placed.slice(6).map((x) => x.lead.id).sort()).toEqual([busy!.lead.id, vm!.lead.id].sort());
    for (const x of p.placed.slice(6)) p.endOne(x, x.lead.id === busy!.lead.id ? 'busy' : 'voicemail');
    await settle();
    clock.advance(60 * 60_000);
    await settle();
    const leads = await leadsOf(c.id);
    expect(leads.find((l) => l.id === busy!.lead.id)).toMatchObject({ status: 'failed', attempts: 3, lastOutcome: 'busy' });
    expect(leads.find((l) => l.id === vm!.lead.id)).toMatchObject({ status: 'done', attempts: 3, lastOutcome: 'voicemail' });
    expect(leads.find((l) => l.id === na!.lead.id)).toMatchObject({ status: 'done', attempts: 2, lastOutcome: 'completed' });
    expect((await repos.campaigns.getById(c.id))!.status).toBe('completed');
  });

  it('a retryable refusal (call limit) gives the attempt back and tries again after pollMs', async () => {
    const c = await campaign(1, { max: 1 });
    const p = fakePlacer();
    const d = dialler(p);
    await d.start(c.id);
    await settle();
    p.placed[0]!.fail(new AppError('Too many concurrent calls', 429, 'CALL_LIMIT', true));
    await settle();
    expect((await leadsOf(c.id))[0]).toMatchObject({ status: 'pending', attempts: 0, lastOutcome: 'not-placed' });
    clock.advance(60_000);
    await settle();
    expect(p.placed).toHaveLength(2);
    await d.stop(c.id);
  });
});

describe('afterAttempt / errorResult (pure)', () => {
  const o = { maxAttempts: 2, retryDelayMs: 1000, pollMs: 50 };
  it('maps outcomes to the next lead state', () => {
    expect(afterAttempt(1, 'completed', 0, o)).toMatchObject({ status: 'done' });
    expect(afterAttempt(1, 'busy', 0, o)).toEqual({ status: 'pending', lastOutcome: 'busy', nextAttemptAt: 1000 });
    expect(afterAttempt(2, 'no-answer', 0, o)).toMatchObject({ status: 'failed' });
    expect(afterAttempt(2, 'voicemail', 0, o)).toMatchObject({ status: 'done', lastOutcome: 'voicemail' });
    expect(afterAttempt(1, 'failed', 0, o)).toMatchObject({ status: 'failed' });
    expect(afterAttempt(1, 'not-placed-balance', 0, o)).toMatchObject({ status: 'pending', attemptsDelta: -1 });
  });
  it('classifies errors', () => {
    expect(errorResult(new Error('x'), true)).toBe('aborted');
    expect(errorResult(new AppError('b', 402, 'INSUFFICIENT_BALANCE'), false)).toBe('not-placed-balance');
    expect(errorResult(new AppError('l', 429, 'CALL_LIMIT', true), false)).toBe('not-placed-retryable');
    expect(errorResult(new Error('boom'), false)).toBe('failed');
  });
});
