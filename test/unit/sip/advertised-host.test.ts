import { describe, expect, it } from 'vitest';
import { advertisedHost, advertisedMediaHost, isIpv6Destination } from '../../../src/sip/advertised-host.ts';
import { ipKey } from '../../../src/util/ip.ts';

describe('advertisedHost: the public host named to a destination, by its family', () => {
  const both = { host: '203.0.113.5', host6: '2001:db8::5' };
  it.each([
    ['198.51.100.1', both, '203.0.113.5'],
    ['2001:db8::1', both, '2001:db8::5'],
    ['[2001:db8::1]', both, '2001:db8::5'],
    // v4-mapped destinations are IPv4 peers on a dual-stack socket.
    ['::ffff:198.51.100.1', both, '203.0.113.5'],
    ['0:0:0:0:0:ffff:c633:6401', both, '203.0.113.5'],
    [undefined, both, '203.0.113.5'],
    // No IPv6 host: none for an IPv6 destination, unless the public host is IPv6 or a name.
    ['2001:db8::1', { host: '203.0.113.5' }, undefined],
    ['2001:db8::1', { host: '2001:db8::7' }, '2001:db8::7'],
    ['2001:db8::1', { host: 'sip.example.com' }, 'sip.example.com'],
    ['198.51.100.1', { host: '203.0.113.5' }, '203.0.113.5'],
  ] as const)('%s with %j → %s', (peer, hosts, expected) => {
    expect(advertisedHost(peer, hosts)).toBe(expected);
  });

  it('isIpv6Destination tells names and IPv4 from IPv6', () => {
    expect(isIpv6Destination('carrier.example')).toBe(false);
    expect(isIpv6Destination('::1')).toBe(true);
    expect(isIpv6Destination('::ffff:127.0.0.1')).toBe(false);
  });
});

describe('advertisedMediaHost: what SDP c= names (RTP_PUBLIC_HOST)', () => {
  it.each([
    // IPv4 peers (and names, and v4-mapped) get the media host when one is set.
    ['198.51.100.1', { host: '203.0.113.5', mediaHost: '203.0.113.9' }, '203.0.113.9'],
    ['carrier.example', { host: '203.0.113.5', mediaHost: '203.0.113.9' }, '203.0.113.9'],
    ['::ffff:198.51.100.1', { host: '203.0.113.5', mediaHost: '203.0.113.9' }, '203.0.113.9'],
    [undefined, { host: '203.0.113.5', mediaHost: '203.0.113.9' }, '203.0.113.9'],
    // Unset: the signalling host, as before.
    ['198.51.100.1', { host: '203.0.113.5' }, '203.0.113.5'],
    // IPv6 peers keep SIP_PUBLIC_HOST6, or none at all.
    ['2001:db8::1', { host: '203.0.113.5', host6: '2001:db8::7', mediaHost: '203.0.113.9' }, '2001:db8::7'],
    ['2001:db8::1', { host: '203.0.113.5', mediaHost: '203.0.113.9' }, undefined],
  ] as const)('%s with %j → %s', (peer, hosts, expected) => {
    expect(advertisedMediaHost(peer, hosts)).toBe(expected);
  });
});

describe('ipKey: one spelling per address', () => {
  it.each([
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1'],
    ['::FFFF:7F00:0001', '127.0.0.1'],
    ['127.0.0.1', '127.0.0.1'],
    ['registrar.example', 'registrar.example'],
  ])('%s → %s', (input, key) => {
    expect(ipKey(input)).toBe(key);
  });
});
