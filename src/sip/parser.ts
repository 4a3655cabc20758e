/**
 * Parses one SIP message (RFC 3261 section 7) from bytes. Never throws: every failure comes back
 * as `{ok: false}` with, for requests, the status a UAS should answer and whatever was readable
 * (Via, Call-ID, CSeq, ...) so that answer can be built. Responses that fail are dropped.
 */
import { contentLengthOf, scanHeaderSection, skipLeadingCrlf, unfoldHeaders, type RawHeader } from './framing.ts';
import { LIST_HEADERS } from './header-names.ts';
import type { SipHeader, SipMessage } from './message.ts';
import { ParseReject, reject } from './parse-reject.ts';
import { validateHeaders } from './parser-validate.ts';
import { parseStartLine, type StartLine } from './start-line.ts';
import { splitList } from './scan.ts';

export interface ParseOptions {
  /**
   * `datagram` (default): bytes after Content-Length are ignored and a missing Content-Length
   * means "the rest of the datagram". `stream`: Content-Length is mandatory (RFC 3261 18.3).
   */
  transport?: 'datagram' | 'stream';
  maxMessageBytes?: number;
  maxHeaders?: number;
  maxLineBytes?: number;
  /** Reject a Date header that is not an RFC 1123 GMT date (RFC 4475 baddate). Default true. */
  checkDate?: boolean;
}

export const DEFAULT_PARSE_LIMITS = { maxMessageBytes: 65_536, maxHeaders: 256, maxLineBytes: 8_192 } as const;

/** What could be read from a message that failed, enough to address a 400 back to its sender. */
export interface PartialMessage {
  kind: 'request' | 'response';
  method?: string;
  uri?: string;
  statusCode?: number;
  callId?: string;
  cseq?: string;
  from?: string;
  to?: string;
  via: string[];
  headers: SipHeader[];
}

export type ParseResult =
  | { ok: true; message: SipMessage }
  | {
      ok: false;
      error: string;
      /** For requests: the response to send (400, 505, 501, 513). Absent: drop silently. */
      status?: number;
      partial?: PartialMessage;
    };

export function parseMessage(buf: Buffer, opts: ParseOptions = {}): ParseResult {
  const ctx: { partial?: PartialMessage } = {};
  try {
    return { ok: true, message: parse(buf, opts, ctx) };
  } catch (e) {
    const partial = ctx.partial;
    const error = e instanceof ParseReject ? e.error : `parser failure: ${String(e)}`;
    const out: ParseResult = { ok: false, error };
    if (partial) out.partial = partial;
    if (partial?.kind === 'request') out.status = e instanceof ParseReject ? e.status : 400;
    return out;
  }
}

function parse(buf: Buffer, opts: ParseOptions, ctx: { partial?: PartialMessage }): SipMessage {
  const maxMessageBytes = opts.maxMessageBytes ?? DEFAULT_PARSE_LIMITS.maxMessageBytes;
  const maxHeaders = opts.maxHeaders ?? DEFAULT_PARSE_LIMITS.maxHeaders;
  const maxLineBytes = opts.maxLineBytes ?? DEFAULT_PARSE_LIMITS.maxLineBytes;
  const start = skipLeadingCrlf(buf, 0);
  if (start >= buf.length) reject('empty message');
  // Known before anything else can fail, so an oversized or garbled request still gets an answer.
  const isResponse = buf.subarray(start, start + 4).toString('latin1').toUpperCase() === 'SIP/';
  ctx.partial = { kind: isResponse ? 'response' : 'request', via: [], headers: [] };
  if (buf.length > maxMessageBytes) reject('message too large', 513);

  const section = scanHeaderSection(buf, start, maxLineBytes);
  if (section.kind === 'error') reject(section.error);
  const lines = section.kind === 'complete' ? section.lines : scanLines(buf, start);
  const startLine = parseStartLine(lines[0] ?? '');
  ctx.partial = partialOf(startLine, []);

  const unfolded = unfoldHeaders(lines.slice(1));
  if ('error' in unfolded) reject(unfolded.error);
  if (unfolded.headers.length > maxHeaders) reject('too many headers');
  const split = splitHeaders(unfolded.headers);
  ctx.partial = partialOf(startLine, 'headers' in split ? split.headers : unfolded.headers);
  if (startLine.error) reject(startLine.error, startLine.errorStatus);
  if (section.kind !== 'complete') reject('header section not terminated by an empty line');
  if ('error' in split) reject(split.error);
  if (split.headers.length > maxHeaders) reject('too many headers');
  const headers = split.headers;

  validateHeaders(startLine, headers, { checkDate: opts.checkDate ?? true });

  const cl = contentLengthOf(headers);
  if ('error' in cl) reject(cl.error);
  const available = buf.length - section.bodyStart;
  let length = cl.length;
  if (length === undefined) {
    if (opts.transport === 'stream') reject('missing Content-Length on a stream transport');
    length = available;
  }
  if (length > available) reject('Content-Length exceeds the bytes received');
  // A copy, so a small message does not pin a whole receive buffer.
  const body = Buffer.from(buf.subarray(section.bodyStart, section.bodyStart + length));

  if (startLine.kind === 'request') {
    return { kind: 'request', method: startLine.method, uri: startLine.uri, version: startLine.version, headers, body };
  }
  return { kind: 'response', status: startLine.status, reason: startLine.reason, version: startLine.version, headers, body };
}

/** Lines of a header section with no terminating empty line (only used for partial info). */
function scanLines(buf: Buffer, start: number): string[] {
  return buf
    .toString('utf8', start)
    .split(/\r?\n/)
    .filter((l) => l !== '');
}

/** One SipHeader per list element for list headers; other values stay opaque. */
function splitHeaders(raw: readonly RawHeader[]): { headers: SipHeader[] } | { error: string } {
  const headers: SipHeader[] = [];
  for (const h of raw) {
    if (!LIST_HEADERS.has(h.name) || h.value === '') {
      headers.push({ name: h.name, value: h.value });
      continue;
    }
    const parts = splitList(h.value);
    if (!parts) return { error: `unbalanced quotes or brackets in ${h.name}` };
    // Empty elements (`a, , b`) are not in the grammar; dropping them is harmless for token
    // lists, and a mangled address list still fails its own validation.
    for (const value of parts) if (value !== '') headers.push({ name: h.name, value });
  }
  return { headers };
}

function partialOf(sl: StartLine, headers: readonly SipHeader[]): PartialMessage {
  const first = (name: string): string | undefined => headers.find((h) => h.name === name)?.value;
  const p: PartialMessage = {
    kind: sl.kind,
    via: headers.filter((h) => h.name === 'via').map((h) => h.value),
    headers: headers.map((h) => ({ ...h })),
  };
  if (sl.kind === 'request') {
    if (sl.method) p.method = sl.method;
    if (sl.uri) p.uri = sl.uri;
  } else if (sl.status) {
    p.statusCode = sl.status;
  }
  const callId = first('call-id');
  const cseq = first('cseq');
  const from = first('from');
  const to = first('to');
  if (callId !== undefined) p.callId = callId;
  if (cseq !== undefined) p.cseq = cseq;
  if (from !== undefined) p.from = from;
  if (to !== undefined) p.to = to;
  return p;
}
