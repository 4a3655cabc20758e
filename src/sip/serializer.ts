/**
 * SipMessage → bytes. Header names are written in canonical long form, one line per value, in
 * model order. Content-Length is always computed from the body (it replaces any stored value,
 * at the position of the first one, or goes last), so a stale stored length can never misframe.
 */
import { canonicalName } from './header-names.ts';
import type { SipMessage } from './message.ts';

function startLine(msg: SipMessage): string {
  return msg.kind === 'request'
    ? `${msg.method} ${msg.uri} ${msg.version}`
    : `${msg.version} ${msg.status} ${msg.reason}`;
}

/** Throws on CR/LF in a start line or header: that would let a value inject headers. */
function assertNoLineBreak(text: string, what: string): void {
  if (/[\r\n]/.test(text)) throw new TypeError(`line break in ${what}`);
}

export function serializeMessage(msg: SipMessage): Buffer {
  const first = startLine(msg);
  assertNoLineBreak(first, 'start line');
  const lines = [first];
  let lengthWritten = false;
  const contentLength = `Content-Length: ${msg.body.length}`;
  for (const h of msg.headers) {
    if (h.name === 'content-length') {
      if (!lengthWritten) lines.push(contentLength);
      lengthWritten = true;
      continue;
    }
    assertNoLineBreak(h.name, 'header name');
    assertNoLineBreak(h.value, `header ${h.name}`);
    lines.push(`${canonicalName(h.name)}: ${h.value}`);
  }
  if (!lengthWritten) lines.push(contentLength);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8');
  return Buffer.concat([head, msg.body]);
}
