/**
 * SDP Security Descriptions (RFC 4568): the a=crypto attribute, parsed and written.
 *
 *   a=crypto:<tag> <suite> inline:<base64(key || salt)>[|<lifetime>][|<MKI>:<length>] [<session params>]
 *
 * What we take: one key per line (several key-params would need MKIs to tell them apart), no
 * MKI, a lifetime only if no call can outlive it (we never re-key mid-call), and no session
 * parameter that changes the transform (KDR other than 0, UNENCRYPTED_*, UNAUTHENTICATED_SRTP,
 * FEC_*). Window-size hints (WSH) are fine: our window is 64, the RFC 3711 default. A line we
 * cannot honour is skipped with its reason; if none is left the stream cannot be secured and
 * the offer/answer layer refuses it (488).
 */
import { randomBytes } from 'node:crypto';
import type { MasterKey } from './srtp-session.ts';
import { SRTP_SUITES, suiteByName, type SrtpSuite, type SrtpSuiteName } from './suites.ts';

export interface CryptoAttribute {
  tag: number;
  suite: SrtpSuite;
  master: MasterKey;
}

export type CryptoParse = { ok: true; crypto: CryptoAttribute } | { ok: false; reason: string };

/** Fewest packets a key must be good for: 2^31 is over a year of 20 ms packets. */
const MIN_LIFETIME = 2 ** 31;
const ACCEPTED_SESSION_PARAMS = /^(WSH=\d+|KDR=0|FEC_ORDER=FEC_SRTP)$/;

/** Parses the value of one a=crypto attribute (without "a=crypto:"). */
export function parseCryptoAttribute(value: string): CryptoParse {
  const fields = value.trim().split(/\s+/);
  const [tagText, suiteName, keyParams, ...sessionParams] = fields;
  if (!tagText || !/^\d{1,9}$/.test(tagText) || !suiteName || !keyParams) return { ok: false, reason: 'malformed crypto attribute' };
  const suite = suiteByName(suiteName);
  if (!suite) return { ok: false, reason: `unsupported crypto suite ${suiteName}` };
  if (keyParams.includes(';')) return { ok: false, reason: 'several keys in one crypto attribute (MKI) are not supported' };
  const m = /^inline:([A-Za-z0-9+/]+={0,2})((?:\|[^|]*)*)$/.exec(keyParams);
  if (!m) return { ok: false, reason: 'crypto key is not inline:<base64>' };
  const material = Buffer.from(m[1]!, 'base64');
  if (material.length !== suite.keyLength + suite.saltLength) {
    return { ok: false, reason: `${suite.name} needs ${suite.keyLength + suite.saltLength} bytes of key and salt, got ${material.length}` };
  }
  const extras = m[2]!.split('|').slice(1);
  if (extras.some((part) => part.includes(':'))) return { ok: false, reason: 'MKI is not supported' };
  for (const part of extras) {
    const lifetime = /^2\^(\d{1,2})$/.exec(part);
    const packets = lifetime ? 2 ** Number(lifetime[1]) : /^\d{1,15}$/.test(part) ? Number(part) : NaN;
    if (!Number.isFinite(packets)) return { ok: false, reason: `malformed key lifetime ${part}` };
    if (packets < MIN_LIFETIME) return { ok: false, reason: `key lifetime ${part} is shorter than we can honour without re-keying` };
  }
  for (const param of sessionParams) {
    // RFC 4568 §6.3: a parameter starting with '-' may be ignored by who does not know it.
    if (param.startsWith('-') || ACCEPTED_SESSION_PARAMS.test(param)) continue;
    return { ok: false, reason: `unsupported crypto session parameter ${param}` };
  }
  return {
    ok: true,
    crypto: {
      tag: Number(tagText),
      suite,
      master: { key: material.subarray(0, suite.keyLength), salt: material.subarray(suite.keyLength) },
    },
  };
}

/** The attribute value for our key (after "a=crypto:"). */
export function writeCryptoAttribute(crypto: CryptoAttribute): string {
  const inline = Buffer.concat([crypto.master.key, crypto.master.salt]).toString('base64');
  return `${crypto.tag} ${crypto.suite.name} inline:${inline}`;
}

/** A fresh random master key and salt for a suite. */
export function newMasterKey(suite: SrtpSuite): MasterKey {
  const bytes = randomBytes(suite.keyLength + suite.saltLength);
  return { key: bytes.subarray(0, suite.keyLength), salt: bytes.subarray(suite.keyLength) };
}

/** Our offer: one line per suite we speak, in preference order, each with its own fresh key. */
export function offerCryptos(suites: readonly SrtpSuiteName[] = SRTP_SUITES.map((s) => s.name)): CryptoAttribute[] {
  return suites.map((name, i) => {
    const suite = suiteByName(name)!;
    return { tag: i + 1, suite, master: newMasterKey(suite) };
  });
}

/**
 * Per-trunk SRTP policy. 'off': plain RTP only (an offer of RTP/SAVP alone is refused).
 * 'offered': we offer SDES-SRTP best-effort and accept either. 'required': SRTP or no call;
 * meant for trunks whose signalling runs over TLS, since SDES keys travel in the SDP.
 */
export type SrtpPolicy = 'off' | 'offered' | 'required';
export const SRTP_POLICIES: readonly SrtpPolicy[] = ['off', 'offered', 'required'];
