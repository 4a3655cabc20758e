/**
 * Calls we place and registrations we keep toward carriers at IPv6 addresses: the SDP offer,
 * Via and Contact name SIP_PUBLIC_HOST6 when the place the request goes to is IPv6 (a bracketed
 * literal or a name with only AAAA records), SIP_PUBLIC_HOST when it is IPv4; with no IPv6 host
 * the call ends `no-public-ipv6` and the registration fails 503 without a byte sent; INVITEs
 * from an IPv6 registrar are trusted whatever spelling its address was configured in.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { dialLeg } from '../../../src/call/control/leg.ts';
import { parseSdp } from '../../../src/media/sdp.ts';
import { header } from '../../../src/sip/message.ts';
import { dnsAt } from '../../../src/sip/locate.ts';
import { DnsStandIn } from '../../support/dns-stand-in.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { TestRegistrar } from '../../support/test-registrar.ts';
import { harness, until, type Harness, type HarnessNet } from './harness.ts';

let h: Harness | undefined;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await h?.close();
  h = undefined;
});

const DUAL: HarnessNet = { sipHost: '::', rtpHost: '::', publicHost: '127.0.0.1', publicHost6: '::1' };
/** Listening on both families, but told no IPv6 address to advertise. */
const DUAL_NO_HOST6: HarnessNet = { sipHost: '::', rtpHost: '::', publicHost: '127.0.0.1' };

async function carrierAt(host: string): Promise<TestPhone> {
  const p = await TestPhone.create({ host, userName: 'carrier' });
  cleanups.unshift(() => p.close());
  return p;
}

async function outboundTrunk(address: string) {
  const trunk = await h!.trunk({ allowed_inbound_ips: ['127.0.0.1', '::1'] });
  trunk.live.spec.address = address;
  const assistant = await h!.assistant(null, { ringing_time: 5 }, 'outbound');
  return { trunk, assistant };
}

async function place(assistant: number, phoneNumberId: number): Promise<number> {
  const res = await h!.req('POST', '/user/calls', { assistant_id: assistant, phone_number_id: phoneNumberId, to: '+14155550199' });
  expect(res.status).toBe(201);
  return res.body.id as number;
}

async function finalRecord(id: number): Promise<Record<string, any>> {
  let rec: Record<string, any> = {};
  await until(async () => {
    rec = (await h!.req('GET', `/user/calls/${id}`)).body;
    return !['queued', 'ringing', 'in-progress'].includes(rec.status);
  }, 5000, 'final status');
  return rec;
}

/** The carrier answers, both sides send audio, the carrier hangs up; returns the INVITE it got. */
async function answeredCall(carrier: TestPhone, id: number) {
  await until(() => carrier.answered.length === 1, 3000, 'answer');
  const call = carrier.answered[0]!;
  call.rtp.playTone(400, 600);
  await until(() => call.rtp.packetsReceived > 5, 3000, 'engine media at the carrier');
  await until(() => (h!.server.registry.list()[0]?.media.stats().packetsReceived ?? 0) > 5, 3000, 'carrier media at the engine');
  await call.hangup();
  expect(await finalRecord(id)).toMatchObject({ status: 'completed', end_cause: 'remote-hangup' });
  return carrier.incoming[0]!;
}

function connectionOf(sdp: string): { address: string | undefined; origin: string } {
  return { address: parseSdp(sdp).media[0]!.address, origin: /^o=.*$/m.exec(sdp)![0] };
}

describe('outbound calls to IPv6 carriers', () => {
  it('a carrier at a bracketed IPv6 literal gets c=IN IP6, Via and Contact of SIP_PUBLIC_HOST6, and media flows both ways', async () => {
    h = await harness({}, 10, DUAL);
    const carrier = await carrierAt('::1');
    const { trunk, assistant } = await outboundTrunk(`[::1]:${carrier.port}`);
    const invite = await answeredCall(carrier, await place(assistant, trunk.phoneNumberId));
    expect(invite.offer).toMatch(/^c=IN IP6 ::1\r?$/m);
    expect(invite.offer).not.toMatch(/IN IP4/);
    expect(connectionOf(invite.offer!)).toEqual({ address: '::1', origin: expect.stringMatching(/ IN IP6 ::1$/) });
    expect(header(invite.request, 'via')).toMatch(/^SIP\/2.0\/UDP \[::1\]:/);
    expect(header(invite.request, 'contact')).toMatch(/^<sip:switchboard@\[::1\]:\d+>$/);
  });

  it('a carrier named by a domain with only an AAAA record (DNS stand-in) is offered IPv6', async () => {
    const carrier = await carrierAt('::1');
    const dns = await DnsStandIn.start({ aaaa: { 'v6.carrier.test': ['::1'] } });
    cleanups.push(() => dns.close());
    h = await harness({ dns: dnsAt([dns.server]) }, 10, DUAL);
    const { trunk, assistant } = await outboundTrunk(`v6.carrier.test:${carrier.port}`);
    const invite = await answeredCall(carrier, await place(assistant, trunk.phoneNumberId));
    expect(dns.queries.map((q) => `${q.type} ${q.name}`)).toContain('AAAA v6.carrier.test');
    expect(invite.source.address).toBe('::1');
    expect(connectionOf(invite.offer!).address).toBe('::1');
    expect(header(invite.request, 'contact')).toMatch(/@\[::1\]:/);
  });

  it('the same dual-stack engine offers c=IN IP4 SIP_PUBLIC_HOST to an IPv4 carrier', async () => {
    h = await harness({}, 10, DUAL);
    const carrier = await carrierAt('127.0.0.1');
    const { trunk, assistant } = await outboundTrunk(`127.0.0.1:${carrier.port}`);
    const invite = await answeredCall(carrier, await place(assistant, trunk.phoneNumberId));
    expect(connectionOf(invite.offer!)).toEqual({ address: '127.0.0.1', origin: expect.stringMatching(/ IN IP4 127\.0\.0\.1$/) });
    expect(header(invite.request, 'contact')).toMatch(/@127\.0\.0\.1:/);
  });

  it('with no IPv6 public host, a call to an IPv6 carrier ends no-public-ipv6 and nothing is sent to it', async () => {
    h = await harness({}, 10, DUAL_NO_HOST6);
    const carrier = await carrierAt('::1');
    const { trunk, assistant } = await outboundTrunk(`[::1]:${carrier.port}`);
    const rec = await finalRecord(await place(assistant, trunk.phoneNumberId));
    expect(rec).toMatchObject({ status: 'failed', end_cause: 'no-public-ipv6' });
    expect(carrier.incoming).toHaveLength(0);
    expect(h.server.registry.size).toBe(0);
  });
});

