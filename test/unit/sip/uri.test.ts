import { describe, expect, it } from 'vitest';
import { formatUri, parseSipUri, parseUri, type SipUri } from '../../../src/sip/uri.ts';

describe('parseUri', () => {
  it('reads every component of a SIP URI', () => {
    const u = parseSipUri('sips:alice:secret@Example.COM:5061;transport=tls;lr;maddr=239.255.255.1?subject=hi%20there&priority=urgent');
    expect(u).toEqual({
      scheme: 'sips',
      user: 'alice',
      password: 'secret',
      host: 'Example.COM',
      port: 5061,
      params: new Map([['transport', 'tls'], ['lr', null], ['maddr', '239.255.255.1']]),
      headers: new Map([['subject', 'hi there'], ['priority', 'urgent']]),
    } satisfies SipUri);
  });

  it('handles IPv6 references with and without a port', () => {
    expect(parseSipUri('sip:[2001:db8::10]:5070')).toMatchObject({ host: '[2001:db8::10]', port: 5070 });
    expect(parseSipUri('sip:bob@[::1];transport=tcp')).toMatchObject({ user: 'bob', host: '[::1]' });
    expect(parseSipUri('sip:[2001:db8::10')).toBeUndefined();
    expect(parseSipUri('sip:[2001:db8::10]x')).toBeUndefined();
  });

  it('unescapes once, and only valid escapes', () => {
    expect(parseSipUri('sip:%2541@h')?.user).toBe('%41');
    expect(parseSipUri('sip:a%ZZ@h')).toBeUndefined();
    expect(parseSipUri('sip:%C3%A9t%C3%A9@h')?.user).toBe('été');
  });

  it('rejects malformed SIP URIs', () => {
    for (const bad of ['sip:', 'sip:@h', 'sip:a@', 'sip:h:99999', 'sip:h:5x', 'sip:a b@h', 'sip:h;=x', 'sip:h;x=', 'sip:h?x', 'sip:<h>', 'sip:h;;lr']) {
      expect(parseUri(bad), bad).toBeUndefined();
    }
  });

  it('reads tel URIs and other schemes', () => {
    expect(parseUri('tel:+1-201-555-0123;ext=1234')).toEqual({
      scheme: 'tel',
      number: '+1-201-555-0123',
      params: new Map([['ext', '1234']]),
    });
    expect(parseUri('tel:')).toBeUndefined();
    expect(parseUri('soap.beep://192.0.2.103:3002')).toEqual({ scheme: 'soap.beep', opaque: '//192.0.2.103:3002' });
    expect(parseUri('1abc:x')).toBeUndefined();
    expect(parseUri('noscheme')).toBeUndefined();
    expect(parseUri('http:a b')).toBeUndefined();
  });
});

describe('formatUri', () => {
  it('escapes what the grammar requires and round-trips', () => {
    const u = parseSipUri('sip:sips%3Auser%40example.com@example.net')!;
    expect(u.user).toBe('sips:user@example.com');
    expect(formatUri(u)).toBe('sip:sips%3Auser%40example.com@example.net');
    for (const text of [
      'sip:user;par=u%40example.net@example.com',
      'sips:alice:pw@[2001:db8::1]:5061;transport=tls;lr?subject=a%20b',
      'sip:%00@host5.example.com',
      'tel:+1-201-555-0123;phone-context=example.com',
      'isbn:2983792873',
    ]) {
      expect(formatUri(parseUri(text)!)).toBe(text);
    }
  });
});
