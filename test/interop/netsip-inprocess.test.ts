/**
 * Net::SIP (Perl) ⇄ our SIP stack and RtpSession, in-process (no engine wiring): Net::SIP calls
 * our echo UAS, and our UAC calls a Net::SIP answerer. Real SIP over UDP, real PCMU RTP.
 */
import { describe, it } from 'vitest';
import { MediaUa, to8k } from './support/media-ua.ts';
import { NetSipPeer } from './support/netsip.ts';
import { findTone, heardTone, teardown, within } from './support/tools.ts';

// Every test has its own UA, ports and peer processes, so the tests of a file run concurrently.
describe.concurrent('Net::SIP ⇄ our UserAgent + RtpSession', () => {
  it('Net::SIP calls our echo UAS: its tone comes back, its BYE gets 200', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start();
    cleanups.push(() => engine.close());
    const peer = await NetSipPeer.call({ to: engine.uri('echo'), toneHz: 600, seconds: 2 });
    cleanups.push(() => peer.stop());

    await peer.waitEvent('established', 5000);
    const call = await engine.call(0);
    expect(call.media.codec.name).toBe('PCMU');
    const reason = await within(call.ended, 8000, 'the Net::SIP BYE');
    expect(reason).toBe('remote-bye');
    expect((await peer.waitEvent('bye', 3000)).code).toBe(200);
    expect(await peer.finished()).toBe(0);

    const heard = findTone(to8k(call.heard()), 600, 8000);
    expect(heardTone(heard), JSON.stringify(heard)).toBe(true);
    const echoed = findTone(peer.heard(), 600, 8000);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
    expect(engine.ua.stats.dialogs).toBe(0);
  });

  it('our UAC calls Net::SIP: audio both ways, our BYE ends it', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ userName: 'switchboard' });
    cleanups.push(() => engine.close());
    const peer = await NetSipPeer.answer({ toneHz: 600 });
    cleanups.push(() => peer.stop());

    const call = await engine.dial(peer.uri, 1000);
    await peer.waitEvent('established', 5000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await call.hangup()).toBe(200);
    expect(await call.ended).toBe('local-bye');
    await peer.waitEvent('peer-bye', 3000);
    expect(await peer.finished()).toBe(0);

    const heard = findTone(to8k(call.heard()), 600, 8000);
    expect(heardTone(heard), JSON.stringify(heard)).toBe(true);
    const ours = findTone(peer.heard(), 1000, 8000);
    expect(heardTone(ours), JSON.stringify(ours)).toBe(true);
  });

  it('Net::SIP hangs up a call our UAC placed: its BYE ends our dialog', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ userName: 'switchboard' });
    cleanups.push(() => engine.close());
    const peer = await NetSipPeer.answer({ toneHz: 600, hangupAfter: 1 });
    cleanups.push(() => peer.stop());

    const call = await engine.dial(peer.uri, 1000);
    expect(await within(call.ended, 6000, 'the Net::SIP BYE')).toBe('remote-bye');
    expect(await peer.finished()).toBe(0);
    expect(call.stats().packetsReceived).toBeGreaterThan(30);
  });
});

describe.concurrent('Net::SIP ⇄ our RtpSession: RFC 4733 DTMF', () => {
  it('digits from Net::SIP reach our session, and ours reach Net::SIP', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start();
    cleanups.push(() => engine.close());
    const peer = await NetSipPeer.call({ to: engine.uri('echo'), toneHz: 600, seconds: 2, dtmf: '159#', dtmfAt: 0.3 });
    cleanups.push(() => peer.stop());

    await peer.waitEvent('established', 5000);
    const call = await engine.call(0);
    expect(call.media.dtmfPayloadType, 'telephone-event negotiated').toBeDefined();
    await peer.waitEvent('dtmf-sent', 4000);
    await call.session.sendDtmf('*7', { durationMs: 120, gapMs: 80 });
    expect(await within(call.ended, 6000, 'the Net::SIP BYE')).toBe('remote-bye');
    expect(await peer.finished()).toBe(0);
    expect(call.dtmf.join('')).toBe('159#');
    expect(peer.dtmfReceived).toBe('*7');
  });
});
