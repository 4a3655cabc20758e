/**
 * The campaign dialer wired to the real outbound dialer over loopback SIP: a carrier test phone
 * answers every lead's call (and hangs up after `holdMs`, like a short conversation).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { userOf } from '../../../src/call/numbers.ts';
import { CampaignDialer } from '../../../src/campaigns/dialer.ts';
import { sqliteDialerStore } from '../../../src/campaigns/dialer-store.ts';
import { campaignPlaceCall, wireCampaigns, type CampaignWiringDeps } from '../../../src/campaigns/wiring.ts';
import { TestPhone, type PhoneCall } from '../../support/test-phone.ts';
import { sleep } from '../../support/test-phone-rtp.ts';
import { harness, until, type Harness } from '../calls/harness.ts';

let h: Harness | undefined;
let carrier: TestPhone | undefined;
let stopCarrier: (() => void) | undefined;
afterEach(async () => {
  stopCarrier?.();
  await carrier?.close();
  await h?.close();
  h = carrier = stopCarrier = undefined;
});

interface Peer {
  maxConcurrent: number;
  live: Set<PhoneCall>;
  /** Request-URI users of every INVITE, in order. */
  invited: () => string[];
}

/** Answers everything; hangs up each call after `holdMs` (never when undefined). */
function answeringPeer(phone: TestPhone, holdMs: number | undefined): Peer {
  const peer: Peer = { maxConcurrent: 0, live: new Set(), invited: () => phone.incoming.map((i) => userOf(i.request.uri) ?? '') };
  let seen = 0;
  const timer = setInterval(() => {
    for (; seen < phone.answered.length; seen++) {
      const call = phone.answered[seen]!;
      peer.live.add(call);
      peer.maxConcurrent = Math.max(peer.maxConcurrent, peer.live.size);
      void call.ended.then(() => peer.live.delete(call));
      if (holdMs !== undefined) setTimeout(() => void call.hangup(), holdMs);
    }
  }, 5);
  stopCarrier = () => clearInterval(timer);
  return peer;
}

async function setup(leads: number, maxConcurrent: number, holdMs: number | undefined) {
  h = await harness();
  carrier = await TestPhone.create({ userName: 'carrier' });
  const trunk = await h.trunk();
  trunk.live.spec.address = `127.0.0.1:${carrier.port}`;
  const assistant = await h.assistant(null, {}, 'outbound');
  const deps: CampaignWiringDeps = {
    store: h.ctx.store,
    repos: h.ctx.repos,
    trunks: h.ctx.trunks,
    placer: h.server.dialer,
    registry: h.server.registry,
    clock: h.clock,
    logger: h.ctx.logger,
    options: { pollMs: 5000 },
  };
  const created = await h.req('POST', '/user/campaigns', { name: 'promo', assistant_id: assistant, phone_number_id: trunk.phoneNumberId, max_concurrent_calls: maxConcurrent });
  expect(created.status).toBe(201);
  const id = created.body.data?.id ?? created.body.id;
  const numbers = Array.from({ length: leads }, (_, i) => `+1415555${String(2000 + i)}`);
  const added = await h.req('POST', `/user/campaigns/${id}/leads`, { leads: numbers.map((phone_number, i) => ({ phone_number, variables: { name: `L${i}` } })) });
  expect(added.status).toBeLessThan(300);
  const peer = answeringPeer(carrier, holdMs);
  const leadRows = () => h!.ctx.store.db.selectFrom('leads').selectAll().where('campaign_id', '=', id).orderBy('id').execute();
  const status = async () => (await h!.ctx.repos.campaigns.getById(id))!.status;
  return { deps, id, numbers, peer, leadRows, status, start: () => h!.req('POST', '/user/campaigns/update-status', { campaign_id: id, action: 'start' }) };
}

