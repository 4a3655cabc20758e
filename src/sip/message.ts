/**
 * The SIP message model shared by the parser, serializer, transactions and dialogs.
 * Headers keep their wire order; names are stored in canonical long form, lowercase
 * (compact forms such as `v`, `f`, `i` are expanded by the parser).
 */
export interface SipHeader {
  /** Lowercase long-form name, e.g. `via`, `call-id`, `content-length`. */
  name: string;
  /** Raw value with folding (LWS) collapsed, surrounding whitespace trimmed. */
  value: string;
}

interface SipMessageBase {
  version: string; // "SIP/2.0"
  headers: SipHeader[];
  body: Buffer;
}

export interface SipRequest extends SipMessageBase {
  kind: 'request';
  method: string;
  /** Request-URI as it appeared on the wire. */
  uri: string;
}

export interface SipResponse extends SipMessageBase {
  kind: 'response';
  status: number;
  reason: string;
}

export type SipMessage = SipRequest | SipResponse;

/** First value of a header (multi-value headers like Via are split into one entry per value). */
export function header(msg: SipMessage, name: string): string | undefined {
  const lower = name.toLowerCase();
  return msg.headers.find((h) => h.name === lower)?.value;
}

export function headers(msg: SipMessage, name: string): string[] {
  const lower = name.toLowerCase();
  return msg.headers.filter((h) => h.name === lower).map((h) => h.value);
}

export function setHeader(msg: SipMessage, name: string, value: string): void {
  const lower = name.toLowerCase();
  const idx = msg.headers.findIndex((h) => h.name === lower);
  if (idx === -1) msg.headers.push({ name: lower, value });
  else {
    msg.headers[idx] = { name: lower, value };
    msg.headers = msg.headers.filter((h, i) => h.name !== lower || i === idx);
  }
}

export function removeHeader(msg: SipMessage, name: string): void {
  const lower = name.toLowerCase();
  msg.headers = msg.headers.filter((h) => h.name !== lower);
}
