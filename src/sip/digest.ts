/**
 * HTTP Digest for SIP (RFC 3261 22.4, RFC 2617, RFC 7616, RFC 8760): parse and format
 * challenges (WWW-/Proxy-Authenticate) and credentials (Authorization/Proxy-Authorization),
 * and compute responses. The server side (nonces, verification) is in digest-server.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { isToken, quote, Scanner, trimWs, unquote } from './scan.ts';

export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess' | 'SHA-512-256' | 'SHA-512-256-sess';

const HASHES = new Map<string, string>([
  ['md5', 'md5'],
  ['sha-256', 'sha256'],
  ['sha-512-256', 'sha512-256'],
]);

/** Canonical algorithm name for a (case-insensitive) wire value, or undefined if unsupported. */
export function digestAlgorithm(name: string | undefined): DigestAlgorithm | undefined {
  const lower = (name ?? 'MD5').toLowerCase();
  const base = lower.endsWith('-sess') ? lower.slice(0, -5) : lower;
  if (!HASHES.has(base)) return undefined;
  const canonical = base === 'md5' ? 'MD5' : base.toUpperCase();
  return (lower.endsWith('-sess') ? `${canonical}-sess` : canonical) as DigestAlgorithm;
}

export interface AuthHeader {
  scheme: string;
  /** Names lowercased; quoted values unquoted. */
  params: Map<string, string>;
}

/** `scheme auth-param *(COMMA auth-param)`; any scheme (RFC 4475 regaut01 uses an unknown one). */
export function parseAuthHeader(value: string): AuthHeader | undefined {
  const sc = new Scanner(trimWs(value));
  const scheme = sc.token();
  if (!scheme) return undefined;
  const params = new Map<string, string>();
  if (sc.done) return { scheme, params };
  if (!sc.skipWs()) return undefined;
  for (;;) {
    const name = sc.token();
    if (!name || !sc.eat('=')) return undefined;
    let v: string | undefined;
    if (sc.peek() === '"') {
      const raw = sc.quotedRaw();
      v = raw === undefined ? undefined : unquote(raw);
    } else {
      v = sc.run((c) => c !== ',' && c !== ' ' && c !== '\t');
    }
    if (v === undefined) return undefined;
    params.set(name.toLowerCase(), v);
    sc.skipWs();
    if (sc.done) return { scheme, params };
    if (!sc.eat(',')) return undefined;
  }
}

export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque?: string;
  /** As sent (defaults to MD5 when absent); check with `digestAlgorithm`. */
  algorithm: string;
  qop: string[];
  stale: boolean;
  domain?: string;
}

export function parseChallenge(value: string): DigestChallenge | undefined {
  const h = parseAuthHeader(value);
  if (!h || h.scheme.toLowerCase() !== 'digest') return undefined;
  const realm = h.params.get('realm');
  const nonce = h.params.get('nonce');
  if (realm === undefined || nonce === undefined) return undefined;
  const c: DigestChallenge = {
    realm,
    nonce,
    algorithm: h.params.get('algorithm') ?? 'MD5',
    qop: (h.params.get('qop') ?? '').split(',').map(trimWs).filter((q) => q !== ''),
    stale: (h.params.get('stale') ?? '').toLowerCase() === 'true',
  };
  const opaque = h.params.get('opaque');
  const domain = h.params.get('domain');
  if (opaque !== undefined) c.opaque = opaque;
  if (domain !== undefined) c.domain = domain;
  return c;
}

export function formatChallenge(c: DigestChallenge): string {
  const parts = [`realm=${quote(c.realm)}`];
  if (c.domain !== undefined) parts.push(`domain=${quote(c.domain)}`);
  parts.push(`nonce=${quote(c.nonce)}`);
  if (c.opaque !== undefined) parts.push(`opaque=${quote(c.opaque)}`);
  if (c.stale) parts.push('stale=TRUE');
  parts.push(`algorithm=${c.algorithm}`);
  if (c.qop.length > 0) parts.push(`qop=${quote(c.qop.join(','))}`);
  return `Digest ${parts.join(', ')}`;
}

export interface DigestCredentials {
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  response: string;
  algorithm?: string;
  cnonce?: string;
  opaque?: string;
  qop?: string;
  nc?: string;
}

export function parseCredentials(value: string): DigestCredentials | undefined {
  const h = parseAuthHeader(value);
  if (!h || h.scheme.toLowerCase() !== 'digest') return undefined;
  const p = h.params;
  const [username, realm, nonce, uri, response] = ['username', 'realm', 'nonce', 'uri', 'response'].map((k) => p.get(k));
  if (username === undefined || realm === undefined || nonce === undefined || uri === undefined || response === undefined) {
    return undefined;
  }
  const c: DigestCredentials = { username, realm, nonce, uri, response };
  for (const k of ['algorithm', 'cnonce', 'opaque', 'qop', 'nc'] as const) {
    const v = p.get(k);
    if (v !== undefined) c[k] = v;
  }
  // With qop, nc (8 hex digits) and cnonce are mandatory (RFC 2617 3.2.2).
  if (c.qop !== undefined && (c.cnonce === undefined || c.nc === undefined || !/^[0-9a-fA-F]{8}$/.test(c.nc))) return undefined;
  if (c.qop !== undefined && !isToken(c.qop)) return undefined;
  return c;
}

