/**
 * Kamailio ⇄ our SIP stack over TLS, with certificates a private CA issues at test time. Kamailio
 * is a record-routing stateful proxy between its UDP and TLS listeners (support/kamailio.ts):
 * - a plain UDP UA calls through Kamailio, which relays over TLS to our TLS listener, verifying
 *   our certificate;
 * - our UA calls Kamailio's TLS listener, verifying Kamailio's certificate, and Kamailio relays
 *   over UDP to a plain UA;
 * - our UA refuses Kamailio when its certificate comes from a CA it does not trust, and Kamailio
 *   refuses our listener when ours comes from a CA it does not trust.
 * Real SIP over TLS both ways, real RTP between the two ends, in-dialog requests via Kamailio.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { InviteFailedError } from '../../src/sip/user-agent-outgoing-invite.ts';
import { SipTls } from '../../src/sip/tls/tls-streams.ts';
import { makeTestCa, type LeafCert, type TestCa } from '../support/tls-certs.ts';
import { Kamailio } from './support/kamailio.ts';
import { MediaUa } from './support/media-ua.ts';
import { findTone, heardTone, sleep, teardown, within } from './support/tools.ts';

let ca: TestCa;
let otherCa: TestCa;
let ours: LeafCert;
let kamailioCert: LeafCert;
let untrustedKamailioCert: LeafCert;

beforeAll(() => {
  ca = makeTestCa();
  otherCa = makeTestCa('Some Other CA');
  ours = ca.issue('switchboard', ['IP:127.0.0.1']);
  kamailioCert = ca.issue('kamailio', ['IP:127.0.0.1']);
  untrustedKamailioCert = otherCa.issue('kamailio', ['IP:127.0.0.1']);
}, 30_000);
afterAll(() => {
  ca.remove();
  otherCa.remove();
});

const ourTls = () => new SipTls({ port: 0, certFile: ours.certFile, keyFile: ours.keyFile, caFile: ca.caFile, caOnly: true });

describe.concurrent('Kamailio (tls module) ⇄ our UserAgent over TLS', () => {
  it('a UDP caller through Kamailio reaches our TLS listener: INVITE over TLS, echo audio, BYE via Kamailio', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ tls: ourTls() });
    cleanups.push(() => engine.close());
    const proxy = await Kamailio.start({ tls: { certFile: kamailioCert.certFile, keyFile: kamailioCert.keyFile, caFile: ca.caFile }, toTls: engine.ua.tlsPort });
    cleanups.push(() => proxy.stop());
    const caller = await MediaUa.start({ userName: 'caller' });
    cleanups.push(() => caller.close());

    const call = await caller.dial(proxy.udpUri('echo'), 440);
    const answered = await engine.call(0);
    expect(engine.invites[0]!.source.transport).toBe('tls');
    expect(engine.ua.stats.connections).toBeGreaterThanOrEqual(1);
    await sleep(1500);
    expect(await within(call.hangup(), 8000, 'the BYE through Kamailio')).toBe(200);
    expect(await within(answered.ended, 5000, 'the BYE to reach our TLS side')).toBe('remote-bye');

    const echoed = findTone(call.heard(), 440, 16_000);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
    const heard = findTone(answered.heard(), 440, 16_000);
    expect(heardTone(heard), JSON.stringify(heard)).toBe(true);
    // Kamailio saw the INVITE over UDP, and relayed the ACK and BYE in the dialog (Record-Route).
    const seen = proxy.requests.map((r) => `${r.method}/${r.proto}`);
    expect(seen, proxy.output.slice(-3000)).toEqual(expect.arrayContaining(['INVITE/udp', 'ACK/udp', 'BYE/udp']));
    // ... toward our Contact on the TLS listener: the BYE reached us over TLS as well.
    expect(proxy.requests.find((r) => r.method === 'BYE')?.ruri).toBe(engine.tlsUri('echo'));
  });

  it('our UA calls Kamailio over TLS, verifying its certificate; Kamailio relays over UDP: echo audio, our BYE ends it', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const echo = await MediaUa.start();
    cleanups.push(() => echo.close());
    const proxy = await Kamailio.start({ tls: { certFile: kamailioCert.certFile, keyFile: kamailioCert.keyFile, caFile: ca.caFile }, toUdp: echo.port });
    cleanups.push(() => proxy.stop());
    const engine = await MediaUa.start({ userName: 'switchboard', tls: ourTls() });
    cleanups.push(() => engine.close());

    const call = await engine.dial(proxy.tlsUri('someone'), 1000);
    const answered = await echo.call(0);
    expect(echo.invites[0]!.source.transport).toBe('udp');
    expect(engine.ua.stats.connections).toBeGreaterThanOrEqual(1);
    await sleep(1500);
    expect(await within(call.hangup(), 8000, 'the BYE through Kamailio')).toBe(200);
    expect(await within(answered.ended, 5000, 'the BYE to reach the UDP side')).toBe('remote-bye');

    const echoed = findTone(call.heard(), 1000, 16_000);
    expect(heardTone(echoed), JSON.stringify(echoed)).toBe(true);
    const seen = proxy.requests.map((r) => `${r.method}/${r.proto}`);
    expect(seen, proxy.output.slice(-3000)).toEqual(expect.arrayContaining(['INVITE/tls', 'ACK/tls', 'BYE/tls']));
  });

  it('our UA refuses Kamailio when its certificate comes from a CA we do not trust: 503, nothing reaches Kamailio; a UA trusting that CA gets through', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const echo = await MediaUa.start();
    cleanups.push(() => echo.close());
    const proxy = await Kamailio.start({ tls: { certFile: untrustedKamailioCert.certFile, keyFile: untrustedKamailioCert.keyFile, caFile: ca.caFile }, toUdp: echo.port });
    cleanups.push(() => proxy.stop());
    const engine = await MediaUa.start({ userName: 'switchboard', tls: ourTls() });
    cleanups.push(() => engine.close());

    const failure = await engine.dial(proxy.tlsUri('someone'), 1000).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(InviteFailedError);
    expect((failure as InviteFailedError).status).toBe(503);
    // The handshake failed on our side: Kamailio never got a request, the UDP peer no INVITE.
    expect(proxy.requests, proxy.output.slice(-3000)).toEqual([]);
    expect(echo.invites).toHaveLength(0);

    // The control: the same Kamailio, called by a UA that trusts the other CA, relays the call.
    const trusting = await MediaUa.start({ userName: 'trusting', tls: new SipTls({ port: 0, caFile: otherCa.caFile, caOnly: true }) });
    cleanups.push(() => trusting.close());
    const call = await trusting.dial(proxy.tlsUri('someone'), 1000);
    await echo.call(0);
    expect(await within(call.hangup(), 8000, 'the BYE through Kamailio')).toBe(200);
  });

  it('Kamailio refuses our TLS listener when our certificate comes from a CA it does not trust: the caller gets an error, we get no INVITE', async ({ expect, onTestFinished }) => {
    const cleanups = teardown(onTestFinished);
    const engine = await MediaUa.start({ tls: ourTls() });
    cleanups.push(() => engine.close());
    // Kamailio's client side trusts only the other CA; our certificate is from the test CA.
    const proxy = await Kamailio.start({ tls: { certFile: kamailioCert.certFile, keyFile: kamailioCert.keyFile, caFile: otherCa.caFile }, toTls: engine.ua.tlsPort });
    cleanups.push(() => proxy.stop());
    const caller = await MediaUa.start({ userName: 'caller' });
    cleanups.push(() => caller.close());

    const failure = await caller.dial(proxy.udpUri('echo'), 440).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure, proxy.output.slice(-3000)).toBeInstanceOf(InviteFailedError);
    // Kamailio's relay timed out (fr_timer) after its TLS client refused our certificate.
    expect((failure as InviteFailedError).status).toBe(408);
    expect(proxy.output).toMatch(/certificate verify failed/);
    expect(proxy.requests.filter((r) => r.method === 'INVITE').map((r) => r.proto)).toEqual(['udp']);
    expect(engine.invites).toHaveLength(0);
  });
});
