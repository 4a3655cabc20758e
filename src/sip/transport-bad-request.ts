/**
 * Answering a request the parser rejected (§21.4.1, or the parser's 505/513/…): only when the
 * readable part holds what a response needs (Via, From, To, Call-ID, CSeq); otherwise drop.
 */
import type { SipRequest, SipResponse } from './message.ts';
import type { PartialMessage } from './parser.ts';
import { buildResponse } from './transaction-response.ts';

export function rejectionResponse(
  partial: PartialMessage | undefined,
  status: number | undefined,
  error: string,
): { response: SipResponse; request: SipRequest } | undefined {
  if (!partial || partial.kind !== 'request' || status === undefined) return undefined;
  if (!partial.method || partial.method.toUpperCase() === 'ACK') return undefined; // never answer an ACK
  for (const name of ['via', 'from', 'to', 'call-id', 'cseq']) {
    if (!partial.headers.some((h) => h.name === name)) return undefined;
  }
  const request: SipRequest = {
    kind: 'request',
    method: partial.method,
    uri: partial.uri ?? '',
    version: 'SIP/2.0',
    headers: partial.headers.map((h) => ({ ...h })),
    body: Buffer.alloc(0),
  };
  const reason = status === 400 ? `Bad Request (${error.replace(/[^\x20-\x7e]/g, '').slice(0, 80)})` : undefined;
  return { request, response: buildResponse(request, status, reason === undefined ? {} : { reason }) };
}
