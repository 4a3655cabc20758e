import { describe, expect, it } from 'vitest';
import { parseCSeq, parseMaxForwards } from '../../../src/sip/header-values.ts';
import { header, headers, type SipMessage, type SipRequest, type SipResponse } from '../../../src/sip/message.ts';
import { parseNameAddr, tagOf } from '../../../src/sip/name-addr.ts';
import { parseMessage, type ParseResult } from '../../../src/sip/parser.ts';
import { parseSipUri, type SipUri } from '../../../src/sip/uri.ts';
import { isRfc3261Branch, parseVia } from '../../../src/sip/via.ts';
import { TORTURE_CASES, torture, tortureExtra } from './torture-fixtures.ts';

function parsed(name: string): SipMessage {
  const r = parseMessage(torture(name));
  if (!r.ok) throw new Error(`${name}: ${r.error}`);
  return r.message;
}
const request = (name: string): SipRequest => parsed(name) as SipRequest;
const response = (name: string): SipResponse => parsed(name) as SipResponse;
const failure = (r: ParseResult): Extract<ParseResult, { ok: false }> => {
  if (r.ok) throw new Error('expected a parse failure');
  return r;
};
const na = (value: string | undefined) => parseNameAddr(value ?? '')!;
const sipUri = (text: string): SipUri => parseSipUri(text)!;

describe('RFC 4475 fixtures', () => {
  it('has all 49 messages with the lengths INDEX.tsv gives', () => {
    expect(TORTURE_CASES).toHaveLength(49);
    for (const c of TORTURE_CASES) expect(torture(c.name).length, c.name).toBe(c.byteLength);
  });
});

