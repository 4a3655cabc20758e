/**
 * baresip ⇄ our SIP stack and RtpSession, in-process (no engine wiring): baresip calls our echo
 * UAS, and our UAC calls baresip in auto-answer mode. Real SIP over UDP, real RTP both ways.
 */
import { describe, it } from 'vitest';
import { Baresip } from './support/baresip.ts';
import { MediaUa, to8k } from './support/media-ua.ts';
import { findTone, heardTone, teardown, toneWav, waitFor, within } from './support/tools.ts';

// Every test has its own UA, ports and peer processes, so the tests of a file run concurrently.
describe.concurrent('baresip ⇄ our UserAgent + RtpSession', () => {
  it('baresip calls our echo UAS: call set up, its tone comes back, its BYE ends the call', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start();
    cleanups.push(() => engine.close());
    // baresip hangs up when its 2.5 s source file ends.
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2) });
    cleanups.push(() => peer.stop());

    await peer.dial(engine.uri('echo'));
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    const call = await engine.call(0);
    expect(call.direction).toBe('inbound');
    expect(call.media.codec.name).toBe('PCMU');

    const reason = await within(call.ended, 8000, 'baresip to hang up');
    expect(reason).toBe('remote-bye');
    await peer.waitEvent('CALL_CLOSED', 3000);

    // We heard its tone...
    const heard = findTone(to8k(call.heard()), 440, 8000);
    expect(heardTone(heard), JSON.stringify(heard)).toBe(true);
    const stats = call.stats();
    expect(stats.packetsReceived).toBeGreaterThan(50);
    expect(stats.packetsSent).toBeGreaterThan(50);
    // ...and it heard its tone echoed back.
    const recording = peer.recording();
    expect(recording.sampleRate).toBe(8000);
    const echoed = findTone(recording.samples, 440, recording.sampleRate);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
    expect(engine.ua.stats.dialogs).toBe(0);
  });

  it.for([
    ['PCMA', 8000, 1],
    ['G722', 16000, 1],
    ['OPUS', 48000, 2],
  ] as const)('baresip offering only %s: we answer with it and echo its tone', async ([codec, rate, channels], { expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start();
    cleanups.push(() => engine.close());
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2, rate, channels), codecs: [codec], sampleRate: rate, channels });
    cleanups.push(() => peer.stop());

    await peer.dial(engine.uri('echo'));
    const call = await engine.call(0);
    expect(call.media.codec.name.toUpperCase()).toBe(codec);
    expect(await within(call.ended, 8000, 'baresip to hang up')).toBe('remote-bye');
    await peer.waitEvent('CALL_CLOSED', 3000);
    const recording = peer.recording();
    expect(recording.sampleRate).toBe(rate);
    const echoed = findTone(recording.samples, 440, recording.sampleRate);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
  });

  it('our UAC calls baresip (auto-answer): audio both ways, our BYE ends it', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ userName: 'switchboard' });
    cleanups.push(() => engine.close());
    const peer = await Baresip.start({ sourceWav: toneWav(440, 10) });
    cleanups.push(() => peer.stop());

    const call = await engine.dial(peer.uri, 1000);
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    expect(call.media.codec.name).toBe('PCMU');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await call.hangup()).toBe(200);
    expect(await call.ended).toBe('local-bye');
    await peer.waitEvent('CALL_CLOSED', 3000);

    const heard = findTone(to8k(call.heard()), 440, 8000);
    expect(heardTone(heard), JSON.stringify(heard)).toBe(true);
    const recording = peer.recording();
    const ours = findTone(recording.samples, 1000, recording.sampleRate);
    expect(heardTone(ours), JSON.stringify(ours)).toBe(true);
  });
});

describe.concurrent('baresip ⇄ our UserAgent: transports and call flows', () => {
  it('baresip calls our echo UAS over TCP', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start();
    cleanups.push(() => engine.close());
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2), transports: ['udp', 'tcp'] });
    cleanups.push(() => peer.stop());

    await peer.dial(`${engine.uri('echo')};transport=tcp`);
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    const invite = await engine.invite(0);
    expect(invite.source.transport).toBe('tcp');
    const call = await engine.call(0);
    expect(await within(call.ended, 8000, 'baresip to hang up')).toBe('remote-bye');
    const recording = peer.recording();
    const echoed = findTone(recording.samples, 440, recording.sampleRate);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
  });

  it('baresip hangs up while we ring: CANCEL, 487, nothing left behind', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ answer: 'ring' });
    cleanups.push(() => engine.close());
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2) });
    cleanups.push(() => peer.stop());

    await peer.dial(engine.uri('echo'));
    await peer.waitEvent('CALL_RINGING', 5000);
    const invite = await engine.invite(0);
    const cancelled = new Promise<void>((resolve) => invite.once('cancel', () => resolve()));
    await peer.hangup();
    await within(cancelled, 5000, 'the CANCEL');
    expect(invite.state).toBe('cancelled');
    await peer.waitEvent('CALL_CLOSED', 5000);
    await waitFor(() => engine.ua.stats.pending === 0, 'the cancelled INVITE to be released', 5000);
    expect(engine.ua.stats.dialogs).toBe(0);
    expect(engine.calls).toHaveLength(0);
  });
});
