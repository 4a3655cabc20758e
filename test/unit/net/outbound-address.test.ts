import { describe, expect, it } from 'vitest';
import { classifyAddress, formatIpv4, parseIp } from '../../../src/net/outbound/address.ts';

const kind = (a: string) => {
  const c = classifyAddress(a);
  if (!c) throw new Error(`not an address: ${a}`);
  return c.forbidden ?? 'public';
};

describe('outbound address classifier', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this-network'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['254.1.1.1', 'reserved'],
    ['192.0.0.170', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
  ])('IPv4 %s is %s', (a, k) => expect(kind(a)).toBe(k));

  it.each(['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '169.253.255.255', '198.17.255.255', '198.20.0.0', '223.255.255.255', '11.0.0.0', '126.255.255.255', '128.0.0.0', '203.0.113.7'])(
    'IPv4 %s is public',
    (a) => expect(kind(a)).toBe('public'),
  );

  it.each([
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['100::1', 'reserved'],
    ['64:ff9b:1::a', 'private'],
  ])('IPv6 %s is %s', (a, k) => expect(kind(a)).toBe(k));

  it.each(['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001::1', 'fe7f:ffff::1', 'fbff::1', 'ff0::1', '1:2:3:4:5:6:7:8'])(
    'IPv6 %s is public',
    (a) => expect(kind(a)).toBe('public'),
  );

  it.each([
    ['::ffff:127.0.0.1', 'loopback', '127.0.0.1'],
    ['::ffff:7f00:1', 'loopback', '127.0.0.1'],
    ['[::ffff:169.254.169.254]', 'link-local', '169.254.169.254'],
    ['::ffff:10.1.2.3', 'private', '10.1.2.3'],
    ['64:ff9b::a9fe:a9fe', 'link-local', '169.254.169.254'],
    ['64:ff9b::192.168.0.1', 'private', '192.168.0.1'],
    ['2002:7f00:1::1', 'loopback', '127.0.0.1'],
    ['2002:c0a8:101::', 'private', '192.168.1.1'],
    ['::127.0.0.1', 'loopback', '127.0.0.1'],
    ['::ffff:0.0.0.0', 'unspecified', '0.0.0.0'],
    ['::ffff:255.255.255.255', 'broadcast', '255.255.255.255'],
  ])('IPv6 %s carries IPv4 and is %s', (a, k, v4) => {
    const c = classifyAddress(a)!;
    expect(c.forbidden).toBe(k);
    expect(formatIpv4(c.embedded!.bytes)).toBe(v4);
  });

  it.each(['::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])('IPv6 %s carries a public IPv4 and is public', (a) => {
    expect(kind(a)).toBe('public');
    expect(formatIpv4(classifyAddress(a)!.embedded!.bytes)).toBe('8.8.8.8');
  });

  it.each(['localhost', 'example.com', '1.2.3', '1.2.3.4.5', '256.1.1.1', '010.0.0.1', '0x7f.0.0.1', '1::2::3', '1:2:3:4:5:6:7:8:9', ':::', 'fe80::g', '', '[127.0.0.1', '1.2.3.4/8'])(
    '%j is not an address literal',
    (a) => {
      expect(parseIp(a)).toBeUndefined();
      expect(classifyAddress(a)).toBeUndefined();
    },
  );

  it('parses the IPv6 forms to the same bytes', () => {
    const a = parseIp('2001:db8::1')!.bytes;
    expect(parseIp('2001:0db8:0000:0000:0000:0000:0000:0001')!.bytes).toEqual(a);
    expect(parseIp('2001:DB8:0:0::1')!.bytes).toEqual(a);
    expect(parseIp('::ffff:1.2.3.4')!.bytes).toEqual(parseIp('::ffff:102:304')!.bytes);
  });
});