describe('RFC 4475 3.1.1 valid messages', () => {
  it('every valid message parses', () => {
    for (const c of TORTURE_CASES.filter((t) => t.category === 'valid')) {
      const r = parseMessage(torture(c.name));
      expect(r.ok ? 'ok' : `${c.name}: ${r.error}`).toBe('ok');
    }
  });

  it('wsinv: folding, odd LWS, escaped quotes, compact names', () => {
    const m = request('wsinv');
    expect(m.method).toBe('INVITE');
    expect(m.uri).toBe('sip:vivekg@chair-dnrc.example.com;unknownparam');
    const vias = headers(m, 'via').map((v) => parseVia(v)!);
    expect(vias.map((v) => [v.transport, v.host, v.branch])).toEqual([
      ['UDP', '192.0.2.2', '390skdjuw'],
      ['TCP', 'spindle.example.com', 'z9hG4bK9ikj8'],
      ['UDP', '192.168.255.111', 'z9hG4bK30239'],
    ]);
    expect(parseMaxForwards(header(m, 'max-forwards')!)).toBe(68);
    expect(parseCSeq(header(m, 'cseq')!)).toEqual({ seq: 9, method: 'INVITE' });
    expect(tagOf(header(m, 'to')!)).toBe('1918181833n');
    const from = na(header(m, 'from'));
    expect(from.displayName).toBe('J Rosenberg \\"');
    expect(from.params.get('tag')).toBe('98asjd8');
    const contact = na(header(m, 'contact'));
    expect(contact.displayName).toBe('Quoted string ""');
    expect(contact.params.get('newparam')).toBe('newvalue');
    expect(contact.params.get('secondparam')).toBeNull();
    expect(contact.params.get('q')).toBe('0.33');
    expect(header(m, 'subject')).toBe('');
    expect(header(m, 'newfangledheader')).toBe('newfangled value continued newfangled value');
    expect(header(m, 'unknownheaderwithunusualvalue')).toBe(';;,,;;,;');
    expect(sipUri(na(header(m, 'route')).uri).params.has('lr')).toBe(true);
    expect(m.body.length).toBe(150);
  });

  it('intmeth: unusual method token, quoted-pair controls, UTF-8 values', () => {
    const m = request('intmeth');
    expect(m.method).toBe("!interesting-Method0123456789_*+`.%indeed'~");
    expect(parseCSeq(header(m, 'cseq')!)?.method).toBe(m.method);
    const ruri = sipUri(m.uri);
    expect(ruri.user).toBe("1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*");
    expect(ruri.password).toBe("&it+has=1,weird!*pas$wo~d_too.(doesn't-it)");
    expect(na(header(m, 'to')).displayName).toBe('BEL:\x07 NUL:\x00 DEL:\x7f');
    expect(na(header(m, 'from')).displayName).toBe("token1~` token2'+_ token3*%!.-");
    expect(header(m, 'extensionheader-!.%*+_`\'~')).toBe('\u{FEFF}大停電');
    expect(header(m, 'call-id')).toBe('intmeth.word%ZK-!.*_+\'@word`~)(><:\\/"][?}{');
  });

  it('esc01: user parts and uri-params are unescaped once', () => {
    const m = request('esc01');
    expect(sipUri(m.uri).user).toBe('sips:user@example.com');
    expect(sipUri(na(header(m, 'to')).uri).user).toBe('user');
    expect(sipUri(na(header(m, 'from')).uri).user).toBe('I have spaces');
    const contact = sipUri(na(header(m, 'contact')).uri);
    expect(contact.user).toBe('caller');
    expect(contact.params.get('lr')).toBeNull();
    expect(contact.params.get('name')).toBe('value%41');
    expect(header(m, 'content-type')).toBe('application/sdp');
  });

  it('escnull: %00 does not truncate the AOR; two distinct Contacts', () => {
    const m = request('escnull');
    expect(sipUri(na(header(m, 'to')).uri).user).toBe('null-\x00-null');
    expect(headers(m, 'contact').map((c) => sipUri(na(c).uri).user)).toEqual(['\x00', '\x00\x00']);
    expect(header(m, 'content-length')).toBe('0');
  });

  it('esc02: escaped method is not REGISTER; C%6Fntact is an extension header', () => {
    const m = request('esc02');
    expect(m.method).toBe('RE%47IST%45R');
    expect(na(header(m, 'to')).displayName).toBe('%Z%45');
    expect(headers(m, 'contact')).toHaveLength(2);
    expect(header(m, 'c%6fntact')).toBe('<sip:alias2@host2.example.com>');
  });

  it('lwsdisp: token display name without LWS before <', () => {
    expect(na(header(request('lwsdisp'), 'from')).displayName).toBe('caller');
  });

  it('longreq: 34 Vias under varied name spellings, long values', () => {
    const m = request('longreq');
    const vias = headers(m, 'via');
    expect(vias).toHaveLength(34);
    expect(vias.every((v) => parseVia(v) !== undefined)).toBe(true);
    expect(parseVia(vias[33]!)?.received).toBe('192.0.2.5');
    expect(na(header(m, 'to')).displayName).toMatch(/^I have a user name of (extreme){10} proportion$/);
    expect(sipUri(na(header(m, 'to')).uri).port).toBe(6000);
    expect(tagOf(header(m, 'from')!)).toMatch(/^1298298/);
    expect(header(m, 'call-id')).toMatch(/^longreq\.one(really){20}longcallid$/);
    expect(m.body.length).toBe(150);
  });

  it('dblreq: the REGISTER is parsed, the trailing INVITE ignored', () => {
    const m = request('dblreq');
    expect(m.method).toBe('REGISTER');
    expect(header(m, 'call-id')).toBe('dblreq.0ha0isndaksdj99sdfafnl3lk233412');
    expect(m.body.length).toBe(0);
  });

  it('semiuri: user part with ; and escaped @', () => {
    const m = request('semiuri');
    const uri = sipUri(m.uri);
    expect(uri.user).toBe('user;par=u@example.net');
    expect(uri.host).toBe('example.com');
    expect(headers(m, 'accept')).toHaveLength(6);
  });

  it('transports: five Vias, unknown transport accepted', () => {
    const vias = headers(request('transports'), 'via').map((v) => parseVia(v)!.transport);
    expect(vias).toEqual(['UDP', 'SCTP', 'TLS', 'UNKNOWN', 'TCP']);
  });

  it('mpart01: binary multipart body of exactly 553 bytes', () => {
    const m = request('mpart01');
    const raw = torture('mpart01');
    expect(m.body.length).toBe(553);
    expect(m.body.equals(raw.subarray(raw.length - 553))).toBe(true);
    expect(m.body.includes(0)).toBe(true);
    expect(parseVia(header(m, 'via')!)?.rport).toBeNull();
  });

  it('unreason: UTF-8 reason phrase', () => {
    const m = response('unreason');
    expect(m.status).toBe(200);
    expect(m.reason).toBe('= 2**3 * 5**2 но сто девяносто девять - простое');
  });

  it('noreason: empty reason phrase', () => {
    const m = response('noreason');
    expect(m.status).toBe(100);
    expect(m.reason).toBe('');
  });
});

