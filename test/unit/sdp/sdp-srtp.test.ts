/**
 * SDES (RFC 4568) in offer/answer: the a=crypto grammar we take and refuse, and the per-trunk
 * policy (off / offered / required) on both sides of a negotiation, ending in the keys each
 * side protects with.
 */
import { describe, expect, it } from 'vitest';
import { SdpNegotiationError } from '../../../src/media/sdp.ts';
import { answerOffer, createOffer, processAnswer, type LocalMedia } from '../../../src/media/sdp-negotiate.ts';
import { createSdpSession } from '../../../src/media/sdp-write.ts';
import { parseCryptoAttribute, writeCryptoAttribute } from '../../../src/media/srtp/sdes.ts';
import { suiteByName } from '../../../src/media/srtp/suites.ts';

const KEY30 = 'WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz'; // RFC 4568 §4's example inline key (30 bytes)

function offerSdp(protocol: string, cryptos: string[]): string {
  return [
    'v=0',
    'o=- 1 1 IN IP4 192.0.2.10',
    's=-',
    'c=IN IP4 192.0.2.10',
    't=0 0',
    `m=audio 10000 ${protocol} 0 101`,
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:101 telephone-event/8000',
    ...cryptos.map((c) => `a=crypto:${c}`),
    'a=sendrecv',
    '',
  ].join('\r\n');
}

const local = (srtp: LocalMedia['srtp']): LocalMedia => ({ address: '10.0.0.5', port: 40000, srtp });
const session = createSdpSession('1', 1);

describe('a=crypto parsing', () => {
  it('takes a key with a lifetime of 2^31 and a WSH hint', () => {
    const p = parseCryptoAttribute(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}|2^31 WSH=128`);
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.crypto.tag).toBe(1);
    expect(p.crypto.master.key.length).toBe(16);
    expect(p.crypto.master.salt.length).toBe(14);
  });

  it('writes what it parses', () => {
    const p = parseCryptoAttribute(`7 AES_CM_128_HMAC_SHA1_32 inline:${KEY30}`);
    expect(p.ok && writeCryptoAttribute(p.crypto)).toBe(`7 AES_CM_128_HMAC_SHA1_32 inline:${KEY30}`);
  });

  it.each([
    [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}|2^20|1:32`, 'MKI is not supported'],
    [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}|2^20`, 'key lifetime 2^20 is shorter'],
    [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30};inline:${KEY30}`, 'several keys'],
    [`1 F8_128_HMAC_SHA1_80 inline:${KEY30}`, 'unsupported crypto suite F8_128_HMAC_SHA1_80'],
    [`1 AEAD_AES_128_GCM inline:${KEY30}`, 'needs 28 bytes'],
    [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30} UNENCRYPTED_SRTP`, 'unsupported crypto session parameter UNENCRYPTED_SRTP'],
    [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30} KDR=10`, 'KDR=10'],
    ['x AES_CM_128_HMAC_SHA1_80', 'malformed'],
  ])('refuses %s', (value, reason) => {
    const p = parseCryptoAttribute(value);
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.reason).toContain(reason);
  });
});

