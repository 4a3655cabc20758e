/**
 * Byte-level framing shared by the datagram parser and the stream framer: finding the header
 * section, unfolding header lines, and reading Content-Length the same way in both places.
 */
import { longName } from './header-names.ts';
import { parseContentLength } from './header-values.ts';
import { isToken, trimWs } from './scan.ts';

const CR = 0x0d;
const LF = 0x0a;

export interface RawHeader {
  /** Lowercase long form. */
  name: string;
  value: string;
}

export type HeaderSection =
  | { kind: 'complete'; lines: string[]; bodyStart: number }
  | { kind: 'incomplete' }
  | { kind: 'error'; error: string };

/** RFC 3261 7.5: CRLFs before the start line are ignored (and carry keepalives on streams). */
export function skipLeadingCrlf(buf: Buffer, pos: number): number {
  while (pos < buf.length && (buf[pos] === CR || buf[pos] === LF)) pos++;
  return pos;
}

/**
 * Splits the start line and header lines, up to the empty line. Lines end in CRLF; a bare LF is
 * accepted too, because some stacks send it and nothing else can be meant.
 */
export function scanHeaderSection(buf: Buffer, start: number, maxLineBytes: number): HeaderSection {
  const lines: string[] = [];
  let pos = start;
  for (;;) {
    const lf = buf.indexOf(LF, pos);
    if (lf === -1) {
      return buf.length - pos > maxLineBytes ? { kind: 'error', error: 'line too long' } : { kind: 'incomplete' };
    }
    const end = lf > pos && buf[lf - 1] === CR ? lf - 1 : lf;
    if (end - pos > maxLineBytes) return { kind: 'error', error: 'line too long' };
    if (end === pos) return { kind: 'complete', lines, bodyStart: lf + 1 };
    const line = buf.toString('utf8', pos, end);
    if (line.includes('\r')) return { kind: 'error', error: 'bare CR in header section' };
    lines.push(line);
    pos = lf + 1;
  }
}

/**
 * Header lines (after the start line) to name/value pairs: continuation lines (leading SP/HT)
 * join the previous value with one SP, and `Name  :` spacing is tolerated.
 */
export function unfoldHeaders(lines: readonly string[]): { headers: RawHeader[] } | { error: string } {
  const headers: RawHeader[] = [];
  for (const line of lines) {
    if (line.startsWith(' ') || line.startsWith('\t')) {
      const last = headers.at(-1);
      if (!last) return { error: 'continuation line before the first header' };
      const more = trimWs(line);
      last.value = last.value === '' ? more : more === '' ? last.value : `${last.value} ${more}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon === -1) return { error: `header line without ':'` };
    const name = line.slice(0, colon).replace(/[ \t]+$/, '');
    if (!isToken(name)) return { error: 'malformed header name' };
    headers.push({ name: longName(name), value: trimWs(line.slice(colon + 1)) });
  }
  return { headers };
}

/**
 * The Content-Length of a header list: undefined when absent; an error when malformed
 * (negative, non-numeric) or when two values disagree (RFC 4475 mcl01).
 */
export function contentLengthOf(headers: readonly RawHeader[]): { length: number | undefined } | { error: string } {
  let length: number | undefined;
  for (const h of headers) {
    if (h.name !== 'content-length') continue;
    const n = parseContentLength(h.value);
    if (n === undefined) return { error: 'invalid Content-Length' };
    if (length !== undefined && length !== n) return { error: 'conflicting Content-Length values' };
    length = n;
  }
  return { length };
}
