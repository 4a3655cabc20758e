import { afterEach, describe, expect, it } from 'vitest';
import { parseSdp } from '../../../src/media/sdp.ts';
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

async function phone(host: string): Promise<TestPhone> {
  const p = await TestPhone.create({ host });
  phones.push(p);
  return p;
}

/** Calls `echo` at `target`, plays a tone, checks it comes back; returns the engine's SDP answer. */
async function echoCall(p: TestPhone, target: string, hz: number): Promise<string> {
  const call = await p.call(target);
  call.rtp.playTone(hz, 1200);
  await sleep(1500);
  // Skip the first 400 ms heard (echo delay + jitter buffer fill), judge the tone after it.
  const heard = call.heard.slice(3200, 3200 + 4000);
  expect(heard.length).toBeGreaterThan(3000);
  expect(toneShare(heard, hz)).toBeGreaterThan(0.8);
  const answer = call.dialog!.remoteSdp!;
  expect(await call.hangup()).toBe(200);
  await until(() => h!.server.registry.size === 0, 3000, 'call ended');
  return answer;
}

function connection(sdp: string): { address: string | undefined; origin: string } {
  const doc = parseSdp(sdp)!;
  return { address: doc.media[0]!.address, origin: /^o=.*$/m.exec(sdp)![0] };
}

describe('calls over IPv6', () => {
  it('an engine on ::1 answers a call from ::1 to echo with c=IN IP6 ::1, and the caller hears the tone back', async () => {
    h = await harness({}, 10, { sipHost: '::1', rtpHost: '::1' });
    await h.trunk({ allowed_inbound_ips: ['::1'] });
    const p = await phone('::1');
    const answer = await echoCall(p, h.target('echo'), 400);
    expect(answer).toMatch(/^c=IN IP6 ::1\r?$/m);
    expect(connection(answer)).toEqual({ address: '::1', origin: expect.stringMatching(/ IN IP6 ::1$/) });
  });

  it('a dual-stack engine on :: takes a call from 127.0.0.1 (answered with IPv4) and one from ::1 (answered with IPv6)', async () => {
    h = await harness({}, 10, { sipHost: '::', rtpHost: '::', publicHost: '127.0.0.1', publicHost6: '::1' });
    await h.trunk({ allowed_inbound_ips: ['127.0.0.1', '::1'] });
    const v4 = await phone('127.0.0.1');
    const answer4 = await echoCall(v4, h.target('echo', '127.0.0.1'), 400);
    expect(connection(answer4)).toEqual({ address: '127.0.0.1', origin: expect.stringMatching(/ IN IP4 127\.0\.0\.1$/) });
    const v6 = await phone('::1');
    const answer6 = await echoCall(v6, h.target('echo', '::1'), 600);
    expect(connection(answer6)).toEqual({ address: '::1', origin: expect.stringMatching(/ IN IP6 ::1$/) });
  });

  it('an outbound call through a trunk whose carrier is at an IPv6 address: the INVITE reaches [::1], and media flows', async () => {
    h = await harness({}, 10, { sipHost: '::', rtpHost: '::', publicHost: '127.0.0.1', publicHost6: '::1' });
    const carrier = await phone('::1');
    const trunk = await h.trunk({ sip_address: '::1', allowed_inbound_ips: ['::1'] });
    // Stored without brackets, as the API keeps it; the port is the test carrier's (a trunk's
    // sip_address has none, so tests give it here).
    expect(trunk.live.spec.address).toBe('::1');
    trunk.live.spec.address = `[::1]:${carrier.port}`;
    const assistant = await h.assistant(null, { ringing_time: 5 }, 'outbound');
    const res = await h.req('POST', '/user/calls', { assistant_id: assistant, phone_number_id: trunk.phoneNumberId, to: '+14155550199' });
    expect(res.status).toBe(201);
    await until(() => carrier.answered.length === 1, 3000, 'answer');
    const invite = carrier.incoming[0]!;
    expect(invite.request.uri).toBe(`sip:+14155550199@[::1]:${carrier.port}`);
    expect(invite.from).toMatch(/@\[::1\]>/);
    const call = carrier.answered[0]!;
    call.rtp.playTone(400, 400);
    await until(() => call.rtp.packetsReceived > 5, 3000, 'engine media');
    await call.hangup();
    await until(() => h!.server.registry.size === 0, 3000, 'call ended');
  });
});
