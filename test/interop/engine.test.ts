/**
 * Third-party SIP stacks against the real engine (startEngine from src/main.ts): an account, an
 * `ip` SIP trunk for 127.0.0.1 and assistants created through the REST API; baresip and Net::SIP
 * call the diagnostics numbers and the trunk's number; POST /user/calls calls them back.
 *
 * The diagnostics calls are independent and run concurrently. The rest run in order: the trunk
 * number gets its inbound assistant half-way, and a trunk's sip_address is a host without a port
 * (the API's trunk schema), so the engine's outbound INVITEs go to 127.0.0.1:5060, where the answering
 * peer has to listen, one at a time.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { Baresip } from './support/baresip.ts';
import { assistantBody, ipTrunkBody, startTestEngine, type TestEngine } from './support/engine.ts';
import { NetSipPeer } from './support/netsip.ts';
import { findTone, freePortCheck, heardTone, teardown, toneWav, within } from './support/tools.ts';

const TRUNK_NUMBER = '+14155550100';
/** The number POST /user/calls dials; with sip_calling_format e164 the INVITE goes to sip:14155550199@127.0.0.1. */
const PEER_NUMBER = '+14155550199';
const PEER_USER = '14155550199';
const PEER_PORT = 5060;

let t: TestEngine;
let trunk: { id: number; phone_number_id: number };
let outboundAssistant: number;

beforeAll(async () => {
  t = await startTestEngine();
  trunk = (await t.create('/user/sip-trunks', ipTrunkBody(TRUNK_NUMBER))).data;
  outboundAssistant = (await t.create('/user/assistant', assistantBody('outbound', trunk.phone_number_id, { ringing_time: 10 }))).data.id;
});
afterAll(async () => {
  await t?.close();
});

/** The newest inbound call record to `toNumber` from the caller user `from`. */
async function inboundCall(toNumber: string, from: string): Promise<Record<string, unknown>> {
  const list = await t.api('GET', '/user/calls?limit=50');
  const call = (list.body as Array<Record<string, unknown>>).find((c) => c.direction === 'inbound' && c.to_number === toNumber && String(c.from_number).includes(from));
  if (!call) throw new Error(`no inbound call to ${toNumber} from ${from} in ${JSON.stringify(list.body)}`);
  return call;
}

describe.concurrent('engine ⇐ third-party callers: diagnostics numbers', () => {
  it('baresip calls the echo number: hears itself, its BYE completes the call record', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2), user: 'baresip-echo' });
    cleanups.push(() => peer.stop());
    await peer.dial(`sip:echo@127.0.0.1:${t.sipPort}`);
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    await peer.waitEvent('CALL_CLOSED', 8000);

    const recording = peer.recording();
    const echoed = findTone(recording.samples, 440, recording.sampleRate);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
    const record = await t.waitCall(Number((await inboundCall('echo', 'baresip-echo')).id), (c) => c.ended_at !== null);
    expect(record).toMatchObject({ direction: 'inbound', status: 'completed', codec: 'PCMU', sip_trunk_id: trunk.id });
  });

  it('Net::SIP calls the echo number: hears itself, its BYE gets 200', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await NetSipPeer.call({ to: `sip:echo@127.0.0.1:${t.sipPort}`, toneHz: 600, seconds: 2 });
    cleanups.push(() => peer.stop());
    await peer.waitEvent('established', 5000);
    expect((await peer.waitEvent('bye', 6000)).code).toBe(200);
    expect(await peer.finished()).toBe(0);
    const echoed = findTone(peer.heard(), 600, 8000);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
  });

  it('Net::SIP re-INVITEs a call to the echo number mid-call: 200, and the echo carries on', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await NetSipPeer.call({ to: `sip:echo@127.0.0.1:${t.sipPort}`, toneHz: 600, seconds: 2.5, reinviteAt: 0.6 });
    cleanups.push(() => peer.stop());
    await peer.waitEvent('established', 5000);
    const reinvite = await peer.waitEvent('reinvite', 4000);
    expect(reinvite).toMatchObject({ status: 'OK', code: 200 });
    expect(await peer.finished()).toBe(0);
    // Net::SIP restarts its RTP on the new session; the echo must follow it.
    const heard = peer.heard();
    // From 1 s in (re-INVITE answered, RTP restarted, 200 ms echo delay passed) to the end at 2.5 s.
    const after = findTone(heard.subarray(8000), 600, 8000);
    expect(heardTone(after, 400, 0.25), JSON.stringify(after)).toBe(true);
  });

  it('Net::SIP puts a call to the echo number on hold (c=0.0.0.0): 200, and the engine stops sending', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await NetSipPeer.call({ to: `sip:echo@127.0.0.1:${t.sipPort}`, toneHz: 600, seconds: 2.5, reinviteAt: 1, hold: true });
    cleanups.push(() => peer.stop());
    await peer.waitEvent('established', 5000);
    expect(await peer.waitEvent('reinvite', 4000)).toMatchObject({ status: 'OK', code: 200 });
    expect(await peer.finished()).toBe(0);
    const done = peer.events.find((e) => e.event === 'done');
    // About 1 s of audio before the hold (50 packets), nothing during the remaining 1.5 s
    // (a 2.5 s call without hold brings 125).
    expect(done?.packets ?? 0).toBeGreaterThan(10);
    expect(done?.packets ?? 999).toBeLessThan(75);
  });

  it('Net::SIP calls the tone number: hears the 1 kHz test tone', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await NetSipPeer.call({ to: `sip:tone@127.0.0.1:${t.sipPort}`, toneHz: 600, seconds: 2 });
    cleanups.push(() => peer.stop());
    await peer.waitEvent('established', 5000);
    expect(await peer.finished()).toBe(0);
    const heard = findTone(peer.heard(), 1000, 8000);
    // One second on, one off: about half of 2 s.
    expect(heardTone(heard, 400, 0.25), JSON.stringify(heard)).toBe(true);
  });

});

