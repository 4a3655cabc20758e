/**
 * The published known answers: RFC 3711 Appendix B.2 (AES-CM keystream) and B.3 (key
 * derivation), libsrtp's AES_CM_128_HMAC_SHA1_80 reference packet (master key in, so KDF,
 * AES-CM and HMAC-SHA1 together), RFC 7714 §16.1 (AEAD_AES_128_GCM SRTP) and §17 (SRTCP with
 * the 128- and 256-bit keys). Every transform we ship runs them.
 */
import { describe, expect, it } from 'vitest';
import type { CipherFactory } from '../../../../src/media/srtp/cipher.ts';
import { nodeCipherFactory } from '../../../../src/media/srtp/cipher-node.ts';
import { loadNativeCipherFactory } from '../../../../src/media/srtp/cipher-native.ts';
import { deriveKey } from '../../../../src/media/srtp/kdf.ts';
import { SrtpSession } from '../../../../src/media/srtp/srtp-session.ts';
import { suiteByName, type SrtpSuite } from '../../../../src/media/srtp/suites.ts';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const suite = (name: string): SrtpSuite => suiteByName(name)!;

const native = loadNativeCipherFactory();
const factories: CipherFactory[] = [nodeCipherFactory, ...(native ? [native] : [])];

describe('SRTP key derivation (RFC 3711 B.3)', () => {
  const key = hex('E1F97A0D3E018BE0D64FA32C06DE4139');
  const salt = hex('0EC675AD498AFEEBB6960B3AABE6');
  it('derives the cipher key, salt and auth key the RFC lists', () => {
    expect(deriveKey(key, salt, 0, 16).toString('hex')).toBe('c61e7a93744f39ee10734afe3ff7a087');
    expect(deriveKey(key, salt, 2, 14).toString('hex')).toBe('30cbbc08863d8c85d49db34a9ae1');
    expect(deriveKey(key, salt, 1, 20).toString('hex')).toBe('cebe321f6ff7716b6fd4ab49af256a156d38baa4');
  });
});