describe('transfer legs to IPv6 carriers', () => {
  const legDeps = () => ({ ua: h!.server.ua, clock: h!.server.env.clock, createMedia: h!.server.env.createMedia });

  it('a leg dialled through a trunk at an IPv6 carrier offers c=IN IP6 SIP_PUBLIC_HOST6 and its media flows', async () => {
    h = await harness({}, 10, DUAL);
    const carrier = await carrierAt('::1');
    const { trunk } = await outboundTrunk(`[::1]:${carrier.port}`);
    const dialed = await dialLeg(legDeps(), { trunk: trunk.live, to: '+14155550123', ringingMs: 3000 });
    expect(dialed.ok).toBe(true);
    if (!dialed.ok) return;
    const invite = carrier.incoming[0]!;
    expect(connectionOf(invite.offer!)).toEqual({ address: '::1', origin: expect.stringMatching(/ IN IP6 ::1$/) });
    expect(header(invite.request, 'contact')).toMatch(/@\[::1\]:/);
    const call = carrier.answered[0]!;
    call.rtp.playTone(400, 400);
    await until(() => dialed.leg.media.stats().packetsReceived > 5, 3000, 'carrier media on the leg');
    await dialed.leg.hangup();
  });

  it('with no IPv6 public host, the leg fails with cause no-public-ipv6 and nothing reaches the carrier', async () => {
    h = await harness({}, 10, DUAL_NO_HOST6);
    const carrier = await carrierAt('::1');
    const { trunk } = await outboundTrunk(`[::1]:${carrier.port}`);
    const dialed = await dialLeg(legDeps(), { trunk: trunk.live, to: '+14155550123', ringingMs: 3000 });
    expect(dialed).toMatchObject({ ok: false, reason: 'failed', cause: 'no-public-ipv6' });
    expect(carrier.incoming).toHaveLength(0);
  });
});

describe('registration with an IPv6 registrar', () => {
  async function registered(registrarAddress: (r: TestRegistrar) => string, net: HarnessNet) {
    h = await harness({}, 10, net);
    const registrar = await TestRegistrar.start('::1', 'trunkuser', 'trunk-secret');
    cleanups.push(() => registrar.close());
    const trunk = await h.trunk({ inbound_authorization_type: 'auth', allowed_inbound_ips: null, sip_address: '::1' });
    trunk.live.spec.address = registrarAddress(registrar);
    h.server.registrations.sync();
    return { registrar, trunk };
  }

  it('REGISTERs name SIP_PUBLIC_HOST6 in Contact and Via, refreshes keep it, and INVITEs from the registrar (configured in expanded form) are its trunk’s calls', async () => {
    const { registrar, trunk } = await registered((r) => `[0:0:0:0:0:0:0:1]:${r.socket.address().port}`, DUAL);
    await until(() => h!.server.registrations.list()[0]?.state === 'registered', 3000, 'registered');
    await until(() => registrar.accepted >= 2, 3000, 'refresh');
    for (const reg of registrar.registers) {
      expect(header(reg, 'contact')).toBe(`<sip:${trunk.live.inboundTrunkId}@[::1]:${h!.server.port}>`);
      expect(header(reg, 'via')).toMatch(/^SIP\/2.0\/UDP \[::1\]:/);
    }
    expect(new Set(registrar.registers.map((r) => header(r, 'call-id'))).size).toBe(1);

    // The provider calls from the registrar's address: no challenge, the trunk's assistant answers.
    await h!.assistant(trunk.phoneNumberId);
    const provider = await TestPhone.create({ host: '::1' });
    cleanups.unshift(() => provider.close());
    const call = await provider.dial(`sip:${trunk.live.inboundTrunkId}@[::1]:${h!.server.port}`);
    expect((await call.outcome).status).toBe(200);
    expect(h!.server.registry.size).toBe(1);
    await call.hangup();
  });

  it('with no IPv6 public host, the registration fails 503 naming why, and no REGISTER reaches the registrar', async () => {
    const { registrar } = await registered((r) => r.address, DUAL_NO_HOST6);
    await until(() => h!.server.registrations.list()[0]?.state === 'failed', 3000, 'failed');
    expect(h!.server.registrations.list()[0]).toMatchObject({ state: 'failed', lastStatus: 503 });
    expect(registrar.registers).toHaveLength(0);
  });
});
