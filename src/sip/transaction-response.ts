/** Building a response from a request (RFC 3261 §8.2.6): shared by transactions and the UA core. */
import { header, type SipHeader, type SipRequest, type SipResponse } from './message.ts';
import { tagOf } from './transaction-headers.ts';

const REASONS: Record<number, string> = {
  100: 'Trying', 180: 'Ringing', 181: 'Call Is Being Forwarded', 182: 'Queued', 183: 'Session Progress',
  200: 'OK', 202: 'Accepted', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found',
  405: 'Method Not Allowed', 407: 'Proxy Authentication Required', 408: 'Request Timeout',
  415: 'Unsupported Media Type', 420: 'Bad Extension', 422: 'Session Interval Too Small',
  480: 'Temporarily Unavailable', 481: 'Call/Transaction Does Not Exist', 486: 'Busy Here',
  487: 'Request Terminated', 488: 'Not Acceptable Here', 491: 'Request Pending', 500: 'Server Internal Error',
  501: 'Not Implemented', 503: 'Service Unavailable', 603: 'Decline',
};

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? (status < 200 ? 'Provisional' : status < 300 ? 'OK' : 'Error');
}

export interface ResponseOptions {
  reason?: string;
  /** To-tag to add when the request's To has none (ignored for 100 Trying, §8.2.6.2). */
  toTag?: string;
  headers?: SipHeader[];
  body?: Buffer;
}

export function buildResponse(req: SipRequest, status: number, opts: ResponseOptions = {}): SipResponse {
  const hdrs: SipHeader[] = [];
  for (const h of req.headers) if (h.name === 'via' || h.name === 'record-route') {
    // Record-Route is only mirrored in dialog-creating responses; 100 never creates a dialog.
    if (h.name === 'record-route' && (status === 100 || status >= 300)) continue;
    hdrs.push({ ...h });
  }
  const from = header(req, 'from');
  if (from !== undefined) hdrs.push({ name: 'from', value: from });
  let to = header(req, 'to') ?? '';
  if (opts.toTag && status !== 100 && tagOf(to) === undefined) to = `${to};tag=${opts.toTag}`;
  hdrs.push({ name: 'to', value: to });
  for (const name of ['call-id', 'cseq']) {
    const v = header(req, name);
    if (v !== undefined) hdrs.push({ name, value: v });
  }
  const ts = header(req, 'timestamp');
  if (status === 100 && ts !== undefined) hdrs.push({ name: 'timestamp', value: ts });
  for (const h of opts.headers ?? []) hdrs.push({ name: h.name.toLowerCase(), value: h.value });
  const body = opts.body ?? Buffer.alloc(0);
  hdrs.push({ name: 'content-length', value: String(body.length) });
  return { kind: 'response', version: 'SIP/2.0', status, reason: opts.reason ?? reasonPhrase(status), headers: hdrs, body };
}
