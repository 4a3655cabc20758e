/**
 * When an RTP socket may be connect()ed to its peer (connect-guard.ts): always when bound to a
 * specific address; when bound to the wildcard, only where the kernel would pin the socket to
 * the address the peer sends to (the advertised one).
 */
import { describe, expect, it } from 'vitest';
import { connectKeepsMedia, isWildcardAddress, probeRouteSource } from '../../../src/media/connect-guard.ts';

describe('connectKeepsMedia', () => {
  it('a socket bound to a specific address keeps it across connect(): always', () => {
    expect(connectKeepsMedia('127.0.0.1', '198.51.100.7', undefined)).toBe(true);
    expect(connectKeepsMedia('10.0.0.5', '203.0.113.10', '10.0.0.5')).toBe(true);
  });

  it('a wildcard-bound socket only where the route back leaves from the advertised address', () => {
    expect(connectKeepsMedia('0.0.0.0', '192.0.2.2', '192.0.2.2')).toBe(true);
    expect(connectKeepsMedia('::', '192.0.2.2', '::ffff:192.0.2.2')).toBe(true);
    // Several interfaces, a floating or secondary address: the caller sends to one, the route leaves from another.
    expect(connectKeepsMedia('0.0.0.0', '127.0.0.2', '127.0.0.1')).toBe(false);
    expect(connectKeepsMedia('0.0.0.0', '203.0.113.10', '10.0.0.5')).toBe(false);
    // No route known, or an advertised host name: no connect.
    expect(connectKeepsMedia('0.0.0.0', '192.0.2.2', undefined)).toBe(false);
    expect(connectKeepsMedia('0.0.0.0', 'media.example.com', '192.0.2.2')).toBe(false);
  });

  it('knows the wildcard addresses', () => {
    expect(['0.0.0.0', '::', '::ffff:0.0.0.0'].map(isWildcardAddress)).toEqual([true, true, true]);
    expect(['127.0.0.1', '::1', '10.0.0.1'].map(isWildcardAddress)).toEqual([false, false, false]);
  });
});

describe('probeRouteSource', () => {
  it('asks the kernel (no datagram sent): loopback peers are reached from 127.0.0.1', async () => {
    expect(await probeRouteSource({ address: '127.0.0.1', port: 9 })).toBe('127.0.0.1');
    expect(await probeRouteSource({ address: '127.0.0.3', port: 9 })).toBe('127.0.0.1');
    expect(await probeRouteSource({ address: '::1', port: 9 })).toBe('::1');
  });

  it('answers undefined for what it cannot ask about', async () => {
    expect(await probeRouteSource({ address: 'pbx.example.com', port: 9 })).toBeUndefined();
    expect(await probeRouteSource({ address: '127.0.0.1', port: 0 })).toBeUndefined();
  });
});