describe('campaign dialer over SIP', () => {
  it('dials every lead once, never above max_concurrent_calls, then completes', async () => {
    const s = await setup(12, 3, 250);
    const wiring = wireCampaigns(s.deps);
    h!.ctx.campaignRunner = wiring.dialer;
    expect((await s.start()).body).toMatchObject({ success: true });
    await until(async () => (await s.status()) === 'completed', 15_000, 'campaign completed');
    expect(s.peer.maxConcurrent).toBe(3);
    expect([...s.peer.invited()].sort()).toEqual([...s.numbers].sort());
    const leads = await s.leadRows();
    expect(leads.every((l) => l.status === 'done' && l.last_outcome === 'completed' && l.attempts === 1)).toBe(true);
    // Each call record carries its campaign, lead and the lead's variables.
    const calls = await h!.ctx.store.db.selectFrom('calls').selectAll().execute();
    expect(calls).toHaveLength(12);
    expect(calls.every((c) => c.campaign_id === s.id && c.lead_id !== null && c.status === 'completed')).toBe(true);
    expect(JSON.parse(calls[0]!.variables!)).toMatchObject({ name: 'L0' });
    await wiring.close();
  });

  it('stop in the middle: every ongoing call is hung up and no new call starts', async () => {
    const s = await setup(8, 3, undefined);
    const wiring = wireCampaigns(s.deps);
    h!.ctx.campaignRunner = wiring.dialer;
    await s.start();
    await until(() => s.peer.live.size === 3, 5000, 'three calls up');
    const res = await h!.req('POST', '/user/campaigns/update-status', { campaign_id: s.id, action: 'stop' });
    expect(res.body).toMatchObject({ success: true, data: { status: 'stopped' } });
    // The stop resolves once the calls settled: nothing survives it.
    expect(h!.server.registry.size).toBe(0);
    await until(() => s.peer.live.size === 0, 2000, 'carrier legs ended');
    await sleep(300);
    expect(s.peer.invited()).toHaveLength(3);
    const leads = await s.leadRows();
    // Answered calls cut by the stop count as held conversations (dialer.ts); the rest wait untouched.
    expect(leads.filter((l) => l.status === 'done' && l.attempts === 1)).toHaveLength(3);
    expect(leads.filter((l) => l.status === 'pending' && l.attempts === 0)).toHaveLength(5);
    expect(await s.status()).toBe('stopped');
  });

  it('stop while the calls still ring: each INVITE is cancelled', async () => {
    const s = await setup(4, 2, undefined);
    carrier!.answerMode = 'ring';
    const wiring = wireCampaigns(s.deps);
    h!.ctx.campaignRunner = wiring.dialer;
    await s.start();
    await until(() => carrier!.incoming.length === 2, 5000, 'two INVITEs ringing');
    const cancels = carrier!.incoming.map((inc) => new Promise<void>((r) => inc.once('cancel', () => r())));
    await h!.req('POST', '/user/campaigns/update-status', { campaign_id: s.id, action: 'stop' });
    await Promise.all(cancels);
    expect(h!.server.registry.size).toBe(0);
    const leads = await s.leadRows();
    // Never answered: the attempt is given back as aborted, the lead stays callable.
    expect(leads.filter((l) => l.last_outcome === 'aborted' && l.status === 'pending')).toHaveLength(2);
  });

  it('restart in the middle: calls of the dead run are settled from their records, no lead is dialled twice', async () => {
    const s = await setup(10, 2, 400);
    // Run A dies after a few calls: it writes nothing more (no lead update, no new call).
    let dead = false;
    const base = sqliteDialerStore(s.deps.store, s.deps.repos, s.deps.clock, { callsCarryLeadId: true });
    const storeA = { ...base, finish: (...a: Parameters<typeof base.finish>) => (dead ? Promise.resolve(true) : base.finish(...a)) };
    const placeA = campaignPlaceCall(s.deps);
    const runA = new CampaignDialer(storeA, (lead, c, signal) => (dead ? Promise.reject(new Error('process gone')) : placeA(lead, c, signal)), s.deps.clock);
    h!.ctx.campaignRunner = runA;
    await s.start();
    await until(() => carrier!.answered.length >= 4 && s.peer.live.size > 0, 8000, 'a few calls done, one up');
    dead = true;
    await runA.stop(s.id); // its calls end with the process
    const calling = (await s.leadRows()).filter((l) => l.status === 'calling');
    expect(calling.length).toBeGreaterThan(0);
    // Run B (a fresh process) resumes the in-progress campaign.
    const wiring = wireCampaigns(s.deps);
    h!.ctx.campaignRunner = wiring.dialer;
    await wiring.start();
    await until(async () => (await s.status()) === 'completed', 15_000, 'campaign completed');
    const invited = s.peer.invited();
    expect(invited).toHaveLength(10);
    expect(new Set(invited).size).toBe(10);
    // Answered calls of the dead run are settled as completed from their records; one cut while
    // still ringing has no outcome to prove and is failed, never redialled blindly.
    const leads = await s.leadRows();
    for (const l of leads) expect(l.status === 'done' || (l.status === 'failed' && l.last_outcome === 'failed-unknown'), JSON.stringify(l)).toBe(true);
    expect(leads.filter((l) => calling.some((c) => c.id === l.id) && l.status !== 'calling')).toHaveLength(calling.length);
    await wiring.close();
  });

  it('the balance runs out: dialing pauses with leads left, and resumes after a top-up', async () => {
    const s = await setup(6, 1, 100);
    const wiring = wireCampaigns(s.deps);
    h!.ctx.campaignRunner = wiring.dialer;
    await s.start();
    await until(() => s.peer.invited().length >= 2, 5000, 'two calls');
    await h!.ctx.repos.ledger.setBalance(h!.owner.id, 0);
    await until(() => wiring.dialer.status(s.id).paused === 'balance', 5000, 'paused for balance');
    const placed = s.peer.invited().length;
    await sleep(400);
    expect(s.peer.invited()).toHaveLength(placed);
    expect(placed).toBeLessThan(6);
    expect(await s.status()).toBe('in-progress');
    expect((await s.leadRows()).filter((l) => l.status === 'pending').length).toBe(6 - placed);
    await h!.ctx.repos.ledger.setBalance(h!.owner.id, 10_000_000);
    h!.clock.advance(5000);
    await until(async () => (await s.status()) === 'completed', 8000, 'completed after top-up');
    expect(new Set(s.peer.invited()).size).toBe(6);
    await wiring.close();
  });
});
