/**
 * SIP over TLS between two of our UserAgents on loopback, with certificates a private CA issues
 * at test time (openssl): verification by address and by SIP domain (RFC 5922), refusal of an
 * untrusted or misnamed certificate and of TLS older than 1.2, connection reuse, handshake
 * deadline, and certificate reload.
 */
import { copyFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig, ConfigError } from '../../../src/config.ts';
import type { Dialog } from '../../../src/sip/dialog.ts';
import { header } from '../../../src/sip/message.ts';
import type { SipDns } from '../../../src/sip/locate.ts';
import { SipTls, SipTlsConfigError } from '../../../src/sip/tls/tls-streams.ts';
import { UserAgent } from '../../../src/sip/user-agent.ts';
import { makeTestCa, type LeafCert, type TestCa } from '../../support/tls-certs.ts';
import { ANSWER, FAST_TIMERS, OFFER, once } from './ua-pair.ts';

let ca: TestCa;
let byAddress: LeafCert;
let byName: LeafCert;
let otherName: LeafCert;

beforeAll(() => {
  ca = makeTestCa();
  byAddress = ca.issue('loopback', ['IP:127.0.0.1']);
  byName = ca.issue('sip.test', ['DNS:sip.test']);
  otherName = ca.issue('elsewhere', ['DNS:elsewhere.test']);
}, 30_000);
afterAll(() => ca.remove());

/** sip.test (and elsewhere.test) at 127.0.0.1, no NAPTR or SRV. */
const loopbackDns: SipDns = {
  naptr: () => Promise.resolve([]),
  srv: () => Promise.resolve([]),
  addresses: (name) => Promise.resolve(name.endsWith('.test') ? ['127.0.0.1'] : []),
};

async function ua(userName: string, tlsOpts: ConstructorParameters<typeof SipTls>[0] | undefined): Promise<UserAgent> {
  const agent = await UserAgent.create({
    host: '127.0.0.1',
    port: 0,
    userName,
    timers: FAST_TIMERS,
    dns: loopbackDns,
    ...(tlsOpts ? { tls: new SipTls(tlsOpts) } : {}),
  });
  onTestFinished(() => agent.close());
  return agent;
}

const server = (cert: LeafCert, extra: Partial<ConstructorParameters<typeof SipTls>[0]> = {}) =>
  ua('bob', { port: 0, certFile: cert.certFile, keyFile: cert.keyFile, ...extra });
const client = (opts: { trustCa?: boolean } = {}) => ua('alice', { port: 0, ...(opts.trustCa === false ? {} : { caFile: ca.caFile, caOnly: true }) });

function peerFingerprint(port: number, servername?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...(servername ? { servername } : {}) }, () => {
      const fp = s.getPeerCertificate().fingerprint256;
      s.destroy();
      resolve(fp);
    });
    s.once('error', reject);
  });
}

