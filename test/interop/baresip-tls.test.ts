/**
 * baresip ⇄ our SIP stack over TLS, both ways, with certificates a private CA issues at test time:
 * baresip calls our echo UAS on our TLS listener, and our UAC calls baresip's TLS listener,
 * verifying its certificate. Real SIP over TLS, real RTP both ways; then the same with SRTP
 * required on both sides (SDES keys, which only TLS keeps secret).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { SipTls } from '../../src/sip/tls/tls-streams.ts';
import { makeTestCa, type LeafCert, type TestCa } from '../support/tls-certs.ts';
import { Baresip } from './support/baresip.ts';
import { MediaUa, to8k } from './support/media-ua.ts';
import { findTone, heardTone, teardown, toneWav, within } from './support/tools.ts';

let ca: TestCa;
let ours: LeafCert;
let theirs: LeafCert;

beforeAll(() => {
  ca = makeTestCa();
  ours = ca.issue('switchboard', ['IP:127.0.0.1']);
  theirs = ca.issue('baresip', ['IP:127.0.0.1']);
}, 30_000);
afterAll(() => ca.remove());

const ourTls = () => new SipTls({ port: 0, certFile: ours.certFile, keyFile: ours.keyFile, caFile: ca.caFile, caOnly: true });

describe.concurrent('baresip ⇄ our UserAgent over TLS', () => {
  it('baresip calls our echo UAS over TLS: the INVITE arrives over TLS, its tone comes back', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ tls: ourTls() });
    cleanups.push(() => engine.close());
    const peer = await Baresip.start({ sourceWav: toneWav(440, 2), transports: ['udp', 'tls'], tls: { bundleFile: theirs.bundleFile, caFile: ca.caFile } });
    cleanups.push(() => peer.stop());

    await peer.dial(engine.tlsUri('echo'));
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    const call = await engine.call(0);
    expect(engine.invites[0]!.source.transport).toBe('tls');
    expect(await within(call.ended, 8000, 'baresip to hang up')).toBe('remote-bye');
    await peer.waitEvent('CALL_CLOSED', 3000);
    const heard = findTone(to8k(call.heard()), 440, 8000);
    expect(heardTone(heard), JSON.stringify(heard)).toBe(true);
    const recording = peer.recording();
    const echoed = findTone(recording.samples, 440, recording.sampleRate);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
  });

  it('our UAC calls baresip over TLS, verifying its certificate: audio both ways, our BYE ends it', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ userName: 'switchboard', tls: ourTls() });
    cleanups.push(() => engine.close());
    const peer = await Baresip.start({ sourceWav: toneWav(440, 10), transports: ['udp', 'tls'], tls: { bundleFile: theirs.bundleFile, caFile: ca.caFile } });
    cleanups.push(() => peer.stop());

    const call = await engine.dial(peer.tlsUri, 1000);
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    expect(engine.ua.stats.connections).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await call.hangup()).toBe(200);
    expect(await call.ended).toBe('local-bye');
    await peer.waitEvent('CALL_CLOSED', 3000);
    const heard = findTone(to8k(call.heard()), 440, 8000);
    expect(heardTone(heard), JSON.stringify(heard)).toBe(true);
    const recording = peer.recording();
    const ours1k = findTone(recording.samples, 1000, recording.sampleRate);
    expect(heardTone(ours1k), JSON.stringify(ours1k)).toBe(true);
  });

  it('SRTP: baresip (srtp mandatory) calls our echo UAS over TLS; the media is SRTP both ways and its tone comes back', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ tls: ourTls(), srtp: 'required' });
    cleanups.push(() => engine.close());
    const peer = await Baresip.start({
      sourceWav: toneWav(440, 2),
      transports: ['udp', 'tls'],
      tls: { bundleFile: theirs.bundleFile, caFile: ca.caFile },
      mediaenc: 'srtp-mand',
    });
    cleanups.push(() => peer.stop());

    await peer.dial(engine.tlsUri('echo'));
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    const call = await engine.call(0);
    expect(engine.invites[0]!.source.transport).toBe('tls');
    expect(engine.invites[0]!.offer).toMatch(/RTP\/SAVP/);
    expect(call.media.srtp?.suite).toMatch(/^AES_CM_128_HMAC_SHA1_(80|32)$/);
    expect(await within(call.ended, 8000, 'baresip to hang up')).toBe('remote-bye');
    await peer.waitEvent('CALL_CLOSED', 3000);
    const stats = call.stats();
    expect(stats.srtp).toBe(call.media.srtp?.suite);
    expect(stats.srtpAuthFailed).toBe(0);
    expect(stats.packetsReceived).toBeGreaterThan(50);
    const heard = findTone(to8k(call.heard()), 440, 8000);
    expect(heardTone(heard), JSON.stringify(heard)).toBe(true);
    const recording = peer.recording();
    const echoed = findTone(recording.samples, 440, recording.sampleRate);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
  });

  it('SRTP: our UAC (srtp required) calls baresip (srtp mandatory) over TLS: secured audio both ways', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ userName: 'switchboard', tls: ourTls(), srtp: 'required' });
    cleanups.push(() => engine.close());
    const peer = await Baresip.start({
      sourceWav: toneWav(440, 10),
      transports: ['udp', 'tls'],
      tls: { bundleFile: theirs.bundleFile, caFile: ca.caFile },
      mediaenc: 'srtp-mand',
    });
    cleanups.push(() => peer.stop());

    const call = await engine.dial(peer.tlsUri, 1000);
    await peer.waitEvent('CALL_ESTABLISHED', 5000);
    expect(call.media.srtp).toBeDefined();
    await new Promise((r) => setTimeout(r, 1500));
    expect(await call.hangup()).toBe(200);
    await peer.waitEvent('CALL_CLOSED', 3000);
    const stats = call.stats();
    expect(stats.srtpAuthFailed).toBe(0);
    expect(stats.packetsReceived).toBeGreaterThan(30);
    const heard = findTone(to8k(call.heard()), 440, 8000);
    expect(heardTone(heard), JSON.stringify(heard)).toBe(true);
    const recording = peer.recording();
    const ours1k = findTone(recording.samples, 1000, recording.sampleRate);
    expect(heardTone(ours1k), JSON.stringify(ours1k)).toBe(true);
  });
});
