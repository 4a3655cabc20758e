import { describe, expect, it } from 'vitest';
import { header, type SipMessage } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import { serializeMessage } from '../../../src/sip/serializer.ts';
import { TORTURE_CASES, torture } from './torture-fixtures.ts';

const withoutLength = (m: SipMessage) => ({ ...m, headers: m.headers.filter((h) => h.name !== 'content-length') });

function parseOk(buf: Buffer): SipMessage {
  const r = parseMessage(buf);
  if (!r.ok) throw new Error(r.error);
  return r.message;
}

describe('serializeMessage', () => {
  it('round-trips every torture message that parses', () => {
    let count = 0;
    for (const c of TORTURE_CASES) {
      const first = parseMessage(torture(c.name));
      if (!first.ok) continue;
      count++;
      const again = parseOk(serializeMessage(first.message));
      expect(withoutLength(again), c.name).toEqual(withoutLength(first.message));
      expect(header(again, 'content-length'), c.name).toBe(String(first.message.body.length));
      // Stable after one pass: serializing the re-parse gives the same bytes.
      expect(serializeMessage(again).equals(serializeMessage(first.message)), c.name).toBe(true);
    }
    expect(count).toBe(27);
  });

  it('writes canonical long names, one line per value', () => {
    const m = parseOk(torture('wsinv'));
    const text = serializeMessage(m).toString('utf8');
    expect(text.startsWith('INVITE sip:vivekg@chair-dnrc.example.com;unknownparam SIP/2.0\r\n')).toBe(true);
    expect(text).toContain('\r\nTo: sip:vivekg@chair-dnrc.example.com ;   tag    = 1918181833n\r\n');
    expect(text).toContain('\r\nCall-ID: wsinv.ndaksdj@192.0.2.1\r\n');
    expect(text).toContain('\r\nCSeq: 0009 INVITE\r\n');
    expect(text).toContain('\r\nMax-Forwards: 0068\r\n');
    expect(text.match(/\r\nVia: /g)).toHaveLength(3);
    expect(text).toContain('\r\nContact: "Quoted string \\"\\"" <sip:jdrosen@example.com>');
    expect(text).toContain('\r\nContent-Length: 150\r\n');
  });

  it('computes Content-Length from the body, replacing a stale value in place', () => {
    const bytes = serializeMessage({
      kind: 'response',
      version: 'SIP/2.0',
      status: 200,
      reason: 'OK',
      headers: [
        { name: 'via', value: 'SIP/2.0/UDP h;branch=z9hG4bK1' },
        { name: 'content-length', value: '999' },
        { name: 'www-authenticate', value: 'Digest realm="r", nonce="n"' },
        { name: 'content-length', value: '5' },
      ],
      body: Buffer.from([0, 1, 2]),
    });
    expect(bytes.toString('latin1')).toBe(
      'SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nContent-Length: 3\r\nWWW-Authenticate: Digest realm="r", nonce="n"\r\n\r\n\x00\x01\x02',
    );
  });

  it('appends Content-Length when absent, keeps UTF-8 reasons', () => {
    const m = parseOk(torture('unreason'));
    const text = serializeMessage(m).toString('utf8');
    expect(text.split('\r\n')[0]).toBe('SIP/2.0 200 = 2**3 * 5**2 но сто девяносто девять - простое');
    const inv = parseOk(torture('inv2543'));
    expect(serializeMessage(inv).toString('latin1')).toContain(`\r\nContent-Length: ${inv.body.length}\r\n\r\nv=0`);
  });

  it('refuses values that would inject lines', () => {
    const m = parseOk(torture('zeromf'));
    m.headers.push({ name: 'subject', value: 'hi\r\nVia: evil' });
    expect(() => serializeMessage(m)).toThrow(TypeError);
  });
});
