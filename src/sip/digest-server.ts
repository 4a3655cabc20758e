/**
 * Server side of SIP digest: stateless HMAC-signed nonces carrying their issue time, and
 * verification of credentials in constant time. Nonce-count replay tracking needs per-nonce
 * state and is left to the caller.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import { computeDigestResponse, digestAlgorithm, type DigestChallenge, type DigestCredentials } from './digest.ts';

export type NonceState = 'valid' | 'stale' | 'invalid';

export interface NonceOptions {
  /** HMAC key; at least 16 bytes. Every node that verifies must share it. */
  secret: Buffer;
  clock: Clock;
  /** How long a nonce is accepted before it is reported stale. Default 5 minutes. */
  ttlMs?: number;
  /** Injectable for deterministic tests. */
  random?: (size: number) => Buffer;
}

const TS_BYTES = 8;
const RANDOM_BYTES = 12;
const MAC_BYTES = 16;
const NONCE_BYTES = TS_BYTES + RANDOM_BYTES + MAC_BYTES;
/** Clock skew between nodes tolerated for a nonce that claims to come from the future. */
const FUTURE_SKEW_MS = 5_000;

export class DigestNonces {
  private readonly ttlMs: number;
  private readonly random: (size: number) => Buffer;

  constructor(private readonly opts: NonceOptions) {
    if (opts.secret.length < 16) throw new RangeError('nonce secret must be at least 16 bytes');
    this.ttlMs = opts.ttlMs ?? 300_000;
    this.random = opts.random ?? randomBytes;
  }

  issue(): string {
    const payload = Buffer.alloc(TS_BYTES + RANDOM_BYTES);
    payload.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(this.opts.clock.now()))));
    this.random(RANDOM_BYTES).copy(payload, TS_BYTES, 0, RANDOM_BYTES);
    return Buffer.concat([payload, this.mac(payload)]).toString('base64url');
  }

  check(nonce: string): NonceState {
    if (nonce.length > 128) return 'invalid';
    const raw = Buffer.from(nonce, 'base64url');
    // Node's decoder skips junk characters; only the canonical encoding is ours.
    if (raw.length !== NONCE_BYTES || raw.toString('base64url') !== nonce) return 'invalid';
    const payload = raw.subarray(0, TS_BYTES + RANDOM_BYTES);
    if (!timingSafeEqual(raw.subarray(TS_BYTES + RANDOM_BYTES), this.mac(payload))) return 'invalid';
    const age = this.opts.clock.now() - Number(payload.readBigUInt64BE());
    if (age < -FUTURE_SKEW_MS) return 'invalid';
    return age > this.ttlMs ? 'stale' : 'valid';
  }

  private mac(payload: Buffer): Buffer {
    return createHmac('sha256', this.opts.secret).update(payload).digest().subarray(0, MAC_BYTES);
  }
}

/** A fresh challenge; `stale` tells the client to retry with the new nonce, same password. */
export function createChallenge(
  realm: string,
  nonces: DigestNonces,
  opts: { algorithm?: string; stale?: boolean; opaque?: string; qop?: string[] } = {},
): DigestChallenge {
  const c: DigestChallenge = {
    realm,
    nonce: nonces.issue(),
    algorithm: opts.algorithm ?? 'MD5',
    qop: opts.qop ?? ['auth'],
    stale: opts.stale ?? false,
  };
  if (opts.opaque !== undefined) c.opaque = opts.opaque;
  return c;
}

export type VerifyResult =
  | { ok: true }
  | { ok: false; reason: 'wrong-realm' | 'uri-mismatch' | 'unsupported-algorithm' | 'invalid-nonce' | 'bad-response' | 'stale' };

export interface VerifyOptions {
  realm: string;
  method: string;
  nonces: DigestNonces;
  /** Either the plaintext password or the stored HA1 for the credentials' algorithm. */
  password?: string;
  ha1?: string;
  /** Accepted algorithms (canonical names); default MD5 and SHA-256 with their -sess forms. */
  algorithms?: readonly string[];
  body?: Buffer;
  /**
   * The Request-URI as received: when given, the credentials' `uri` must equal it, so a digest
   * captured for one request cannot be replayed against another URI.
   */
  requestUri?: string;
}

const DEFAULT_ALGORITHMS = ['MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess'];

/**
 * Checks credentials. `stale` is only reported when the response itself is right, so a client
 * told stale=true knows its password was good (RFC 7616 3.3).
 */
export function verifyCredentials(creds: DigestCredentials, o: VerifyOptions): VerifyResult {
  if (creds.realm !== o.realm) return { ok: false, reason: 'wrong-realm' };
  if (o.requestUri !== undefined && creds.uri !== o.requestUri) return { ok: false, reason: 'uri-mismatch' };
  const algorithm = digestAlgorithm(creds.algorithm);
  if (!algorithm || !(o.algorithms ?? DEFAULT_ALGORITHMS).includes(algorithm)) {
    return { ok: false, reason: 'unsupported-algorithm' };
  }
  const state = o.nonces.check(creds.nonce);
  if (state === 'invalid') return { ok: false, reason: 'invalid-nonce' };
  const expected = computeDigestResponse({
    algorithm,
    username: creds.username,
    realm: creds.realm,
    method: o.method,
    uri: creds.uri,
    nonce: creds.nonce,
    ...(o.password !== undefined && { password: o.password }),
    ...(o.ha1 !== undefined && { ha1: o.ha1 }),
    ...(creds.qop !== undefined && { qop: creds.qop }),
    ...(creds.nc !== undefined && { nc: creds.nc }),
    ...(creds.cnonce !== undefined && { cnonce: creds.cnonce }),
    ...(o.body !== undefined && { body: o.body }),
  });
  if (expected === undefined || !safeEqualHex(expected, creds.response)) return { ok: false, reason: 'bad-response' };
  return state === 'stale' ? { ok: false, reason: 'stale' } : { ok: true };
}

function safeEqualHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'latin1');
  const b = Buffer.from(given.toLowerCase(), 'latin1');
  return a.length === b.length && timingSafeEqual(a, b);
}
