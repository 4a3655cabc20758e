/**
 * What the address in a peer's SDP (c=) tells us about where its media will come from.
 *
 * - `concrete`: a routable address, or loopback. Media comes from that address; anything else
 *   is a stranger. Loopback is concrete on purpose: it is never a NAT hint, and a peer on
 *   127.0.0.1 is told apart from one on 127.0.0.3.
 * - `nat-hint`: a private or unroutable address (RFC 1918, CGNAT 100.64/10, link-local,
 *   IPv6 unique-local, unspecified 0.0.0.0 / ::, 0/8): the peer is probably behind NAT and its
 *   media will come from an address we cannot know in advance, so the source may be learned.
 * - `unknown`: not an IP literal (a host name), which no datagram's source can be compared to;
 *   treated like a NAT hint.
 *
 * Pure and table-driven (node's BlockList), so a unit test pins every range.
 */
import { BlockList, isIP, isIPv4 } from 'node:net';

export type MediaAddressKind = 'concrete' | 'nat-hint' | 'unknown';

const unroutable = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  unroutable.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['fc00::', 7],
  ['fe80::', 10],
] as const) {
  unroutable.addSubnet(net, prefix, 'ipv6');
}
unroutable.addAddress('::', 'ipv6');

/** dgram reports IPv4 peers on dual-stack sockets as ::ffff:a.b.c.d; SDP says a.b.c.d. */
export function normalizeAddress(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice(7) : lower;
}

/**
 * `address` as a socket of `family` can send to it: an IPv6 (dual-stack) socket reaches an IPv4
 * peer only through the v4-mapped form (a plain IPv4 address fails with EINVAL).
 */
export function addressForSocket(address: string, family: string): string {
  return family === 'IPv6' && isIPv4(address) ? `::ffff:${address}` : address;
}

export function mediaAddressKind(address: string): MediaAddressKind {
  const bare = normalizeAddress(address.replace(/^\[|\]$/g, ''));
  const version = isIP(bare);
  if (version === 0) return 'unknown';
  return unroutable.check(bare, version === 4 ? 'ipv4' : 'ipv6') ? 'nat-hint' : 'concrete';
}

/** The unspecified address (the old-style hold, or "not known yet"): nobody sends from it. */
export function isUnspecified(address: string): boolean {
  const bare = normalizeAddress(address);
  return bare === '0.0.0.0' || bare === '::';
}
