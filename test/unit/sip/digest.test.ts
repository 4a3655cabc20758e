import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';
import {
  answerChallenge,
  computeDigestResponse,
  computeHa1,
  digestAlgorithm,
  formatChallenge,
  formatCredentials,
  parseAuthHeader,
  parseChallenge,
  parseCredentials,
} from '../../../src/sip/digest.ts';
import { createChallenge, DigestNonces, verifyCredentials } from '../../../src/sip/digest-server.ts';

describe('digest responses: published test vectors', () => {
  it('RFC 2617 3.5: MD5, qop=auth', () => {
    expect(
      computeDigestResponse({
        username: 'Mufasa',
        realm: 'testrealm@host.com',
        password: 'Circle Of Life',
        method: 'GET',
        uri: '/dir/index.html',
        nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
        qop: 'auth',
        nc: '00000001',
        cnonce: '0a4f113b',
      }),
    ).toBe('6629fae49393a05397450978507c4ef1');
  });

  const rfc7616 = {
    username: 'Mufasa',
    realm: 'http-auth@example.org',
    password: 'Circle of Life',
    method: 'GET',
    uri: '/dir/index.html',
    nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
    qop: 'auth',
    nc: '00000001',
    cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
  };

  it('RFC 7616 3.9.1: MD5 and SHA-256', () => {
    expect(computeDigestResponse({ ...rfc7616, algorithm: 'MD5' })).toBe('8ca523f5e9506fed4657c9700eebdbec');
    expect(computeDigestResponse({ ...rfc7616, algorithm: 'SHA-256' })).toBe(
      '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1',
    );
  });

  it('a stored HA1 gives the same answer as the password', () => {
    const ha1 = computeHa1('SHA-256', rfc7616.username, rfc7616.realm, rfc7616.password);
    const { password: _unused, ...withoutPassword } = rfc7616;
    expect(computeDigestResponse({ ...withoutPassword, ha1, algorithm: 'SHA-256' })).toBe(
      '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1',
    );
  });

  it('-sess variants fold nonce and cnonce into HA1; RFC 2069 mode has no qop', () => {
    const sess = computeDigestResponse({ ...rfc7616, algorithm: 'SHA-256-sess' });
    expect(sess).toMatch(/^[0-9a-f]{64}$/);
    expect(sess).not.toBe(computeDigestResponse({ ...rfc7616, algorithm: 'SHA-256' }));
    const { qop: _q, nc: _n, cnonce: _c, ...noQop } = rfc7616;
    expect(computeDigestResponse({ ...noQop, algorithm: 'MD5-sess' })).toBeUndefined();
    expect(computeDigestResponse(noQop)).toMatch(/^[0-9a-f]{32}$/);
    expect(computeDigestResponse({ ...rfc7616, algorithm: 'SHA-512-256' })).toMatch(/^[0-9a-f]{64}$/);
    expect(computeDigestResponse({ ...rfc7616, algorithm: 'SHA-1' })).toBeUndefined();
    expect(digestAlgorithm('sha-256-SESS')).toBe('SHA-256-sess');
    expect(digestAlgorithm(undefined)).toBe('MD5');
  });
});

describe('digest header parsing', () => {
  it('parses a challenge with a quoted qop list', () => {
    const c = parseChallenge('Digest realm="atlanta.com", domain="sip:ss1.carrier.com", qop="auth,auth-int", nonce="f84f1cec41e6cbe5aea9c8e88d359", opaque="", stale=FALSE, algorithm=MD5')!;
    expect(c).toEqual({
      realm: 'atlanta.com',
      domain: 'sip:ss1.carrier.com',
      qop: ['auth', 'auth-int'],
      nonce: 'f84f1cec41e6cbe5aea9c8e88d359',
      opaque: '',
      stale: false,
      algorithm: 'MD5',
    });
    expect(parseChallenge(formatChallenge(c))).toEqual(c);
    expect(parseChallenge('Digest realm="r", nonce="n", stale=true')?.stale).toBe(true);
    expect(parseChallenge('Basic realm="r"')).toBeUndefined();
    expect(parseChallenge('Digest nonce="n"')).toBeUndefined();
  });

  it('parses credentials and requires nc/cnonce with qop', () => {
    const text =
      'Digest username="bob", realm="biloxi.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="sip:bob@biloxi.com", qop=auth, nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1", opaque="5ccc069c403ebaf9f0171e9517f40e41"';
    const c = parseCredentials(text)!;
    expect(c).toMatchObject({ username: 'bob', uri: 'sip:bob@biloxi.com', qop: 'auth', nc: '00000001', cnonce: '0a4f113b' });
    expect(parseCredentials(formatCredentials(c))).toEqual(c);
    expect(parseCredentials(text.replace(', nc=00000001', ''))).toBeUndefined();
    expect(parseCredentials('Digest username="a\\"b", realm="r", nonce="n", uri="u", response="x"')?.username).toBe('a"b');
  });

  it('keeps unknown schemes readable (RFC 4475 regaut01) and rejects junk', () => {
    expect(parseAuthHeader('NoOneKnowsThisScheme opaque-data=here')).toEqual({
      scheme: 'NoOneKnowsThisScheme',
      params: new Map([['opaque-data', 'here']]),
    });
    expect(parseCredentials('NoOneKnowsThisScheme opaque-data=here')).toBeUndefined();
    for (const bad of ['', 'Digest realm="open', 'Digest realm', 'Digest a=1,, b=2', 'Digest a=1 b=2']) {
      expect(parseAuthHeader(bad), bad).toBeUndefined();
    }
  });
});

