/**
 * The suites' transforms in C (native/rtp-udp/srtp_napi.c, OpenSSL's EVP through Node's own
 * libcrypto): one EVP context per cipher, re-keyed never and re-IVed per packet, so a packet
 * costs no allocation. Optional like the rest of that module: undefined where it is not built,
 * and cipher-node.ts does the same work.
 */
import { createRequire } from 'node:module';
import type { CipherFactory, SrtpCipher } from './cipher.ts';
import type { SessionKeys } from './kdf.ts';
import type { SrtpSuite } from './suites.ts';

interface NativeSrtp {
  /** kind 0: AES-CM + HMAC-SHA1, 1: AES-GCM. Returns an opaque handle. */
  srtpCreate(kind: number, key: Uint8Array, salt: Uint8Array, auth: Uint8Array, rtpTag: number, rtcpTag: number): object;
  srtpProtectRtp(h: object, buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number;
  srtpUnprotectRtp(h: object, buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number;
  srtpProtectRtcp(h: object, buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number): number;
  srtpUnprotectRtcp(h: object, buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number, encrypted: boolean): number;
}

let loaded: NativeSrtp | null | undefined;

function loadModule(): NativeSrtp | undefined {
  if (loaded === undefined) {
    try {
      const mod = createRequire(import.meta.url)('switchboard-rtp-udp') as Partial<NativeSrtp>;
      loaded = typeof mod.srtpCreate === 'function' ? (mod as NativeSrtp) : null;
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

class NativeCipher implements SrtpCipher {
  constructor(
    private readonly mod: NativeSrtp,
    private readonly handle: object,
  ) {}

  protectRtp(buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number {
    return this.mod.srtpProtectRtp(this.handle, buf, length, headerLength, ssrc, index);
  }

  unprotectRtp(buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number {
    return this.mod.srtpUnprotectRtp(this.handle, buf, length, headerLength, ssrc, index);
  }

  protectRtcp(buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number): number {
    return this.mod.srtpProtectRtcp(this.handle, buf, length, ssrc, srtcpIndex);
  }

  unprotectRtcp(buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number, encrypted: boolean): number {
    return this.mod.srtpUnprotectRtcp(this.handle, buf, length, ssrc, srtcpIndex, encrypted);
  }
}

/** The native factory, or undefined where the module (or its SRTP part) is not built. */
export function loadNativeCipherFactory(): CipherFactory | undefined {
  const mod = loadModule();
  if (!mod) return undefined;
  return {
    label: 'native',
    create(suite: SrtpSuite, keys: SessionKeys): SrtpCipher {
      const handle = mod.srtpCreate(suite.aead ? 1 : 0, keys.key, keys.salt, keys.auth, suite.rtpTagLength, suite.rtcpTagLength);
      return new NativeCipher(mod, handle);
    },
  };
}

/** The transform calls use: native where built, node:crypto otherwise. */
export function defaultCipherFactory(): CipherFactory | undefined {
  return loadNativeCipherFactory();
}
