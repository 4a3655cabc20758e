/**
 * Message-level checks the parser applies before handing a message up (RFC 3261 8.1.1, 20):
 * mandatory and single-valued headers, numeric scalars, and the syntax of the headers every
 * layer above relies on (Via, To, From, Contact, Route). Unknown headers stay opaque.
 */
import { canonicalName } from './header-names.ts';
import { isValidSipDate, mediaType, parseCSeq, parseMaxForwards } from './header-values.ts';
import type { SipHeader } from './message.ts';
import { KNOWN_METHODS } from './methods.ts';
import { isWildcardContact, parseNameAddr } from './name-addr.ts';
import { reject } from './parse-reject.ts';
import type { StartLine } from './start-line.ts';
import { parseVia } from './via.ts';

const SINGLE = ['to', 'from', 'call-id', 'cseq'] as const;
const ROUTE_LIKE = ['route', 'record-route', 'path', 'service-route'];

export function validateHeaders(sl: StartLine, headers: readonly SipHeader[], opts: { checkDate: boolean }): void {
  const values = (name: string): string[] => headers.filter((h) => h.name === name).map((h) => h.value);

  for (const name of SINGLE) {
    const n = values(name).length;
    if (n === 0) reject(`missing ${canonicalName(name)}`);
    if (n > 1) reject(`multiple ${canonicalName(name)} values`);
  }
  const vias = values('via');
  if (vias.length === 0) reject('missing Via');

  const cseq = parseCSeq(values('cseq')[0]!);
  if (!cseq) reject('malformed CSeq');
  if (sl.kind === 'request' && cseq.method !== sl.method) {
    // RFC 4475 mismatch02: for a method we don't know, 501 is the preferred answer.
    reject('CSeq method does not match the Request-Line', KNOWN_METHODS.includes(sl.method) ? 400 : 501);
  }

  const mf = values('max-forwards');
  if (mf.length > 1) reject('multiple Max-Forwards values');
  if (mf[0] !== undefined && parseMaxForwards(mf[0]) === undefined) reject('malformed Max-Forwards');

  const callId = values('call-id')[0]!;
  if (callId === '' || /\s/.test(callId)) reject('malformed Call-ID');

  for (const v of vias) if (!parseVia(v)) reject('malformed Via');
  for (const name of ['to', 'from']) if (!parseNameAddr(values(name)[0]!)) reject(`malformed ${canonicalName(name)}`);

  const contacts = values('contact');
  if (contacts.some(isWildcardContact)) {
    if (contacts.length > 1) reject('wildcard Contact mixed with other values');
  } else {
    for (const c of contacts) if (!parseNameAddr(c)) reject('malformed Contact');
  }
  for (const name of ROUTE_LIKE) {
    for (const v of values(name)) if (!v.includes('<') || !parseNameAddr(v)) reject(`malformed ${canonicalName(name)}`);
  }

  const ct = values('content-type');
  if (ct.length > 1) reject('multiple Content-Type values');
  if (ct[0] !== undefined && mediaType(ct[0]) === undefined) reject('malformed Content-Type');

  if (opts.checkDate) for (const d of values('date')) if (!isValidSipDate(d)) reject('malformed Date');
}