describe('SIP over TLS', () => {
  it('an OPTIONS to an address over TLS is answered, and a second reuses the one connection', async () => {
    const bob = await server(byAddress);
    const alice = await client();
    expect(bob.tlsPort).toBeGreaterThan(0);
    const target = `sip:bob@127.0.0.1:${bob.tlsPort};transport=tls`;
    expect((await alice.options(target)).status).toBe(200);
    expect((await alice.options(target)).status).toBe(200);
    expect(alice.stats.connections).toBe(1);
    expect(bob.stats.connections).toBe(1);
  });

  it('a sips: URI to a domain: the certificate must name that domain (RFC 5922), else the request fails as a transport error', async () => {
    const good = await server(byName);
    const alice = await client();
    const ok = await alice.options(`sips:bob@sip.test:${good.tlsPort}`);
    expect(ok.status).toBe(200);

    const misnamed = await server(otherName);
    const refused = await alice.options(`sips:bob@sip.test:${misnamed.tlsPort}`);
    expect(refused.status).toBe(503);
    expect(misnamed.stats.transactions).toBe(0);
  });

  it('a certificate from a CA the client does not trust is refused', async () => {
    const bob = await server(byAddress);
    const alice = await client({ trustCa: false });
    expect((await alice.options(`sip:bob@127.0.0.1:${bob.tlsPort};transport=tls`)).status).toBe(503);
    expect(bob.stats.transactions).toBe(0);
  });

  it('the listener refuses TLS older than 1.2', async () => {
    const bob = await server(byAddress);
    const outcome = await new Promise<string>((resolve) => {
      const s = tls.connect({ host: '127.0.0.1', port: bob.tlsPort, maxVersion: 'TLSv1.1', minVersion: 'TLSv1', rejectUnauthorized: false }, () => {
        s.destroy();
        resolve('connected');
      });
      s.once('error', (err) => resolve(`error: ${err.message}`));
    });
    expect(outcome).toMatch(/^error/);
  });

  it('an INVITE over TLS: Via and Contact name TLS and the TLS port; the BYE comes back over TLS', async () => {
    // Both ends verify each other's listener: Bob's BYE opens a connection to Alice's Contact.
    const bob = await server(byAddress, { caFile: ca.caFile, caOnly: true });
    const alice = await ua('alice', { port: 0, certFile: byAddress.certFile, keyFile: byAddress.keyFile, caFile: ca.caFile, caOnly: true });
    let invite: { via: string | undefined; contact: string | undefined } | undefined;
    const bobDialog = once<Dialog>((cb) => {
      bob.onInvite = (inc) => {
        invite = { via: header(inc.request, 'via'), contact: header(inc.request, 'contact') };
        cb(inc.accept(ANSWER));
      };
    });
    const call = alice.invite(`sip:bob@127.0.0.1:${bob.tlsPort};transport=tls`, OFFER);
    const aliceDialog = await call.result;
    const bd = await bobDialog;
    expect(invite?.via).toMatch(new RegExp(`^SIP/2.0/TLS 127.0.0.1:${alice.tlsPort};`));
    expect(invite?.contact).toBe(`<sip:alice@127.0.0.1:${alice.tlsPort};transport=tls>`);
    expect(aliceDialog.remoteSdp).toBe(ANSWER);
    await once<void>((cb) => bd.once('confirmed', cb));
    // Bob hangs up: his BYE goes to Alice's Contact, over TLS.
    const ended = once<{ reason: string }>((cb) => aliceDialog.once('ended', cb));
    expect((await bd.bye())?.status).toBe(200);
    expect((await ended).reason).toBe('remote-bye');
  });

  it('a sips: INVITE gets a sips: Contact in the answer (RFC 3261 §8.1.1.8)', async () => {
    const bob = await server(byName);
    const alice = await ua('alice', { port: 0, certFile: byAddress.certFile, keyFile: byAddress.keyFile, caFile: ca.caFile, caOnly: true });
    let contact: string | undefined;
    bob.onInvite = (inc) => {
      contact = header(inc.request, 'contact');
      inc.accept(ANSWER);
    };
    const dialog = await alice.invite(`sips:bob@sip.test:${bob.tlsPort}`, OFFER).result;
    expect(contact).toBe(`<sips:alice@127.0.0.1:${alice.tlsPort}>`);
    await dialog.bye();
  });

  it('a connection that never finishes its handshake is dropped at the deadline', async () => {
    const bob = await server(byAddress, { handshakeTimeoutMs: 300 });
    const started = Date.now();
    const closedAfter = await new Promise<number>((resolve) => {
      const s = net.connect(bob.tlsPort, '127.0.0.1');
      s.on('close', () => resolve(Date.now() - started));
      s.on('error', () => undefined);
    });
    expect(closedAfter).toBeLessThan(3000);
  });

  it('reload() serves a renewed certificate to new connections; unusable files keep the old one', async () => {
    const dir = ca.dir;
    const certFile = `${dir}/live-cert.pem`;
    const keyFile = `${dir}/live-key.pem`;
    copyFileSync(byAddress.certFile, certFile);
    copyFileSync(byAddress.keyFile, keyFile);
    const material = new SipTls({ port: 0, certFile, keyFile });
    const bob = await UserAgent.create({ host: '127.0.0.1', port: 0, userName: 'bob', timers: FAST_TIMERS, tls: material });
    onTestFinished(() => bob.close());
    const before = await peerFingerprint(bob.tlsPort);

    const renewed = ca.issue('renewed', ['IP:127.0.0.1']);
    copyFileSync(renewed.certFile, certFile);
    copyFileSync(renewed.keyFile, keyFile);
    material.reload();
    const after = await peerFingerprint(bob.tlsPort);
    expect(after).not.toBe(before);
    expect(after.replace(/:/g, '')).toBe(renewed.fingerprint.replace(/:/g, ''));

    writeFileSync(keyFile, 'not a key');
    expect(() => material.reload()).toThrow(SipTlsConfigError);
    expect(await peerFingerprint(bob.tlsPort)).toBe(after);
    // And the engine still answers over TLS with it.
    const alice = await client();
    expect((await alice.options(`sip:bob@127.0.0.1:${bob.tlsPort};transport=tls`)).status).toBe(200);
  });

  it('a certificate without its key, a key that does not match, or a file that is not PEM is refused at start', () => {
    expect(() => new SipTls({ port: 0, certFile: byAddress.certFile })).toThrow(/both a certificate and a key/);
    expect(() => new SipTls({ port: 0, certFile: byAddress.certFile, keyFile: byName.keyFile })).toThrow(SipTlsConfigError);
    expect(() => new SipTls({ port: 0, certFile: `${ca.dir}/missing.pem`, keyFile: byAddress.keyFile })).toThrow(/cannot read/);
    expect(() => loadConfig({ SIP_TLS_CERT: byAddress.certFile })).toThrow(ConfigError);
    const cfg = loadConfig({ SIP_TLS_CERT: byAddress.certFile, SIP_TLS_KEY: byAddress.keyFile, SIP_TLS_CA: ca.caFile });
    expect(cfg.sip.tls).toEqual({ port: 5061, certFile: byAddress.certFile, keyFile: byAddress.keyFile, caFile: ca.caFile });
  });
});