describe('digest server: nonces and verification', () => {
  const secret = Buffer.alloc(32, 7);
  const setup = () => {
    const clock = new ManualClock();
    const nonces = new DigestNonces({ secret, clock, ttlMs: 60_000 });
    return { clock, nonces };
  };

  it('nonces are valid, then stale after the TTL; forged or foreign ones are invalid', () => {
    const { clock, nonces } = setup();
    const n = nonces.issue();
    expect(nonces.check(n)).toBe('valid');
    clock.advance(60_001);
    expect(nonces.check(n)).toBe('stale');
    const other = new DigestNonces({ secret: Buffer.alloc(32, 8), clock });
    expect(other.check(nonces.issue())).toBe('invalid');
    const raw = Buffer.from(n, 'base64url');
    raw[3] = raw[3]! ^ 1; // tamper with the timestamp
    expect(nonces.check(raw.toString('base64url'))).toBe('invalid');
    expect(nonces.check(`${n}!`)).toBe('invalid');
    expect(nonces.check('')).toBe('invalid');
    expect(() => new DigestNonces({ secret: Buffer.alloc(4), clock })).toThrow(RangeError);
  });

  it('nonces from the future (beyond clock skew) are invalid', () => {
    const clock = new ManualClock(2_000_000_000_000);
    const future = new DigestNonces({ secret, clock }).issue();
    const { nonces } = setup();
    expect(nonces.check(future)).toBe('invalid');
  });

  it('a client answer to a server challenge verifies; wrong password, URI or realm do not', () => {
    for (const algorithm of ['MD5', 'SHA-256', 'SHA-256-sess']) {
      const { clock, nonces } = setup();
      const challenge = parseChallenge(formatChallenge(createChallenge('biloxi.com', nonces, { algorithm, opaque: 'op' })))!;
      const answer = (password: string) =>
        parseCredentials(
          formatCredentials(answerChallenge(challenge, { username: 'bob', password, method: 'REGISTER', uri: 'sip:biloxi.com' })!),
        )!;
      const creds = answer('zanzibar');
      expect(creds.algorithm).toBe(algorithm);
      expect(creds.opaque).toBe('op');
      const opts = { realm: 'biloxi.com', method: 'REGISTER', nonces, password: 'zanzibar', requestUri: 'sip:biloxi.com' };
      expect(verifyCredentials(creds, opts)).toEqual({ ok: true });
      expect(verifyCredentials({ ...creds, response: creds.response.toUpperCase() }, opts)).toEqual({ ok: true });
      expect(verifyCredentials(answer('wrong'), opts)).toEqual({ ok: false, reason: 'bad-response' });
      expect(verifyCredentials(creds, { ...opts, method: 'INVITE' })).toEqual({ ok: false, reason: 'bad-response' });
      expect(verifyCredentials(creds, { ...opts, requestUri: 'sip:other' })).toEqual({ ok: false, reason: 'uri-mismatch' });
      expect(verifyCredentials(creds, { ...opts, realm: 'x' })).toEqual({ ok: false, reason: 'wrong-realm' });
      expect(verifyCredentials({ ...creds, nonce: 'forged' }, opts)).toEqual({ ok: false, reason: 'invalid-nonce' });
      clock.advance(61_000);
      expect(verifyCredentials(creds, opts)).toEqual({ ok: false, reason: 'stale' });
      expect(verifyCredentials(answer('wrong'), opts)).toEqual({ ok: false, reason: 'bad-response' });
    }
  });

  it('verifies against a stored HA1 and refuses algorithms not allowed', () => {
    const { nonces } = setup();
    const challenge = createChallenge('biloxi.com', nonces, { algorithm: 'SHA-256' });
    const creds = answerChallenge(challenge, { username: 'bob', password: 'pw', method: 'INVITE', uri: 'sip:bob@biloxi.com', cnonce: 'c', nc: 2 })!;
    expect(creds.nc).toBe('00000002');
    const ha1 = computeHa1('SHA-256', 'bob', 'biloxi.com', 'pw');
    expect(verifyCredentials(creds, { realm: 'biloxi.com', method: 'INVITE', nonces, ha1 })).toEqual({ ok: true });
    expect(verifyCredentials(creds, { realm: 'biloxi.com', method: 'INVITE', nonces, ha1, algorithms: ['MD5'] })).toEqual({
      ok: false,
      reason: 'unsupported-algorithm',
    });
  });

  it('answers a challenge without qop in RFC 2069 mode', () => {
    const { nonces } = setup();
    const challenge = { ...createChallenge('r', nonces), qop: [] };
    const creds = answerChallenge(challenge, { username: 'u', password: 'p', method: 'BYE', uri: 'sip:x@y' })!;
    expect(creds.qop).toBeUndefined();
    expect(creds.cnonce).toBeUndefined();
    expect(verifyCredentials(creds, { realm: 'r', method: 'BYE', nonces, password: 'p' })).toEqual({ ok: true });
  });
});