describe('RFC 4475 3.1.2 invalid messages', () => {
  const expected: Record<string, number | 'drop'> = {
    badinv01: 400,
    clerr: 400,
    ncl: 400,
    scalar02: 400,
    scalarlg: 'drop',
    quotbal: 400,
    ltgtruri: 400,
    lwsruri: 400,
    lwsstart: 400,
    trws: 400,
    escruri: 400,
    baddate: 400,
    regbadct: 400,
    badaspec: 400,
    baddn: 400,
    badvers: 505,
    mismatch01: 400,
    mismatch02: 501,
    bigcode: 'drop',
  };

  it('covers every invalid message of INDEX.tsv', () => {
    expect(Object.keys(expected).sort()).toEqual(TORTURE_CASES.filter((c) => c.category === 'invalid').map((c) => c.name).sort());
  });

  for (const [name, status] of Object.entries(expected)) {
    it(`${name}: ${status === 'drop' ? 'dropped' : `answered ${status}`}`, () => {
      const r = failure(parseMessage(torture(name)));
      expect(r.status ?? 'drop').toBe(status);
      if (status !== 'drop') {
        // Enough to address the error response.
        expect(r.partial?.kind).toBe('request');
        expect(r.partial?.via.length).toBeGreaterThan(0);
        expect(r.partial?.callId).toBeDefined();
      } else {
        expect(r.partial?.kind).toBe('response');
      }
    });
  }

  it('gives reasons a human can act on', () => {
    expect(failure(parseMessage(torture('ncl'))).error).toMatch(/Content-Length/);
    expect(failure(parseMessage(torture('scalar02'))).error).toMatch(/CSeq/);
    expect(failure(parseMessage(torture('quotbal'))).error).toMatch(/To/);
    expect(failure(parseMessage(torture('mismatch01'))).error).toMatch(/CSeq method/);
  });

  it('baddn is still rejected with the final empty line restored', () => {
    expect(failure(parseMessage(tortureExtra('baddn.with-final-crlf.dat'))).status).toBe(400);
  });

  it('baddate parses when Date checking is turned off', () => {
    expect(parseMessage(torture('baddate'), { checkDate: false }).ok).toBe(true);
  });
});

describe('RFC 4475 3.2-3.4: parsed for the layers above, or rejected', () => {
  it('badbranch parses; the bare magic cookie means RFC 2543 matching', () => {
    const via = parseVia(header(request('badbranch'), 'via')!)!;
    expect(via.branch).toBe('z9hG4bK');
    expect(isRfc3261Branch(via.branch)).toBe(false);
  });

  it('insuf, multi01, mcl01 are answered 400', () => {
    expect(failure(parseMessage(torture('insuf'))).status).toBe(400);
    const multi = failure(parseMessage(torture('multi01')));
    expect(multi.status).toBe(400);
    expect(multi.partial?.via).toEqual(['SIP/2.0/UDP 192.0.2.25;branch=z9hG4bKkdjuw']);
    expect(failure(parseMessage(torture('mcl01'))).status).toBe(400);
  });

  it('unksm2 keeps non-SIP URIs in To/From/Contact', () => {
    const m = request('unksm2');
    expect(na(header(m, 'to')).parsedUri).toEqual({ scheme: 'isbn', opaque: '2983792873' });
    expect(na(header(m, 'from')).parsedUri.scheme).toBe('http');
    expect(na(header(m, 'contact')).parsedUri).toEqual({ scheme: 'name', opaque: 'John_Smith' });
  });

  it('regaut01 keeps the unknown Authorization scheme as an opaque value', () => {
    expect(header(request('regaut01'), 'authorization')).toBe('NoOneKnowsThisScheme opaque-data=here');
  });

  it('bcast exposes the broadcast sent-by for the layer that drops it', () => {
    const m = response('bcast');
    expect(headers(m, 'via').map((v) => parseVia(v)!.host)).toEqual(['192.0.2.198', '255.255.255.255']);
  });

  it('cparam01 vs cparam02: contact-param vs uri-param', () => {
    const c1 = na(header(request('cparam01'), 'contact'));
    expect(c1.params.has('unknownparam')).toBe(true);
    expect(sipUri(c1.uri).params.has('unknownparam')).toBe(false);
    expect(c1.uri).toBe('sip:+19725552222@gw1.example.net');
    const c2 = na(header(request('cparam02'), 'contact'));
    expect(c2.params.size).toBe(0);
    expect(sipUri(c2.uri).params.has('unknownparam')).toBe(true);
  });

  it('regescrt keeps the escaped Route header in the Contact URI', () => {
    const c = na(header(request('regescrt'), 'contact'));
    expect(c.uri).toBe('sip:user@example.com?Route=%3Csip:sip.example.com%3E');
    expect(sipUri(c.uri).headers.get('Route')).toBe('<sip:sip.example.com>');
  });

  it('inv2543: no branch, no From tag, body is the rest of the datagram', () => {
    const m = request('inv2543');
    expect(parseVia(header(m, 'via')!)?.branch).toBeUndefined();
    expect(tagOf(header(m, 'from')!)).toBeUndefined();
    expect(header(m, 'max-forwards')).toBeUndefined();
    expect(m.body.toString('latin1')).toMatch(/^v=0\r\n[^]*m=audio 49217 RTP\/AVP 0\r\n$/);
    expect(failure(parseMessage(torture('inv2543'), { transport: 'stream' })).error).toMatch(/Content-Length/);
  });

  it('zeromf parses with Max-Forwards 0', () => {
    expect(parseMaxForwards(header(request('zeromf'), 'max-forwards')!)).toBe(0);
  });
});
