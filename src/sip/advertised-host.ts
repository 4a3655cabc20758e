/**
 * Which of our public hosts a message names, by the family of the address it goes to: an IPv6
 * destination (not a v4-mapped one) gets SIP_PUBLIC_HOST6, anything else SIP_PUBLIC_HOST. When an
 * IPv6 destination has no IPv6 host to be told (no SIP_PUBLIC_HOST6, and SIP_PUBLIC_HOST is an
 * IPv4 address), there is none: naming the IPv4 host there would give the peer a Contact and an
 * SDP c= line it cannot reach from the network it is on, so callers fail clearly instead.
 */
import { isIP, isIPv4 } from 'node:net';

export interface PublicHosts {
  host: string;
  host6?: string | undefined;
  /**
   * The media address named in SDP to IPv4 peers (RTP_PUBLIC_HOST), when it is not `host`: the
   * signalling address (Via, Contact) and the media address may differ behind a SIP proxy tier.
   */
  mediaHost?: string | undefined;
}

/** True for an IPv6 address other than a v4-mapped one (::ffff:a.b.c.d), brackets allowed. */
export function isIpv6Destination(address: string | undefined): boolean {
  if (address === undefined) return false;
  const bare = address.replace(/^\[|\]$/g, '');
  return isIP(bare) === 6 && !/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(bare) && !/^(0{1,4}:){5}ffff:/i.test(bare);
}

/**
 * The host to advertise toward `peer` (undefined peer: the IPv4/default one), or undefined when
 * `peer` is IPv6 and we have no host an IPv6 peer can reach. A host name counts for both families.
 */
export function advertisedHost(peer: string | undefined, hosts: PublicHosts): string | undefined {
  if (!isIpv6Destination(peer)) return hosts.host;
  if (hosts.host6 !== undefined) return hosts.host6;
  return isIPv4(hosts.host) ? undefined : hosts.host;
}

/**
 * The host our SDP names to `peer` (c= line, and what the RTP source filter expects the peer to
 * send to): `mediaHost` for a peer reached over IPv4 when one is set, else what advertisedHost()
 * names (IPv6 peers keep host6). Undefined exactly where advertisedHost() is.
 */
export function advertisedMediaHost(peer: string | undefined, hosts: PublicHosts): string | undefined {
  const signalling = advertisedHost(peer, hosts);
  if (signalling === undefined || isIpv6Destination(peer)) return signalling;
  return hosts.mediaHost ?? signalling;
}

/** The reason phrase (and log message) when an IPv6 destination has no IPv6 host of ours to name. */
export const NO_PUBLIC_IPV6 = 'No IPv6 public host (SIP_PUBLIC_HOST6) for an IPv6 destination';