describe('answering SDES offers', () => {
  it("an SRTP offer on an 'offered' trunk gets an RTP/SAVP answer with our own key under their tag", () => {
    const a = answerOffer(offerSdp('RTP/SAVP', [`1 F8_128_HMAC_SHA1_80 inline:${KEY30}`, `2 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}`]), local('offered'), session);
    expect(a.answerSdp).toContain('m=audio 40000 RTP/SAVP 0 101');
    const line = /a=crypto:(.*)\r\n/.exec(a.answerSdp)![1]!;
    expect(line).toMatch(/^2 AES_CM_128_HMAC_SHA1_80 inline:/);
    expect(a.srtp?.suite).toBe('AES_CM_128_HMAC_SHA1_80');
    expect(Buffer.concat([a.srtp!.remote.key, a.srtp!.remote.salt]).toString('base64')).toBe(KEY30);
    expect(line).not.toContain(KEY30); // a fresh key of ours, never theirs echoed
  });

  it("an SRTP-only offer on an 'off' trunk is 488", () => {
    expect(() => answerOffer(offerSdp('RTP/SAVP', [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}`]), local('off'), session)).toThrowError(
      expect.objectContaining({ code: 'SRTP_NOT_ACCEPTABLE', sipStatus: 488 }),
    );
  });

  it('an SRTP offer whose every crypto line we refuse is 488, naming why', () => {
    const err = (() => {
      try {
        answerOffer(offerSdp('RTP/SAVP', [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}|2^20|1:4`]), local('offered'), session);
      } catch (e) {
        return e as SdpNegotiationError;
      }
      return undefined;
    })();
    expect(err?.sipStatus).toBe(488);
    expect(err?.message).toContain('MKI is not supported');
  });

  it("a plain offer on a 'required' trunk is 488; on 'offered' it stays plain", () => {
    expect(() => answerOffer(offerSdp('RTP/AVP', []), local('required'), session)).toThrowError(expect.objectContaining({ code: 'SRTP_NOT_ACCEPTABLE' }));
    const a = answerOffer(offerSdp('RTP/AVP', []), local('offered'), session);
    expect(a.srtp).toBeUndefined();
    expect(a.answerSdp).not.toContain('a=crypto');
  });

  it('a best-effort offer (RTP/AVP with crypto lines) is answered secured on RTP/AVP, and plain when SRTP is off', () => {
    const offer = offerSdp('RTP/AVP', [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}`]);
    const secured = answerOffer(offer, local('offered'), session);
    expect(secured.answerSdp).toContain('m=audio 40000 RTP/AVP 0 101');
    expect(secured.srtp?.suite).toBe('AES_CM_128_HMAC_SHA1_80');
    const plain = answerOffer(offer, local('off'), session);
    expect(plain.srtp).toBeUndefined();
    expect(plain.answerSdp).not.toContain('a=crypto');
  });

  it('two audio m= lines (RTP/SAVP, then RTP/AVP): an SRTP trunk takes the first, an off trunk the second', () => {
    const secure = offerSdp('RTP/SAVP', [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}`]);
    const twoLines = secure.replace('a=sendrecv\r\n', 'a=sendrecv\r\nm=audio 10002 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n');
    const on = answerOffer(twoLines, local('offered'), session);
    expect(on.mediaIndex).toBe(0);
    expect(on.srtp).toBeDefined();
    expect(on.answerSdp).toContain('m=audio 0 RTP/AVP 0');
    const off = answerOffer(twoLines, local('off'), session);
    expect(off.mediaIndex).toBe(1);
    expect(off.srtp).toBeUndefined();
    expect(off.answerSdp).toContain('m=audio 0 RTP/SAVP 0 101');
  });

  it('a re-offer with the same suite keeps our key (the context and its rollover counter carry on)', () => {
    const offer = offerSdp('RTP/SAVP', [`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}`]);
    const first = answerOffer(offer, local('offered'), session);
    const again = answerOffer(offer, { ...local('offered'), currentSrtp: first.srtp! }, first.session);
    expect(Buffer.from(again.srtp!.local.key).equals(Buffer.from(first.srtp!.local.key))).toBe(true);
  });
});

describe('offering SDES', () => {
  it("'offered' is RTP/AVP with one crypto line per suite, 'required' is RTP/SAVP, 'off' has none", () => {
    const offered = createOffer(local('offered'), session);
    expect(offered.offerSdp).toContain('m=audio 40000 RTP/AVP');
    const lines = [...offered.offerSdp.matchAll(/a=crypto:(\d+) (\S+) inline:/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(lines).toEqual(['1 AEAD_AES_256_GCM', '2 AEAD_AES_128_GCM', '3 AES_CM_128_HMAC_SHA1_80', '4 AES_CM_128_HMAC_SHA1_32']);
    expect(createOffer(local('required'), session).offerSdp).toContain('m=audio 40000 RTP/SAVP');
    expect(createOffer(local('off'), session).offerSdp).not.toContain('a=crypto');
  });

  it('our offer answered by our own answerer gives both sides the same two keys, crossed', () => {
    const offer = createOffer(local('required'), session);
    const answer = answerOffer(offer.offerSdp, local('offered'), session);
    const mine = processAnswer(answer.answerSdp, offer.offered);
    expect(mine.srtp?.suite).toBe('AEAD_AES_256_GCM');
    expect(Buffer.from(mine.srtp!.local.key).equals(Buffer.from(answer.srtp!.remote.key))).toBe(true);
    expect(Buffer.from(mine.srtp!.remote.key).equals(Buffer.from(answer.srtp!.local.key))).toBe(true);
    expect(suiteByName(mine.srtp!.suite)!.keyLength).toBe(32);
  });

  it("a plain answer to 'required' fails; to 'offered' it is plain RTP", () => {
    const required = createOffer(local('required'), session);
    const plainAnswer = answerOffer(offerSdp('RTP/AVP', []), local('off'), session).answerSdp;
    expect(() => processAnswer(plainAnswer, required.offered)).toThrowError(expect.objectContaining({ code: 'SRTP_NOT_ACCEPTABLE' }));
    const offered = createOffer(local('offered'), session);
    expect(processAnswer(plainAnswer, offered.offered).srtp).toBeUndefined();
  });

  it('an answer naming a tag we never offered is refused', () => {
    const offered = createOffer(local('offered'), session);
    const forged = answerOffer(offerSdp('RTP/SAVP', [`9 AES_CM_128_HMAC_SHA1_80 inline:${KEY30}`]), local('offered'), session).answerSdp;
    expect(() => processAnswer(forged, offered.offered)).toThrowError(expect.objectContaining({ code: 'SRTP_NOT_ACCEPTABLE' }));
  });
});
