import { describe, expect, it } from 'vitest';
import { ipMatcher, isIpOrCidr, isLoopbackHost, isSipHost, parseIpOrCidr } from '../../src/util/ip.ts';

describe('allowed inbound IPs', () => {
  it.each(['203.0.113.7', '2001:db8::1', '::1', '10.0.0.0/8', '203.0.113.0/24', '2001:db8::/32', '192.0.2.1/32'])('accepts %s', (v) => {
    expect(isIpOrCidr(v)).toBe(true);
  });
  it.each(['256.1.1.1', '1.2.3', 'example.com', '10.0.0.0/33', '0.0.0.0/0', '::/0', '10.0.0.0/x', '1.2.3.4/8/8', '', '2001:db8::/129'])(
    'rejects %j',
    (v) => expect(isIpOrCidr(v)).toBe(false),
  );
  it('parses family and prefix', () => {
    expect(parseIpOrCidr('10.1.0.0/16')).toEqual({ address: '10.1.0.0', prefix: 16, family: 'ipv4' });
    expect(parseIpOrCidr('2001:db8::5')).toEqual({ address: '2001:db8::5', prefix: 128, family: 'ipv6' });
  });
  it('matches single addresses and ranges, v4 and v6', () => {
    const allows = ipMatcher(['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);
    expect(allows('203.0.113.7')).toBe(true);
    expect(allows('203.0.113.8')).toBe(false);
    expect(allows('198.51.100.200')).toBe(true);
    expect(allows('198.51.101.1')).toBe(false);
    expect(allows('2001:db8:1::9')).toBe(true);
    expect(allows('[2001:db8::9]')).toBe(true);
    expect(allows('2001:db9::1')).toBe(false);
    expect(allows('not-an-ip')).toBe(false);
  });
});

describe('isSipHost', () => {
  it.each(['sip.example.com', 'pbx', 'sip-1.carrier.net', 'sip.example.com.', '203.0.113.7', '2001:db8::1', '[2001:db8::1]'])('accepts %s', (h) => {
    expect(isSipHost(h)).toBe(true);
  });
  it.each([
    'sip.example.com:5060',
    'sip:sip.example.com',
    'sips://sip.example.com',
    'sip.example.com/path',
    '203.0.113.7:5060',
    '[2001:db8::1]:5060',
    '999.1.1.1',
    '-bad.example.com',
    'under_score.example.com',
    'a..b',
    '',
    'user@sip.example.com',
  ])('rejects %j', (h) => expect(isSipHost(h)).toBe(false));
});

describe('isLoopbackHost', () => {
  it('knows loopback hosts', () => {
    for (const h of ['localhost', '127.0.0.1', '127.8.9.1', '[::1]', '::1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['example.com', '10.0.0.1', '128.0.0.1', 'localhost.evil.com', '[::2]']) expect(isLoopbackHost(h)).toBe(false);
  });
});
