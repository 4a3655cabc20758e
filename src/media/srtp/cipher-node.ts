/**
 * The suites' transforms on node:crypto, the fallback that always works. AES-CM keystream comes
 * from one AES-ECB cipher per context fed the counter blocks (a new CTR cipher per packet would
 * redo the key schedule each time); node:crypto still allocates the keystream and the HMAC or
 * GCM objects per packet, which the native transform (cipher-native.ts) does not.
 */
import { createCipheriv, createDecipheriv, createHmac, type Cipher } from 'node:crypto';
import { sameBytes, writeIndex48, writeU32, type CipherFactory, type SrtpCipher } from './cipher.ts';
import type { SessionKeys } from './kdf.ts';
import type { SrtpSuite } from './suites.ts';

class AesCmHmacSha1 implements SrtpCipher {
  private readonly ecb: Cipher;
  private counters = Buffer.alloc(1536);
  private readonly iv = Buffer.alloc(16);
  private readonly word = Buffer.alloc(4);

  constructor(
    private readonly keys: SessionKeys,
    private readonly rtpTag: number,
    private readonly rtcpTag: number,
  ) {
    this.ecb = createCipheriv('aes-128-ecb', keys.key, null);
    this.ecb.setAutoPadding(false);
  }

  protectRtp(buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number {
    this.xor(buf, headerLength, length, ssrc, index);
    writeU32(this.word, 0, Math.floor(index / 65536) >>> 0);
    const mac = createHmac('sha1', this.keys.auth).update(view(buf, 0, length)).update(this.word).digest();
    buf.set(mac.subarray(0, this.rtpTag), length);
    return length + this.rtpTag;
  }

  unprotectRtp(buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number {
    const end = length - this.rtpTag;
    if (end < headerLength) return -1;
    writeU32(this.word, 0, Math.floor(index / 65536) >>> 0);
    const mac = createHmac('sha1', this.keys.auth).update(view(buf, 0, end)).update(this.word).digest();
    if (!sameBytes(mac, 0, buf, end, this.rtpTag)) return -1;
    this.xor(buf, headerLength, end, ssrc, index);
    return end;
  }

  protectRtcp(buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number): number {
    this.xor(buf, 8, length, ssrc, srtcpIndex);
    writeU32(buf, length, (0x8000_0000 | srtcpIndex) >>> 0);
    const mac = createHmac('sha1', this.keys.auth).update(view(buf, 0, length + 4)).digest();
    buf.set(mac.subarray(0, this.rtcpTag), length + 4);
    return length + 4 + this.rtcpTag;
  }

  unprotectRtcp(buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number, encrypted: boolean): number {
    const end = length - this.rtcpTag;
    const mac = createHmac('sha1', this.keys.auth).update(view(buf, 0, end)).digest();
    if (!sameBytes(mac, 0, buf, end, this.rtcpTag)) return -1;
    if (encrypted) this.xor(buf, 8, end - 4, ssrc, srtcpIndex);
    return end - 4;
  }

  /** RFC 3711 §4.1.1: IV = salt*2^16 XOR ssrc*2^64 XOR index*2^16; block j counts in the low 16 bits. */
  private xor(buf: Uint8Array, start: number, end: number, ssrc: number, index: number): void {
    const length = end - start;
    if (length <= 0) return;
    const iv = this.iv;
    iv.fill(0);
    writeU32(iv, 4, ssrc);
    writeIndex48(iv, 8, index);
    const salt = this.keys.salt;
    for (let i = 0; i < 14; i++) iv[i]! ^= salt[i]!;
    const blocks = (length + 15) >>> 4;
    if (blocks * 16 > this.counters.length) this.counters = Buffer.alloc(blocks * 16);
    const counters = this.counters;
    for (let b = 0; b < blocks; b++) {
      const at = b * 16;
      iv.copy(counters, at);
      counters[at + 14] = b >>> 8;
      counters[at + 15] = b & 0xff;
    }
    const stream = this.ecb.update(counters.subarray(0, blocks * 16));
    for (let i = 0; i < length; i++) buf[start + i]! ^= stream[i]!;
  }
}

class AesGcm implements SrtpCipher {
  private readonly algorithm: 'aes-128-gcm' | 'aes-256-gcm';
  private readonly iv = Buffer.alloc(12);
  private readonly aad = Buffer.alloc(12);

  constructor(private readonly keys: SessionKeys) {
    this.algorithm = keys.key.length === 32 ? 'aes-256-gcm' : 'aes-128-gcm';
  }

  protectRtp(buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number {
    this.rtpIv(ssrc, index);
    const c = createCipheriv(this.algorithm, this.keys.key, this.iv, { authTagLength: 16 });
    c.setAAD(view(buf, 0, headerLength));
    const out = c.update(view(buf, headerLength, length));
    c.final();
    buf.set(out, headerLength);
    buf.set(c.getAuthTag(), length);
    return length + 16;
  }

  unprotectRtp(buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number {
    const end = length - 16;
    if (end < headerLength) return -1;
    this.rtpIv(ssrc, index);
    return this.open(buf, headerLength, end, view(buf, 0, headerLength)) ? end : -1;
  }

  protectRtcp(buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number): number {
    this.rtcpIv(ssrc, srtcpIndex, buf, true);
    const c = createCipheriv(this.algorithm, this.keys.key, this.iv, { authTagLength: 16 });
    c.setAAD(this.aad);
    const out = c.update(view(buf, 8, length));
    c.final();
    buf.set(out, 8);
    buf.set(c.getAuthTag(), length);
    writeU32(buf, length + 16, (0x8000_0000 | srtcpIndex) >>> 0);
    return length + 20;
  }

  unprotectRtcp(buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number, encrypted: boolean): number {
    const end = length - 20;
    if (end < 8) return -1;
    if (!encrypted) {
      // RFC 7714 §9.2: unencrypted SRTCP authenticates the whole packet as AAD.
      this.rtcpIv(ssrc, srtcpIndex, buf, false);
      const d = createDecipheriv(this.algorithm, this.keys.key, this.iv, { authTagLength: 16 });
      d.setAAD(Buffer.concat([view(buf, 0, end), view(buf, end + 16, end + 20)]));
      d.setAuthTag(view(buf, end, end + 16));
      try {
        d.final();
      } catch {
        return -1;
      }
      return end;
    }
    this.rtcpIv(ssrc, srtcpIndex, buf, true);
    return this.open(buf, 8, end, this.aad) ? end : -1;
  }

  /** Decrypts buf[start, end) in place when the tag after it holds; untouched otherwise. */
  private open(buf: Uint8Array, start: number, end: number, aad: Uint8Array): boolean {
    const d = createDecipheriv(this.algorithm, this.keys.key, this.iv, { authTagLength: 16 });
    d.setAAD(aad);
    d.setAuthTag(view(buf, end, end + 16));
    const out = d.update(view(buf, start, end));
    try {
      d.final();
    } catch {
      return false;
    }
    buf.set(out, start);
    return true;
  }

  /** RFC 7714 §8.1: IV = (00 00 | SSRC | ROC | SEQ) XOR salt. */
  private rtpIv(ssrc: number, index: number): void {
    const iv = this.iv;
    iv[0] = 0;
    iv[1] = 0;
    writeU32(iv, 2, ssrc);
    writeIndex48(iv, 6, index);
    this.salt();
  }

  /** RFC 7714 §9.1: IV = (00 00 | SSRC | 00 00 | 0 | SRTCP index) XOR salt; AAD = header | E+index. */
  private rtcpIv(ssrc: number, srtcpIndex: number, buf: Uint8Array, encrypted: boolean): void {
    const iv = this.iv;
    iv[0] = 0;
    iv[1] = 0;
    writeU32(iv, 2, ssrc);
    iv[6] = 0;
    iv[7] = 0;
    writeU32(iv, 8, srtcpIndex & 0x7fff_ffff);
    this.salt();
    this.aad.set(view(buf, 0, 8), 0);
    writeU32(this.aad, 8, ((encrypted ? 0x8000_0000 : 0) | srtcpIndex) >>> 0);
  }

  private salt(): void {
    const salt = this.keys.salt;
    for (let i = 0; i < 12; i++) this.iv[i]! ^= salt[i]!;
  }
}

function view(buf: Uint8Array, start: number, end: number): Uint8Array {
  return buf.subarray(start, end);
}

export const nodeCipherFactory: CipherFactory = {
  label: 'node:crypto',
  create(suite: SrtpSuite, keys: SessionKeys): SrtpCipher {
    return suite.aead ? new AesGcm(keys) : new AesCmHmacSha1(keys, suite.rtpTagLength, suite.rtcpTagLength);
  },
};
