/**
 * Building requests inside a dialog (RFC 3261 §12.2.1.1), including the strict-routing case
 * (§12.2.1.1: first Route without `lr` becomes the Request-URI).
 */
import { header, headers, type SipHeader, type SipRequest, type SipResponse } from './message.ts';
import { tagOf } from './transaction-headers.ts';
import { parseNameAddr } from './name-addr.ts';

export interface DialogAddressing {
  callId: string;
  localUri: string;
  localTag: string;
  remoteUri: string;
  remoteTag: string;
  remoteTarget: string;
  /** Route header values in the order they go into requests. */
  routeSet: string[];
  localContact: string;
}

export interface InDialogOptions {
  cseq: number;
  headers?: SipHeader[];
  body?: Buffer;
  contentType?: string;
}

export function buildInDialogRequest(d: DialogAddressing, method: string, opts: InDialogOptions): SipRequest {
  let uri = d.remoteTarget;
  let routes = d.routeSet;
  const first = d.routeSet[0];
  const firstUri = first === undefined ? undefined : parseNameAddr(first)?.uri;
  if (firstUri !== undefined && !/;lr(=|;|$)/i.test(firstUri)) {
    uri = firstUri;
    routes = [...d.routeSet.slice(1), `<${d.remoteTarget}>`];
  }
  const hdrs: SipHeader[] = [
    { name: 'max-forwards', value: '70' },
    { name: 'from', value: `${d.localUri};tag=${d.localTag}` },
    { name: 'to', value: `${d.remoteUri};tag=${d.remoteTag}` },
    { name: 'call-id', value: d.callId },
    { name: 'cseq', value: `${opts.cseq} ${method}` },
  ];
  for (const r of routes) hdrs.push({ name: 'route', value: r });
  if (method === 'INVITE' || method === 'UPDATE') hdrs.push({ name: 'contact', value: d.localContact });
  for (const h of opts.headers ?? []) hdrs.push({ name: h.name.toLowerCase(), value: h.value });
  const body = opts.body ?? Buffer.alloc(0);
  if (body.length > 0) hdrs.push({ name: 'content-type', value: opts.contentType ?? 'application/sdp' });
  hdrs.push({ name: 'content-length', value: String(body.length) });
  return { kind: 'request', method, uri, version: 'SIP/2.0', headers: hdrs, body };
}

/** A From/To value without its tag parameter, keeping display name and other params. */
export function withoutTag(value: string): string {
  return value.replace(/;\s*tag\s*=\s*[^;>\s]+/i, '');
}

/** The URI of the first Contact value, as written. */
export function contactUri(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return parseNameAddr(value)?.uri;
}

export function dialogId(callId: string, localTag: string, remoteTag: string): string {
  return `${callId};${localTag};${remoteTag}`;
}

/** The Allow header values of a message, as uppercase method names. */
export function allowedMethods(msg: SipRequest | SipResponse): string[] {
  return headers(msg, 'allow').flatMap((v) => v.split(',')).map((m) => m.trim().toUpperCase()).filter(Boolean);
}

/** Addressing for the UAS side from the INVITE and the To-tag we chose (§12.1.1). */
export function uasAddressing(invite: SipRequest, localTag: string, localContact: string): DialogAddressing {
  return {
    callId: header(invite, 'call-id') ?? '',
    localUri: withoutTag(header(invite, 'to') ?? ''),
    localTag,
    remoteUri: withoutTag(header(invite, 'from') ?? ''),
    remoteTag: tagOf(header(invite, 'from')) ?? '',
    remoteTarget: contactUri(header(invite, 'contact')) ?? invite.uri,
    routeSet: headers(invite, 'record-route'),
    localContact,
  };
}

/** Addressing for the UAC side from our INVITE and the 2xx that created the dialog (§12.1.2). */
export function uacAddressing(invite: SipRequest, res: SipResponse, localContact: string): DialogAddressing {
  return {
    callId: header(invite, 'call-id') ?? '',
    localUri: withoutTag(header(invite, 'from') ?? ''),
    localTag: tagOf(header(invite, 'from')) ?? '',
    remoteUri: withoutTag(header(res, 'to') ?? ''),
    remoteTag: tagOf(header(res, 'to')) ?? '',
    remoteTarget: contactUri(header(res, 'contact')) ?? invite.uri,
    routeSet: headers(res, 'record-route').reverse(),
    localContact,
  };
}
