/**
 * The SRTP crypto suites we speak, by their SDES names (RFC 4568 §6.2, RFC 7714 §14.1), in our
 * order of preference for offers. Lengths in bytes.
 */
export type SrtpSuiteName = 'AEAD_AES_256_GCM' | 'AEAD_AES_128_GCM' | 'AES_CM_128_HMAC_SHA1_80' | 'AES_CM_128_HMAC_SHA1_32';

export interface SrtpSuite {
  name: SrtpSuiteName;
  /** AEAD (RFC 7714): no separate auth key, a 16-byte GCM tag, a 12-byte salt. */
  aead: boolean;
  keyLength: number;
  saltLength: number;
  /** HMAC-SHA1 key (0 for AEAD). */
  authKeyLength: number;
  /** Bytes appended to each SRTP packet. */
  rtpTagLength: number;
  /** Bytes of the SRTCP auth tag (RFC 4568 §6.2.1: 80 bits even for _32). */
  rtcpTagLength: number;
}

export const SRTP_SUITES: readonly SrtpSuite[] = [
  { name: 'AEAD_AES_256_GCM', aead: true, keyLength: 32, saltLength: 12, authKeyLength: 0, rtpTagLength: 16, rtcpTagLength: 16 },
  { name: 'AEAD_AES_128_GCM', aead: true, keyLength: 16, saltLength: 12, authKeyLength: 0, rtpTagLength: 16, rtcpTagLength: 16 },
  { name: 'AES_CM_128_HMAC_SHA1_80', aead: false, keyLength: 16, saltLength: 14, authKeyLength: 20, rtpTagLength: 10, rtcpTagLength: 10 },
  { name: 'AES_CM_128_HMAC_SHA1_32', aead: false, keyLength: 16, saltLength: 14, authKeyLength: 20, rtpTagLength: 4, rtcpTagLength: 10 },
];

export function suiteByName(name: string): SrtpSuite | undefined {
  return SRTP_SUITES.find((s) => s.name === name);
}

/** The most a protected packet grows: the largest tag plus the SRTCP index word. */
export const SRTP_MAX_TRAILER = 16 + 4;
