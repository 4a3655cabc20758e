import { describe, expect, it } from 'vitest';
import { parseAssertedSource, SOURCE_HEADER, TrustedProxies } from '../../../src/sip/trusted-proxies.ts';
import type { SipRequest } from '../../../src/sip/message.ts';
import type { Source } from '../../../src/sip/transaction-types.ts';

function invite(...asserted: string[]): SipRequest {
  return {
    kind: 'request',
    method: 'INVITE',
    uri: 'sip:echo@127.0.0.1',
    version: 'SIP/2.0',
    headers: [{ name: 'via', value: 'SIP/2.0/UDP 127.0.0.5:5060;branch=z9hG4bKx' }, ...asserted.map((value) => ({ name: SOURCE_HEADER, value }))],
    body: Buffer.alloc(0),
  };
}
const from = (address: string, port = 5060): Source => ({ transport: 'udp', address, port });

describe('parseAssertedSource: ip[:port] as a proxy writes it', () => {
  it.each([
    ['203.0.113.9', { address: '203.0.113.9' }],
    ['203.0.113.9:5070', { address: '203.0.113.9', port: 5070 }],
    [' 203.0.113.9:5070 ', { address: '203.0.113.9', port: 5070 }],
    ['2001:db8::9', { address: '2001:db8::9' }],
    ['[2001:DB8::9]:5070', { address: '2001:db8::9', port: 5070 }],
    ['[::ffff:203.0.113.9]:5070', { address: '203.0.113.9', port: 5070 }],
  ])('%s → %j', (text, expected) => {
    expect(parseAssertedSource(text)).toEqual(expected);
  });

  it.each(['', 'pbx.example.com', 'pbx.example.com:5060', '203.0.113.9:0', '203.0.113.9:70000', '203.0.113.999', '[203.0.113.9]:5060', '203.0.113.9, 198.51.100.1', 'x'.repeat(100)])(
    'refuses %j',
    (text) => {
      expect(parseAssertedSource(text)).toBeUndefined();
    },
  );
});

describe('TrustedProxies: whose assertion of the original source is believed', () => {
  const proxies = new TrustedProxies('127.0.0.5, 10.1.0.0/16,fd00::/8');

  it('a trusted proxy asserting a source: that source (the port defaults to the packet source port)', () => {
    expect(proxies.origin(invite('127.0.0.9:5099'), from('127.0.0.5'))).toEqual({ transport: 'udp', address: '127.0.0.9', port: 5099 });
    expect(proxies.origin(invite('198.51.100.7'), from('10.1.2.3', 5080))).toEqual({ transport: 'udp', address: '198.51.100.7', port: 5080 });
    expect(proxies.origin(invite('[2001:db8::9]:5062'), from('fd00::5'))).toMatchObject({ address: '2001:db8::9', port: 5062 });
    // A v4-mapped packet source (dual-stack socket) is the IPv4 proxy.
    expect(proxies.origin(invite('127.0.0.9'), from('::ffff:127.0.0.5'))).toMatchObject({ address: '127.0.0.9' });
  });

  it('anyone else asserting a source: ignored, the packet source stands', () => {
    const source = from('127.0.0.6');
    expect(proxies.origin(invite('127.0.0.9'), source)).toBe(source);
    expect(proxies.origin(invite('127.0.0.9'), from('10.2.0.1'))).toMatchObject({ address: '10.2.0.1' });
  });

  it('a trusted proxy without a usable assertion (none, unreadable, or two): the packet source', () => {
    expect(proxies.origin(invite(), from('127.0.0.5'))).toMatchObject({ address: '127.0.0.5' });
    expect(proxies.origin(invite('pbx.example.com'), from('127.0.0.5'))).toMatchObject({ address: '127.0.0.5' });
    expect(proxies.origin(invite('127.0.0.9', '127.0.0.10'), from('127.0.0.5'))).toMatchObject({ address: '127.0.0.5' });
  });

  it('no proxies configured (the default): nobody is trusted', () => {
    const none = new TrustedProxies('');
    expect(none.size).toBe(0);
    expect(none.trusts('127.0.0.1')).toBe(false);
    expect(none.origin(invite('127.0.0.9'), from('127.0.0.5'))).toMatchObject({ address: '127.0.0.5' });
  });

  it('scrub removes the header from an untrusted source only', () => {
    const stranger = invite('127.0.0.9');
    expect(proxies.scrub(stranger, from('127.0.0.6'))).toBe(true);
    expect(stranger.headers.some((h) => h.name === SOURCE_HEADER)).toBe(false);
    const proxied = invite('127.0.0.9');
    expect(proxies.scrub(proxied, from('127.0.0.5'))).toBe(false);
    expect(proxied.headers.some((h) => h.name === SOURCE_HEADER)).toBe(true);
  });

  it('an invalid list is refused', () => {
    expect(() => new TrustedProxies('127.0.0.5,not-a-cidr')).toThrow(/SIP_TRUSTED_PROXIES: .*not-a-cidr/);
  });
});
