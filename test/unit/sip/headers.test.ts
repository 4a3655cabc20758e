import { describe, expect, it } from 'vitest';
import { isValidSipDate, mediaType, parseCSeq, parseMaxForwards } from '../../../src/sip/header-values.ts';
import { formatNameAddr, parseNameAddr, tagOf } from '../../../src/sip/name-addr.ts';
import { splitList } from '../../../src/sip/scan.ts';
import { formatVia, isRfc3261Branch, parseVia } from '../../../src/sip/via.ts';

describe('parseNameAddr', () => {
  it('reads quoted and token display names, brackets and params', () => {
    const a = parseNameAddr('"Alice \\"A\\" Smith" <sip:alice@example.com;transport=tcp>;tag=abc;expires=60;q=0.5')!;
    expect(a.displayName).toBe('Alice "A" Smith');
    expect(a.uri).toBe('sip:alice@example.com;transport=tcp');
    expect([...a.params]).toEqual([['tag', 'abc'], ['expires', '60'], ['q', '0.5']]);
    expect(parseNameAddr('Bob  Jones <sip:bob@h>')?.displayName).toBe('Bob Jones');
    expect(parseNameAddr('<sip:bob@h>')?.displayName).toBeUndefined();
  });

  it('treats params after an addr-spec as header params', () => {
    const a = parseNameAddr('sip:bob@h;tag=1;lr')!;
    expect(a.uri).toBe('sip:bob@h');
    expect(a.params.get('tag')).toBe('1');
    expect(tagOf('sip:bob@h;tag=1')).toBe('1');
    expect(tagOf('<sip:bob@h;tag=1>')).toBeUndefined();
  });

  it('keeps quoted param values raw, even with brackets inside', () => {
    const a = parseNameAddr('sip:a@h;+sip.instance="<urn:uuid:1>"')!;
    expect(a.params.get('+sip.instance')).toBe('"<urn:uuid:1>"');
  });

  it('rejects what RFC 4475 calls malformed', () => {
    for (const bad of [
      '"Mr. J. User <sip:j.user@example.com>',
      'Bell, Alexander <sip:a.g.bell@example.com>',
      '< sip:t.watson@example.org >',
      'sip:user@example.com?Route=%3Csip:sip.example.com%3E',
      '<sip:joe@example.org>;;;;',
      '<sip:joe@example.org',
      '<sip:joe@example.org> junk',
      '',
      '*',
    ]) {
      expect(parseNameAddr(bad), bad).toBeUndefined();
    }
  });

  it('formats in bracketed form', () => {
    const a = parseNameAddr('Bob <sip:bob@h>;tag=9')!;
    expect(formatNameAddr(a)).toBe('"Bob" <sip:bob@h>;tag=9');
    expect(formatNameAddr({ uri: 'sip:x@y', params: new Map() })).toBe('<sip:x@y>');
  });
});

describe('parseVia', () => {
  it('reads protocol, transport, sent-by and the well-known params', () => {
    const v = parseVia('SIP/2.0/udp [2001:db8::9]:5062;branch=z9hG4bK776;received=2001:db8::1;rport=5070;maddr=224.2.0.1;ttl=16')!;
    expect(v).toMatchObject({
      protocol: 'SIP',
      version: '2.0',
      transport: 'UDP',
      host: '[2001:db8::9]',
      port: 5062,
      branch: 'z9hG4bK776',
      received: '2001:db8::1',
      rport: 5070,
      maddr: '224.2.0.1',
      ttl: 16,
    });
    expect(parseVia('SIP/2.0/TCP h;rport')?.rport).toBeNull();
  });

  it('rejects malformed values', () => {
    for (const bad of [
      'SIP/2.0/UDP 192.0.2.15;;',
      ';',
      'SIP/2.0/UDP',
      'SIP/2.0 UDP h',
      'SIP/2.0/UDP h:70000',
      'SIP/2.0/UDP h;ttl=256',
      'SIP/2.0/UDP h;branch',
      'SIP/2.0/UDP h;rport=x',
      'SIP/2.0/UDP h junk',
    ]) {
      expect(parseVia(bad), bad).toBeUndefined();
    }
  });

  it('formats and recognises RFC 3261 branches', () => {
    const v = parseVia('SIP / 2.0 / TCP  h.example.com : 5060 ; branch = z9hG4bKx ; rport')!;
    expect(formatVia(v)).toBe('SIP/2.0/TCP h.example.com:5060;branch=z9hG4bKx;rport');
    expect(isRfc3261Branch('z9hG4bKx')).toBe(true);
    expect(isRfc3261Branch('z9hG4bK')).toBe(false);
    expect(isRfc3261Branch('390skdjuw')).toBe(false);
    expect(isRfc3261Branch(undefined)).toBe(false);
  });
});

describe('scalar header values', () => {
  it('CSeq: number up to 2^32-1 and a method token', () => {
    expect(parseCSeq('4294967295 INVITE')).toEqual({ seq: 4294967295, method: 'INVITE' });
    expect(parseCSeq('4294967296 INVITE')).toBeUndefined();
    expect(parseCSeq('-1 INVITE')).toBeUndefined();
    expect(parseCSeq('1')).toBeUndefined();
    expect(parseCSeq('1 INVITE x')).toBeUndefined();
  });

  it('Max-Forwards, Date, media types', () => {
    expect(parseMaxForwards('0068')).toBe(68);
    expect(parseMaxForwards('256')).toBeUndefined();
    expect(isValidSipDate('Sat, 15 Oct 2005 04:44:56 GMT')).toBe(true);
    expect(isValidSipDate('Fri, 01 Jan 2010 16:00:00 EST')).toBe(false);
    expect(mediaType('Multipart/Mixed;boundary=x')).toBe('multipart/mixed');
    expect(mediaType('nonsense')).toBeUndefined();
  });
});

describe('splitList', () => {
  it('splits on commas outside quotes and angle brackets', () => {
    expect(splitList('"a, b" <sip:x@y;p=1,2>, <sip:z@w> ,sip:q@r')).toEqual(['"a, b" <sip:x@y;p=1,2>', '<sip:z@w>', 'sip:q@r']);
    expect(splitList('"a\\", b" <sip:x@y>')).toEqual(['"a\\", b" <sip:x@y>']);
    expect(splitList('"open')).toBeUndefined();
    expect(splitList('<sip:x@y')).toBeUndefined();
    expect(splitList('*')).toEqual(['*']);
  });
});
