/** Header name tables: compact forms, list-valued headers, canonical capitalisation. */

/** RFC 3261 7.3.3 and the IANA SIP parameters registry. */
const COMPACT = new Map<string, string>(Object.entries({
  a: 'accept-contact',
  b: 'referred-by',
  c: 'content-type',
  d: 'request-disposition',
  e: 'content-encoding',
  f: 'from',
  i: 'call-id',
  j: 'reject-contact',
  k: 'supported',
  l: 'content-length',
  m: 'contact',
  n: 'identity-info',
  o: 'event',
  r: 'refer-to',
  s: 'subject',
  t: 'to',
  u: 'allow-events',
  v: 'via',
  x: 'session-expires',
  y: 'identity',
}));

/** Lowercase long form of a header name as received (compact forms expanded). */
export function longName(name: string): string {
  const lower = name.toLowerCase();
  return COMPACT.get(lower) ?? lower;
}

/**
 * Headers whose grammar is a comma-separated list, so `Via: a, b` is two values. Headers whose
 * values contain bare commas (Date, Authorization, WWW-Authenticate, Retry-After...) are absent.
 */
export const LIST_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-contact',
  'accept-encoding',
  'accept-language',
  'alert-info',
  'allow',
  'allow-events',
  'call-info',
  'contact',
  'content-encoding',
  'content-language',
  'error-info',
  'history-info',
  'in-reply-to',
  'p-asserted-identity',
  'p-associated-uri',
  'p-preferred-identity',
  'path',
  'proxy-require',
  'reason',
  'record-route',
  'reject-contact',
  'request-disposition',
  'require',
  'route',
  'security-client',
  'security-server',
  'security-verify',
  'service-route',
  'supported',
  'unsupported',
  'via',
  'warning',
]);

/** Names whose canonical spelling is not plain Title-Case per dash-separated word. */
const SPECIAL_CASE = new Map<string, string>(Object.entries({
  'call-id': 'Call-ID',
  cseq: 'CSeq',
  'www-authenticate': 'WWW-Authenticate',
  'mime-version': 'MIME-Version',
  rack: 'RAck',
  rseq: 'RSeq',
  'sip-etag': 'SIP-ETag',
  'sip-if-match': 'SIP-If-Match',
  'user-to-user': 'User-to-User',
}));

export function canonicalName(name: string): string {
  const lower = name.toLowerCase();
  return SPECIAL_CASE.get(lower) ?? lower.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}
