/**
 * SRTP key derivation (RFC 3711 §4.3) with the AES-CM PRF and a key derivation rate of 0 (the
 * default, and all SDES offers without a KDR parameter mean): each session key is the AES-CM
 * keystream of the master key over x = (master salt XOR label << 48) * 2^16. For the AEAD suites
 * the 12-byte master salt is zero-padded to the 14 bytes the PRF takes (RFC 7714 §11), and the
 * 256-bit suite's PRF is AES-256-CM.
 */
import { createCipheriv } from 'node:crypto';
import type { SrtpSuite } from './suites.ts';

export interface SessionKeys {
  key: Buffer;
  salt: Buffer;
  /** HMAC-SHA1 key; empty for AEAD suites. */
  auth: Buffer;
}

export interface DerivedKeys {
  rtp: SessionKeys;
  rtcp: SessionKeys;
}

const LABEL = { rtpKey: 0, rtpAuth: 1, rtpSalt: 2, rtcpKey: 3, rtcpAuth: 4, rtcpSalt: 5 } as const;

/** The PRF's output of `length` bytes for one label. */
export function deriveKey(masterKey: Uint8Array, masterSalt: Uint8Array, label: number, length: number): Buffer {
  const iv = Buffer.alloc(16);
  Buffer.from(masterSalt).copy(iv, 0, 0, Math.min(14, masterSalt.length));
  // label sits at byte 7 of the 14-byte x (bits 48..55 from the right of 112 bits).
  iv[7]! ^= label;
  const algorithm = masterKey.length === 32 ? 'aes-256-ctr' : 'aes-128-ctr';
  const cipher = createCipheriv(algorithm, masterKey, iv);
  return Buffer.concat([cipher.update(Buffer.alloc(length)), cipher.final()]);
}

export function deriveSessionKeys(suite: SrtpSuite, masterKey: Uint8Array, masterSalt: Uint8Array): DerivedKeys {
  if (masterKey.length !== suite.keyLength) throw new RangeError(`${suite.name} needs a ${suite.keyLength}-byte master key`);
  if (masterSalt.length !== suite.saltLength) throw new RangeError(`${suite.name} needs a ${suite.saltLength}-byte master salt`);
  const one = (k: number, a: number, s: number): SessionKeys => ({
    key: deriveKey(masterKey, masterSalt, k, suite.keyLength),
    salt: deriveKey(masterKey, masterSalt, s, suite.saltLength),
    auth: suite.authKeyLength > 0 ? deriveKey(masterKey, masterSalt, a, suite.authKeyLength) : Buffer.alloc(0),
  });
  return {
    rtp: one(LABEL.rtpKey, LABEL.rtpAuth, LABEL.rtpSalt),
    rtcp: one(LABEL.rtcpKey, LABEL.rtcpAuth, LABEL.rtcpSalt),
  };
}
