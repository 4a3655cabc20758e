/**
 * Request-Line and Status-Line (RFC 3261 7.1, 7.2). Errors are returned, not thrown, so the
 * parser can still read Via, Call-ID and CSeq to address its 400 or 505.
 */
import { isToken } from './scan.ts';
import { isSipUri, parseUri } from './uri.ts';

interface LineError {
  error?: string;
  errorStatus?: number;
}

export type StartLine =
  | ({ kind: 'request'; method: string; uri: string; version: string } & LineError)
  | ({ kind: 'response'; status: number; reason: string; version: string } & LineError);

const VERSION_RE = /^SIP\/\d+\.\d+$/i;

export function parseStartLine(line: string): StartLine {
  if (/^SIP\//i.test(line)) return parseStatusLine(line);
  return parseRequestLine(line);
}

function parseStatusLine(line: string): StartLine {
  // The SP before an empty reason is required by the grammar; its absence is tolerated.
  const m = /^(\S+) (\d{3})(?: ([^]*))?$/.exec(line);
  if (!m) return { kind: 'response', status: 0, reason: '', version: '', error: 'malformed Status-Line' };
  const out: StartLine = { kind: 'response', status: Number(m[2]), reason: m[3] ?? '', version: m[1]!.toUpperCase() };
  if (out.version !== 'SIP/2.0') out.error = 'unsupported SIP version';
  else if (out.status < 100 || out.status > 699) out.error = 'status code out of range';
  return out;
}

function parseRequestLine(line: string): StartLine {
  // Exactly one SP between the three elements: extra or trailing SPs (RFC 4475 lwsstart,
  // trws) and LWS inside the URI (lwsruri) are malformed, and a proxy must not forward them.
  const parts = line.split(' ');
  const [method = '', uri = '', version = ''] = parts;
  const out: StartLine = { kind: 'request', method, uri, version: version.toUpperCase() };
  if (parts.length !== 3 || !isToken(method)) {
    out.error = 'malformed Request-Line';
    return out;
  }
  if (!VERSION_RE.test(version)) {
    out.error = 'malformed SIP version';
  } else if (out.version !== 'SIP/2.0') {
    out.error = 'unsupported SIP version';
    out.errorStatus = 505;
  } else if (uri.startsWith('<')) {
    out.error = 'Request-URI enclosed in angle brackets';
  } else {
    const parsed = parseUri(uri);
    if (!parsed) out.error = 'malformed Request-URI';
    // Table 1 of RFC 3261 19.1.1: the headers component is not allowed in a Request-URI.
    else if (isSipUri(parsed) && parsed.headers.size > 0) {
      out.error = 'Request-URI carries header fields';
    }
  }
  return out;
}