describe.each(factories.map((f) => [f.label, f] as const))('SRTP transforms on %s', (_label, factory) => {
  it('AES-CM keystream for SSRC 0, index 0 is RFC 3711 B.2', () => {
    const cipher = factory.create(suite('AES_CM_128_HMAC_SHA1_80'), {
      key: hex('2B7E151628AED2A6ABF7158809CF4F3C'),
      salt: hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD'),
      auth: Buffer.alloc(20),
    });
    const packet = Buffer.alloc(12 + 48 + 10);
    packet[0] = 0x80;
    expect(cipher.protectRtp(packet, 60, 12, 0, 0)).toBe(70);
    expect(packet.subarray(12, 60).toString('hex')).toBe(
      'e03ead0935c95e80e166b16dd92b4eb4' + 'd23513162b02d0f72a43a2fe4a5f97ab' + '41e95b3bb0a2e8dd477901e4fca894c0',
    );
  });

  it('protects and unprotects the AES_CM_128_HMAC_SHA1_80 reference packet from its master key', () => {
    const master = { key: hex('e1f97a0d3e018be0d64fa32c06de4139'), salt: hex('0ec675ad498afeebb6960b3aabe6') };
    const plain = hex('800f1234decafbadcafebabeabababababababababababababababab');
    const expected = hex('800f1234decafbadcafebabe 4e55dc4ce79978d88ca4d215949d2402 b78d6acc99ea179b8dbb');
    const tx = new SrtpSession(suite('AES_CM_128_HMAC_SHA1_80'), master, master, factory);
    const buf = Buffer.alloc(64);
    plain.copy(buf);
    const n = tx.protectRtp(buf, plain.length);
    expect(buf.subarray(0, n).toString('hex')).toBe(expected.toString('hex'));
    const rx = new SrtpSession(suite('AES_CM_128_HMAC_SHA1_80'), master, master, factory);
    expect(rx.unprotectRtp(buf, n)).toBe(plain.length);
    expect(buf.subarray(0, plain.length).toString('hex')).toBe(plain.toString('hex'));
  });

  it('the _32 suite sends the first 4 bytes of the same HMAC', () => {
    const master = { key: hex('e1f97a0d3e018be0d64fa32c06de4139'), salt: hex('0ec675ad498afeebb6960b3aabe6') };
    const plain = hex('800f1234decafbadcafebabeabababababababababababababababab');
    const buf = Buffer.alloc(64);
    plain.copy(buf);
    const n = new SrtpSession(suite('AES_CM_128_HMAC_SHA1_32'), master, master, factory).protectRtp(buf, plain.length);
    expect(buf.subarray(0, n).toString('hex')).toBe('800f1234decafbadcafebabe4e55dc4ce79978d88ca4d215949d2402b78d6acc');
  });

  const gcm = { key: hex('000102030405060708090a0b0c0d0e0f'), salt: hex('517569642070726f2071756f'), auth: Buffer.alloc(0) };
  const gcm256 = { ...gcm, key: hex('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f') };
  const rtp = hex('8040f17b8041f8d35501a0b2 47616c6c696120657374206f6d6e69732064697669736120696e207061727465732074726573');
  const rtcp = hex('81c8000d4d617273 4e5450314e545032525450200000042a0000e9304c756e61 deadbeefdeadbeefdeadbeefdeadbeefdeadbeef');

  it('AEAD_AES_128_GCM SRTP is RFC 7714 §16.1, and a flipped bit fails', () => {
    const cipher = factory.create(suite('AEAD_AES_128_GCM'), gcm);
    const buf = Buffer.alloc(128);
    rtp.copy(buf);
    const n = cipher.protectRtp(buf, rtp.length, 12, 0x5501a0b2, 0xf17b);
    expect(buf.subarray(0, n).toString('hex')).toBe(
      '8040f17b8041f8d35501a0b2' +
        'f24de3a3fb34de6cacba861c9d7e4bcabe633bd50d294e6f42a5f47a51c7d19b36de3adf8833' +
        '899d7f27beb16a9152cf765ee4390cce',
    );
    const copy = Buffer.from(buf.subarray(0, n));
    expect(cipher.unprotectRtp(buf, n, 12, 0x5501a0b2, 0xf17b)).toBe(rtp.length);
    expect(buf.subarray(0, rtp.length).equals(rtp)).toBe(true);
    copy[20]! ^= 1;
    expect(cipher.unprotectRtp(copy, n, 12, 0x5501a0b2, 0xf17b)).toBe(-1);
  });

  it.each([
    ['AEAD_AES_128_GCM', gcm, '63e94885dcdab67ca727d7662f6b7e997ff5c0f76c06f32dc676a5f1730d6fda4ce09b4686303ded0bb9275bc84aa45896cf4d2fc5abf87245d9eade800005d4'],
    ['AEAD_AES_256_GCM', gcm256, 'd50ae4d1f5ce5d304ba297e47d470c282c3ece5dbffe0a50a2eaa5c1110555be8415f658c61de0476f1b6fad1d1eb30c4446839f57ff6f6cb26ac3be800005d4'],
  ])('%s SRTCP is RFC 7714 §17', (name, keys, body) => {
    const cipher = factory.create(suite(name), keys);
    const buf = Buffer.alloc(128);
    rtcp.copy(buf);
    const n = cipher.protectRtcp(buf, rtcp.length, 0x4d617273, 0x5d4);
    expect(buf.subarray(0, n).toString('hex')).toBe('81c8000d4d617273' + body);
    expect(cipher.unprotectRtcp(buf, n, 0x4d617273, 0x5d4, true)).toBe(rtcp.length);
    expect(buf.subarray(0, rtcp.length).equals(rtcp)).toBe(true);
  });
});
