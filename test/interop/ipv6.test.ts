/**
 * baresip over IPv6 against the real engine (startEngine from src/main.ts) listening dual-stack
 * on `::`, advertising 127.0.0.1 to IPv4 peers and ::1 to IPv6 ones (SIP_PUBLIC_HOST6): baresip
 * on ::1 calls the echo number at [::1] and hears itself; baresip on 127.0.0.1 does the same on
 * the same port. The `ip` trunk trusts both loopback addresses.
 */
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { Baresip } from './support/baresip.ts';
import { ipTrunkBody, startTestEngine, type TestEngine } from './support/engine.ts';
import { findTone, heardTone, teardown, toneWav } from './support/tools.ts';

let t: TestEngine;
let trunk: { id: number };

beforeAll(async () => {
  t = await startTestEngine({ sipHost: '::', publicHost: '127.0.0.1', publicHost6: '::1' });
  trunk = (await t.create('/user/sip-trunks', ipTrunkBody('+14155550100', { allowed_inbound_ips: ['127.0.0.1', '::1'] }))).data;
});
afterAll(async () => {
  await t?.close();
});

async function echoCall(host: string, target: string, user: string, expect: ExpectStatic, cleanups: ReturnType<typeof teardown>) {
  const peer = await Baresip.start({ sourceWav: toneWav(440, 2), user, host, sipTrace: true });
  cleanups.push(() => peer.stop());
  await peer.dial(target);
  await peer.waitEvent('CALL_ESTABLISHED', 5000);
  await peer.waitEvent('CALL_CLOSED', 8000);
  const recording = peer.recording();
  const echoed = findTone(recording.samples, 440, recording.sampleRate);
  expect(heardTone(echoed), `${JSON.stringify(echoed)}\n${peer.output}`).toBe(true);
  const list = await t.api('GET', '/user/calls?limit=50');
  const call = (list.body as Array<Record<string, unknown>>).find((c) => c.to_number === 'echo' && String(c.from_number).includes(user));
  expect(call, JSON.stringify(list.body)).toBeDefined();
  const record = await t.waitCall(Number(call!.id), (c) => c.ended_at !== null);
  expect(record).toMatchObject({ direction: 'inbound', status: 'completed', codec: 'PCMU', sip_trunk_id: trunk.id });
  return peer;
}

describe('engine on :: ⇐ baresip over IPv6 and IPv4', () => {
  it('baresip on ::1 calls the echo number at [::1]: hears itself, its BYE completes the record', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await echoCall('::1', `sip:echo@[::1]:${t.sipPort}`, 'baresip-v6', expect, cleanups);
    // Our 200 (in its SIP trace) named our IPv6 address for signalling and media.
    expect(peer.output).toMatch(/^Contact: <sip:switchboard@\[::1\]:\d+>/im);
    expect(peer.output).toMatch(/^c=IN IP6 ::1\r?$/m);
    expect(peer.output).not.toMatch(/^c=IN IP4/m);
  });

  it('baresip on 127.0.0.1 calls the same port: hears itself', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await echoCall('127.0.0.1', `sip:echo@127.0.0.1:${t.sipPort}`, 'baresip-v4', expect, cleanups);
    expect(peer.output).toMatch(/^Contact: <sip:switchboard@127\.0\.0\.1:\d+>/im);
    expect(peer.output).not.toMatch(/^c=IN IP6/m);
  });
});
