import { afterEach, describe, expect, it } from 'vitest';
import { TestPhone } from '../../support/test-phone.ts';
import { sleep, toneShare } from '../../support/test-phone-rtp.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
const phones: TestPhone[] = [];
afterEach(async () => {
  for (const p of phones.splice(0)) await p.close();
  await h?.close();
  h = undefined;
});

async function phone(host = '127.0.0.1', userAgent?: string): Promise<TestPhone> {
  const p = await TestPhone.create({ host, ...(userAgent ? { userAgent } : {}) });
  phones.push(p);
  return p;
}

async function records(t: Harness) {
  return (await t.req('GET', '/user/calls')).body as Array<Record<string, any>>;
}

describe('inbound calls', () => {
  it('echo mode: the caller hears their own tone back, and the call is recorded', async () => {
    h = await harness();
    await h.trunk();
    const p = await phone();
    const call = await p.call(h.target('echo'));
    call.rtp.playTone(400, 1200);
    await sleep(1500);
    // Skip the first 400 ms heard (echo delay + jitter buffer fill), judge the tone after it.
    const heard = call.heard.slice(3200, 3200 + 4000);
    expect(heard.length).toBeGreaterThan(3000);
    expect(toneShare(heard, 400)).toBeGreaterThan(0.8);
    expect(await call.hangup()).toBe(200);
    await until(() => h!.server.registry.size === 0, 3000, 'call ended');
    const [rec] = await records(h);
    expect(rec).toMatchObject({ direction: 'inbound', status: 'completed', to_number: 'echo', codec: 'PCMU', end_cause: 'remote-hangup' });
    expect(rec!.quality.packets_received).toBeGreaterThan(40);
    expect(rec!.answered_at).not.toBeNull();
    const full = (await h.req('GET', `/user/calls/${rec!.id}`)).body;
    expect(full.id).toBe(rec!.id);
    expect(h.pool.inUse).toBe(0);
  });

  it('403 from a source no trunk allows, without a record or a port', async () => {
    h = await harness();
    await h.trunk();
    const p = await phone('127.0.0.2');
    const call = await p.dial(h.target('+14155550100'));
    expect((await call.outcome).status).toBe(403);
    expect(await records(h)).toHaveLength(0);
    expect(h.pool.inUse).toBe(0);
  });

  it('404 for a number no trunk has, from an allowed source', async () => {
    h = await harness();
    await h.trunk();
    const p = await phone();
    expect((await (await p.dial(h.target('+14155559999'))).outcome).status).toBe(404);
    expect(await records(h)).toHaveLength(0);
  });

  it('480 for a known number without an inbound assistant (recorded as failed)', async () => {
    h = await harness();
    await h.trunk();
    const p = await phone();
    expect((await (await p.dial(h.target('+14155550100'))).outcome).status).toBe(480);
    const [rec] = await records(h);
    expect(rec).toMatchObject({ status: 'failed', end_cause: 'no-inbound-assistant' });
  });

  it('402 when the balance cannot pay for a minute', async () => {
    h = await harness({}, 0);
    const trunk = await h.trunk();
    await h.assistant(trunk.phoneNumberId);
    const p = await phone();
    expect((await (await p.dial(h.target('14155550100'))).outcome).status).toBe(402);
    const [rec] = await records(h);
    expect(rec).toMatchObject({ status: 'failed', end_cause: 'insufficient-balance' });
    expect(h.pool.inUse).toBe(0);
  });

  it('routes by the trunk calling format (national) and records DTMF as events', async () => {
    h = await harness();
    const trunk = await h.trunk({ phone_number: '+442071838750', sip_calling_format: 'national', country_code: 'GB' });
    await h.assistant(trunk.phoneNumberId);
    const p = await phone();
    const call = await p.call(h.target('02071838750'));
    const session = h.server.registry.list()[0]!;
    const digits: string[] = [];
    session.on('dtmf', (e) => digits.push(e.digit));
    call.rtp.play(() => undefined);
    await sleep(100);
    await call.rtp.sendDtmf('5');
    await call.rtp.sendDtmf('#');
    await until(() => digits.length === 2, 2000, 'DTMF');
    expect(digits).toEqual(['5', '#']);
    await call.hangup();
    await until(() => h!.server.registry.size === 0);
    const [rec] = await records(h);
    expect(rec).toMatchObject({ status: 'completed', to_number: '+442071838750', assistant_id: expect.any(Number) });
    const events = (await h.ctx.repos.calls.getById(rec!.id))!.details!.events as Array<{ digit: string }>;
    expect(events.map((e) => e.digit)).toEqual(['5', '#']);
  });

  it('CANCEL before answer: 487 and a canceled record', async () => {
    h = await harness({ answerDelayMs: 2000 });
    const trunk = await h.trunk();
    await h.assistant(trunk.phoneNumberId);
    const p = await phone();
    const call = await p.dial(h.target('+14155550100'));
    await until(() => call.provisional.includes(180), 2000, '180');
    call.cancel();
    expect((await call.outcome).status).toBe(487);
    await until(() => h!.server.registry.size === 0);
    const [rec] = await records(h);
    expect(rec).toMatchObject({ status: 'canceled', end_cause: 'cancelled', answered_at: null });
    expect(h.pool.inUse).toBe(0);
  });

  it('BYE from the engine at max duration', async () => {
    h = await harness({ limits: { maxCallMs: 700 } });
    const trunk = await h.trunk();
    await h.assistant(trunk.phoneNumberId);
    const p = await phone();
    const call = await p.call(h.target('+14155550100'));
    expect(await call.ended).toBe('remote-bye');
    await until(() => h!.server.registry.size === 0);
    const [rec] = await records(h);
    expect(rec).toMatchObject({ status: 'completed', end_cause: 'max-duration' });
  });

  it('re-INVITE puts the call on hold and back', async () => {
    h = await harness();
    await h.trunk();
    const p = await phone();
    const call = await p.call(h.target('echo'));
    call.rtp.playTone(400, 3000);
    await until(() => call.rtp.packetsReceived > 10, 2000, 'media');
    expect(await call.reinvite('sendonly')).toBe(200);
    await sleep(100);
    const onHold = call.rtp.packetsReceived;
    await sleep(300);
    // On hold (they receive only) the engine sends nothing.
    expect(call.rtp.packetsReceived - onHold).toBeLessThanOrEqual(1);
    expect(await call.reinvite('sendrecv')).toBe(200);
    await until(() => call.rtp.packetsReceived > onHold + 10, 2000, 'media after unhold');
    await call.hangup();
  });

  it('survives packet loss and reordering, and reports it in the record', async () => {
    h = await harness();
    await h.trunk();
    const p = await phone();
    const call = await p.call(h.target('echo'));
    call.rtp.impairments = { loss: 0.1, reorder: 0.1 };
    call.rtp.playTone(400, 1500);
    await sleep(1700);
    // Concealment fills the gaps: most frames still carry the tone.
    expect(toneShare(call.heard.slice(3200, 7200), 400)).toBeGreaterThan(0.5);
    await call.hangup();
    await until(() => h!.server.registry.size === 0);
    const [rec] = await records(h);
    expect(rec!.quality.packets_lost + rec!.quality.concealed_frames).toBeGreaterThan(0);
  });

  it('hangs up a call whose media stopped (RTP timeout)', async () => {
    h = await harness({ rtpTimeoutMs: 300 });
    await h.trunk();
    const p = await phone();
    const call = await p.call(h.target('echo'));
    call.rtp.playTone(400, 200);
    await sleep(200);
    call.rtp.stop(); // a dead leg: no more packets
    expect(await call.ended).toBe('remote-bye');
    await until(() => h!.server.registry.size === 0);
    expect((await records(h))[0]).toMatchObject({ status: 'completed', end_cause: 'rtp-timeout' });
  });

  it('drain hangs up live calls and refuses new ones', async () => {
    h = await harness();
    await h.trunk();
    const p = await phone();
    const call = await p.call(h.target('echo'));
    const draining = h.server.drain(0);
    expect(await call.ended).toBe('remote-bye');
    await draining;
    expect((await (await p.dial(h.target('echo'))).outcome).status).toBe(503);
    expect((await records(h))[0]).toMatchObject({ end_cause: 'shutdown' });
  });
});