export function formatCredentials(c: DigestCredentials): string {
  const parts = [
    `username=${quote(c.username)}`,
    `realm=${quote(c.realm)}`,
    `nonce=${quote(c.nonce)}`,
    `uri=${quote(c.uri)}`,
    `response=${quote(c.response)}`,
  ];
  if (c.algorithm !== undefined) parts.push(`algorithm=${c.algorithm}`);
  if (c.cnonce !== undefined) parts.push(`cnonce=${quote(c.cnonce)}`);
  if (c.opaque !== undefined) parts.push(`opaque=${quote(c.opaque)}`);
  if (c.qop !== undefined) parts.push(`qop=${c.qop}`);
  if (c.nc !== undefined) parts.push(`nc=${c.nc}`);
  return `Digest ${parts.join(', ')}`;
}

export interface DigestInput {
  algorithm?: string;
  username: string;
  realm: string;
  /** Either the password or a stored H(username:realm:password) for the same hash. */
  password?: string;
  ha1?: string;
  method: string;
  uri: string;
  nonce: string;
  qop?: string;
  nc?: string;
  cnonce?: string;
  /** For qop=auth-int. */
  body?: Buffer;
}

function hasher(algorithm: DigestAlgorithm): (data: string | Buffer) => string {
  const name = HASHES.get(algorithm.toLowerCase().replace(/-sess$/, ''))!;
  return (data) => createHash(name).update(data).digest('hex');
}

/** H(username:realm:password) as stored by a registrar that keeps no plaintext passwords. */
export function computeHa1(algorithm: DigestAlgorithm, username: string, realm: string, password: string): string {
  return hasher(algorithm)(`${username}:${realm}:${password}`);
}

/** The request-digest (lowercase hex); undefined for an unsupported algorithm or missing input. */
export function computeDigestResponse(input: DigestInput): string | undefined {
  const algorithm = digestAlgorithm(input.algorithm);
  if (!algorithm) return undefined;
  const H = hasher(algorithm);
  let ha1 = input.ha1 ?? (input.password !== undefined ? computeHa1(algorithm, input.username, input.realm, input.password) : undefined);
  if (ha1 === undefined) return undefined;
  if (algorithm.endsWith('-sess')) {
    if (input.cnonce === undefined) return undefined;
    ha1 = H(`${ha1}:${input.nonce}:${input.cnonce}`);
  }
  const qop = input.qop?.toLowerCase();
  const ha2 = qop === 'auth-int' ? H(`${input.method}:${input.uri}:${H(input.body ?? Buffer.alloc(0))}`) : H(`${input.method}:${input.uri}`);
  if (qop === undefined) return H(`${ha1}:${input.nonce}:${ha2}`);
  if (qop !== 'auth' && qop !== 'auth-int') return undefined;
  if (input.nc === undefined || input.cnonce === undefined) return undefined;
  return H(`${ha1}:${input.nonce}:${input.nc}:${input.cnonce}:${qop}:${ha2}`);
}

export interface AnswerOptions {
  username: string;
  password: string;
  method: string;
  uri: string;
  /** Nonce count for this nonce, starting at 1. */
  nc?: number;
  cnonce?: string;
  body?: Buffer;
}

/** Credentials answering a challenge (client side); undefined if its algorithm is unsupported. */
export function answerChallenge(ch: DigestChallenge, o: AnswerOptions): DigestCredentials | undefined {
  const algorithm = digestAlgorithm(ch.algorithm);
  if (!algorithm) return undefined;
  const offered = ch.qop.map((q) => q.toLowerCase());
  const qop = offered.includes('auth') ? 'auth' : offered.includes('auth-int') ? 'auth-int' : undefined;
  const needsCnonce = qop !== undefined || algorithm.endsWith('-sess');
  const cnonce = needsCnonce ? (o.cnonce ?? randomBytes(12).toString('hex')) : undefined;
  const nc = qop !== undefined ? (o.nc ?? 1).toString(16).padStart(8, '0') : undefined;
  const base = { username: o.username, realm: ch.realm, password: o.password, method: o.method, uri: o.uri, nonce: ch.nonce };
  const response = computeDigestResponse({ ...base, algorithm, ...(qop && { qop }), ...(nc && { nc }), ...(cnonce && { cnonce }), ...(o.body && { body: o.body }) });
  if (response === undefined) return undefined;
  const creds: DigestCredentials = { username: o.username, realm: ch.realm, nonce: ch.nonce, uri: o.uri, response, algorithm: ch.algorithm };
  if (cnonce !== undefined) creds.cnonce = cnonce;
  if (ch.opaque !== undefined) creds.opaque = ch.opaque;
  if (qop !== undefined) creds.qop = qop;
  if (nc !== undefined) creds.nc = nc;
  return creds;
}