describe.sequential('engine ⇐ third-party callers: the trunk number', () => {
  it('Net::SIP calls the trunk number with no inbound assistant: 480', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await NetSipPeer.call({ to: `sip:${TRUNK_NUMBER.slice(1)}@127.0.0.1:${t.sipPort}`, toneHz: 600, seconds: 1 });
    cleanups.push(() => peer.stop());
    const failed = await peer.waitEvent('failed', 5000);
    expect(failed.code).toBe(480);
  });

  it('baresip calls the trunk number once an inbound assistant has it: answered, record names the assistant (and, with no provider keys, the provider)', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const inbound = (await t.create('/user/assistant', assistantBody('inbound', trunk.phone_number_id))).data.id as number;
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2) });
    cleanups.push(() => peer.stop());
    await peer.dial(`sip:${TRUNK_NUMBER.slice(1)}@127.0.0.1:${t.sipPort}`);
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    await peer.waitEvent('CALL_CLOSED', 8000);

    const record = await t.waitCall(Number((await inboundCall(TRUNK_NUMBER, 'baresip')).id), (c) => c.ended_at !== null);
    // This engine has no provider keys: the assistant apologises and the call is recorded failed, naming the provider.
    expect(record).toMatchObject({ direction: 'inbound', status: 'failed', codec: 'PCMU', assistant_id: inbound, phone_number_id: trunk.phone_number_id });
    expect(record.end_cause).toBe('stt-unavailable: deepgram no API key');
    const quality = record.quality as Record<string, number> | null;
    expect(quality?.packets_received ?? 0, JSON.stringify(quality)).toBeGreaterThan(50);
    // The caller got RTP back it could decode (an assistant's audio, or silence with no AI engine).
    expect(peer.recording().samples.length).toBeGreaterThan(8000);
  });

  it('baresip calls a number nobody owns: 404', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const peer = await Baresip.start({ sourceWav: toneWav(440, 1) });
    cleanups.push(() => peer.stop());
    await peer.dial(`sip:15550000000@127.0.0.1:${t.sipPort}`);
    const closed = await peer.waitEvent('CALL_CLOSED', 5000);
    expect(closed.param ?? '').toMatch(/404/);
  });
});

describe.sequential('engine ⇒ third-party callees (POST /user/calls)', () => {
  it('calls baresip (auto-answer) through the trunk: answered, media flows, its BYE completes the record', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    await freePortCheck(PEER_PORT, 'baresip must listen on 127.0.0.1:5060 (trunk sip_address has no port)');
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2), user: PEER_USER, sipPort: PEER_PORT });
    cleanups.push(() => peer.stop());

    const placed = await t.create('/user/calls', { assistant_id: outboundAssistant, phone_number_id: trunk.phone_number_id, to: PEER_NUMBER });
    const id = Number((placed.data ?? placed).id);
    const established = await peer.waitEvent('CALL_ESTABLISHED', 5000);
    await within(peer.waitEvent('CALL_CLOSED', 8000), 9000, 'baresip to hang up');

    const record = await t.waitCall(id, (c) => c.ended_at !== null);
    expect(record).toMatchObject({ direction: 'outbound', status: 'completed', codec: 'PCMU', to_number: PEER_NUMBER, from_number: TRUNK_NUMBER });
    // From carries the trunk's number, as carriers expect.
    expect(established.direction).toBe('incoming');
    expect(established.peeruri ?? '').toContain(TRUNK_NUMBER.slice(1));
    const quality = record.quality as Record<string, number> | null;
    expect(quality?.packets_received ?? 0, JSON.stringify(quality)).toBeGreaterThan(50);
    expect(quality?.packets_sent ?? 0, JSON.stringify(quality)).toBeGreaterThan(50);
    // The engine sent RTP baresip could decode (comfort silence or an assistant's audio).
    expect(peer.recording().samples.length).toBeGreaterThan(8000);
  }, 30_000);

  it('calls a Net::SIP answerer through the trunk: answered, media flows, its BYE completes the record', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    await freePortCheck(PEER_PORT, 'Net::SIP must listen on 127.0.0.1:5060 (trunk sip_address has no port)');
    const peer = await NetSipPeer.answer({ toneHz: 600, sipPort: PEER_PORT, hangupAfter: 2 });
    cleanups.push(() => peer.stop());

    const placed = await t.create('/user/calls', { assistant_id: outboundAssistant, phone_number_id: trunk.phone_number_id, to: PEER_NUMBER });
    const id = Number((placed.data ?? placed).id);
    await peer.waitEvent('established', 5000);
    expect(await peer.finished(8000)).toBe(0);

    const record = await t.waitCall(id, (c) => c.ended_at !== null);
    expect(record).toMatchObject({ direction: 'outbound', status: 'completed', codec: 'PCMU' });
    const quality = record.quality as Record<string, number> | null;
    expect(quality?.packets_received ?? 0, JSON.stringify(quality)).toBeGreaterThan(50);
    expect(peer.events.find((e) => e.event === 'done')?.packets ?? 0).toBeGreaterThan(50);
  }, 30_000);
});
