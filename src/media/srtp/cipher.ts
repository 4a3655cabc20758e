/**
 * What a suite's transform does to one packet, given the index the context worked out. One
 * cipher per direction and per kind (SRTP or SRTCP session keys); everything in place in the
 * caller's buffer, which must have room for the trailer (SRTP_MAX_TRAILER).
 *
 * Wire layouts:
 *   AES-CM SRTP:   header | E(payload) | tag (10 or 4)            auth over header|E(payload)|ROC
 *   AES-CM SRTCP:  header(8) | E(rest) | E-bit+index | tag (10)   auth over all before the tag
 *   GCM SRTP:      header | E(payload) | tag (16)                 AAD = header (RFC 7714 §8)
 *   GCM SRTCP:     header(8) | E(rest) | tag (16) | E-bit+index   AAD = header(8)|E-bit+index (§9)
 */
export interface SrtpCipher {
  /** Encrypts buf[headerLength, length) and appends the tag; returns the new length. */
  protectRtp(buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number;
  /** Authenticates and decrypts in place; the plaintext length, or -1 when authentication fails. */
  unprotectRtp(buf: Uint8Array, length: number, headerLength: number, ssrc: number, index: number): number;
  /** Encrypts from byte 8, appends E-bit+index and the tag in the suite's order; returns the new length. */
  protectRtcp(buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number): number;
  /**
   * `length` is the whole SRTCP packet; `encrypted` is its E-bit. Returns the RTCP length (the
   * trailer stripped), or -1 when authentication fails.
   */
  unprotectRtcp(buf: Uint8Array, length: number, ssrc: number, srtcpIndex: number, encrypted: boolean): number;
}

/** Builds the per-direction ciphers; the native one when it loaded, else node:crypto's. */
export interface CipherFactory {
  readonly label: string;
  create(suite: import('./suites.ts').SrtpSuite, keys: import('./kdf.ts').SessionKeys): SrtpCipher;
}

/** Constant-time comparison of `length` bytes (no Buffer views needed, unlike timingSafeEqual). */
export function sameBytes(a: Uint8Array, aOffset: number, b: Uint8Array, bOffset: number, length: number): boolean {
  let diff = 0;
  for (let i = 0; i < length; i++) diff |= a[aOffset + i]! ^ b[bOffset + i]!;
  return diff === 0;
}

/** Writes a 48-bit index big-endian at `offset` (6 bytes). */
export function writeIndex48(target: Uint8Array, offset: number, index: number): void {
  const hi = Math.floor(index / 0x1_0000_0000);
  const lo = index >>> 0;
  target[offset] = (hi >>> 8) & 0xff;
  target[offset + 1] = hi & 0xff;
  target[offset + 2] = lo >>> 24;
  target[offset + 3] = (lo >>> 16) & 0xff;
  target[offset + 4] = (lo >>> 8) & 0xff;
  target[offset + 5] = lo & 0xff;
}

export function writeU32(target: Uint8Array, offset: number, value: number): void {
  target[offset] = value >>> 24;
  target[offset + 1] = (value >>> 16) & 0xff;
  target[offset + 2] = (value >>> 8) & 0xff;
  target[offset + 3] = value & 0xff;
}
