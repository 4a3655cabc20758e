import { describe, expect, it } from 'vitest';
import { header, headers } from '../../../src/sip/message.ts';
import { parseMessage, type ParseResult } from '../../../src/sip/parser.ts';

const BASE = [
  'OPTIONS sip:bob@example.com SIP/2.0',
  'Via: SIP/2.0/UDP pc33.example.com;branch=z9hG4bK776asdhds',
  'Max-Forwards: 70',
  'To: <sip:bob@example.com>',
  'From: "Alice" <sip:alice@example.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.example.com',
  'CSeq: 63104 OPTIONS',
];

function msg(extra: string[] = [], body = '', lines = BASE): Buffer {
  return Buffer.from(`${[...lines, ...extra].join('\r\n')}\r\n\r\n${body}`, 'utf8');
}

const failure = (r: ParseResult): Extract<ParseResult, { ok: false }> => {
  if (r.ok) throw new Error('expected failure');
  return r;
};

describe('parseMessage', () => {
  it('expands compact names, keeps wire order, splits list headers', () => {
    const r = parseMessage(msg(['k: timer, 100rel', 'Allow: INVITE,ACK , BYE', 'm: <sip:a@h>, "x, y" <sip:b@h>', 'Date: Sat, 13 Nov 2010 23:29:00 GMT']));
    if (!r.ok) throw new Error(r.error);
    expect(headers(r.message, 'supported')).toEqual(['timer', '100rel']);
    expect(headers(r.message, 'allow')).toEqual(['INVITE', 'ACK', 'BYE']);
    expect(headers(r.message, 'contact')).toEqual(['<sip:a@h>', '"x, y" <sip:b@h>']);
    expect(header(r.message, 'date')).toBe('Sat, 13 Nov 2010 23:29:00 GMT');
    expect(r.message.headers.map((h) => h.name).slice(0, 3)).toEqual(['via', 'max-forwards', 'to']);
  });

  it('ignores leading CRLFs and accepts bare LF line endings', () => {
    expect(parseMessage(Buffer.concat([Buffer.from('\r\n\r\n'), msg()])).ok).toBe(true);
    expect(parseMessage(Buffer.from(`${BASE.join('\n')}\n\n`)).ok).toBe(true);
  });

  it('frames datagrams by Content-Length', () => {
    const r = parseMessage(msg(['Content-Type: text/plain', 'Content-Length: 5'], 'hello world'));
    expect(r.ok && r.message.body.toString()).toBe('hello');
    expect(parseMessage(msg(['Content-Type: text/plain'], 'all of it')).ok && true).toBe(true);
    expect(failure(parseMessage(msg(['Content-Type: text/plain', 'Content-Length: 50'], 'short'))).status).toBe(400);
    expect(parseMessage(msg(['Content-Length: 0', 'l: 0'])).ok).toBe(true);
    expect(failure(parseMessage(msg(['Content-Length: +0']))).error).toMatch(/Content-Length/);
  });

  it('requires Content-Length on stream transports', () => {
    expect(failure(parseMessage(msg(), { transport: 'stream' })).error).toMatch(/Content-Length/);
    expect(parseMessage(msg(['Content-Length: 0']), { transport: 'stream' }).ok).toBe(true);
  });

  it('enforces the configurable caps with an answer for requests', () => {
    const big = failure(parseMessage(msg([], 'x'.repeat(200)), { maxMessageBytes: 300 }));
    expect(big).toMatchObject({ status: 513, error: 'message too large' });
    expect(failure(parseMessage(msg(['X-Long: '.padEnd(200, 'y')]), { maxLineBytes: 100 }))).toMatchObject({ status: 400, error: 'line too long' });
    expect(failure(parseMessage(msg(['A: 1', 'B: 2']), { maxHeaders: 7 }))).toMatchObject({ status: 400, error: 'too many headers' });
    expect(failure(parseMessage(msg(['Supported: a,b,c']), { maxHeaders: 8 })).error).toBe('too many headers');
    const response = Buffer.from(`SIP/2.0 200 OK\r\n${BASE.slice(1).join('\r\n')}\r\n\r\n${'x'.repeat(400)}`);
    expect(failure(parseMessage(response, { maxMessageBytes: 300 })).status).toBeUndefined();
  });

  it('rejects malformed header lines and continuation before any header', () => {
    expect(failure(parseMessage(msg(['no colon here']))).status).toBe(400);
    expect(failure(parseMessage(msg(['Bad Name: x']))).status).toBe(400);
    const lines = [BASE[0]!, ' folded', ...BASE.slice(1)];
    expect(failure(parseMessage(msg([], '', lines))).error).toMatch(/continuation/);
  });

  it('returns what a 400 needs in partial', () => {
    const r = failure(parseMessage(msg(['Max-Forwards: 71'])));
    expect(r.status).toBe(400);
    expect(r.partial).toMatchObject({
      kind: 'request',
      method: 'OPTIONS',
      uri: 'sip:bob@example.com',
      callId: 'a84b4c76e66710@pc33.example.com',
      cseq: '63104 OPTIONS',
      to: '<sip:bob@example.com>',
      via: ['SIP/2.0/UDP pc33.example.com;branch=z9hG4bK776asdhds'],
    });
  });

  it('validates Request-URI, scalars and addresses', () => {
    const withLine = (first: string) => msg([], '', [first, ...BASE.slice(1)]);
    expect(failure(parseMessage(withLine('OPTIONS sip:bob@ SIP/2.0'))).error).toMatch(/Request-URI/);
    expect(failure(parseMessage(withLine('OPTIONS sip:bob@example.com SIP/2'))).status).toBe(400);
    expect(failure(parseMessage(withLine('OPTIONS sip:bob@example.com sip/3.0'))).status).toBe(505);
    expect(parseMessage(withLine('OPTIONS tel:+15551234 SIP/2.0')).ok).toBe(true);
    expect(failure(parseMessage(msg(['Content-Type: nonsense']))).status).toBe(400);
    expect(failure(parseMessage(msg(['Route: sip:proxy.example.com;lr']))).status).toBe(400);
    expect(failure(parseMessage(msg(['Contact: *', 'Contact: <sip:a@h>']))).status).toBe(400);
    expect(parseMessage(msg(['Contact: *'])).ok).toBe(true);
    const noCallId = BASE.filter((l) => !l.startsWith('Call-ID'));
    expect(failure(parseMessage(msg([], '', noCallId))).error).toBe('missing Call-ID');
  });

  it('drops malformed responses', () => {
    for (const first of ['SIP/2.0 99 Low', 'SIP/2.0 700 High', 'SIP/3.0 200 OK', 'SIP/2.0 2000 OK', 'SIP/2.0 OK']) {
      const r = failure(parseMessage(msg([], '', [first, ...BASE.slice(1)])));
      expect(r.status, first).toBeUndefined();
      expect(r.partial?.kind).toBe('response');
    }
    const ok = parseMessage(msg([], '', ['SIP/2.0 180', ...BASE.slice(1)]));
    expect(ok.ok && ok.message.kind === 'response' && ok.message.reason).toBe('');
  });
});
