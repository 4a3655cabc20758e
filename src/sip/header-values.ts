/** Parsers for the scalar header values the message layer validates. */
import { isToken, parseDigits, trimWs, UINT32_MAX } from './scan.ts';

export interface CSeq {
  seq: number;
  method: string;
}

/** `CSeq: 1*DIGIT LWS Method`, with the number at most 2^32-1 (RFC 3261 8.1.1.5). */
export function parseCSeq(value: string): CSeq | undefined {
  const m = /^(\S+)[ \t]+(\S+)$/.exec(trimWs(value));
  if (!m) return undefined;
  const seq = parseDigits(m[1]!, UINT32_MAX);
  const method = m[2]!;
  return seq !== undefined && isToken(method) ? { seq, method } : undefined;
}

/** Max-Forwards is 0..255 (RFC 3261 20.22); values like `0068` are fine. */
export function parseMaxForwards(value: string): number | undefined {
  return parseDigits(trimWs(value), 255);
}

/** Content-Length: non-negative digits, no sign. */
export function parseContentLength(value: string): number | undefined {
  return parseDigits(trimWs(value), Number.MAX_SAFE_INTEGER);
}

const DATE_RE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** SIP-date is rfc1123-date and always GMT (RFC 3261 20.17). */
export function isValidSipDate(value: string): boolean {
  return DATE_RE.test(trimWs(value));
}

/** `type/subtype` lowercased, parameters dropped; undefined if malformed. */
export function mediaType(contentType: string): string | undefined {
  const base = trimWs(contentType.split(';')[0]!).toLowerCase();
  const m = /^([^/\s]+)[ \t]*\/[ \t]*([^/\s]+)$/.exec(base);
  return m && isToken(m[1]!) && isToken(m[2]!) ? `${m[1]}/${m[2]}` : undefined;
}
