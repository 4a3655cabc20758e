import { BlockList, isIP } from 'node:net';

/**
 * Address checks for SIP trunks. Allowed inbound sources may be single addresses or CIDR ranges
 * (providers publish their signalling ranges); a /0 range is refused because it would turn IP
 * authorization into "anyone".
 */

export interface ParsedRange {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** Parses `1.2.3.4`, `2001:db8::1`, `10.0.0.0/8` or `2001:db8::/32`; undefined when invalid. */
export function parseIpOrCidr(value: string): ParsedRange | undefined {
  const [address = '', prefixText, ...rest] = value.trim().split('/');
  if (rest.length > 0) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  let prefix = max;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) return undefined;
    prefix = Number(prefixText);
    if (prefix < 1 || prefix > max) return undefined;
  }
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

export function isIpOrCidr(value: string): boolean {
  return parseIpOrCidr(value) !== undefined;
}

/** A matcher over allowed addresses and ranges (node's BlockList also maps IPv4-mapped IPv6). */
export function ipMatcher(entries: readonly string[]): (ip: string) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const r = parseIpOrCidr(entry);
    if (!r) continue;
    if (r.prefix === (r.family === 'ipv4' ? 32 : 128)) list.addAddress(r.address, r.family);
    else list.addSubnet(r.address, r.prefix, r.family);
  }
  return (ip: string) => {
    const bare = ip.replace(/^\[|\]$/g, '');
    const version = isIP(bare);
    if (version === 0) return false;
    return list.check(bare, version === 4 ? 'ipv4' : 'ipv6');
  };
}

const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * A SIP server address as the spec wants it: a host without port, scheme or path. Hostnames
 * follow RFC 1123 (the last label must not be all digits, so `999.1.1.1` is not a "hostname");
 * IPv4 and IPv6 literals are accepted, IPv6 bare or in brackets.
 */
export function isSipHost(value: string): boolean {
  if (value.length === 0 || value.length > 253) return false;
  const unbracketed = /^\[(.+)\]$/.exec(value)?.[1];
  if (unbracketed !== undefined) return isIP(unbracketed) === 6;
  if (isIP(value) !== 0) return true;
  const host = value.endsWith('.') ? value.slice(0, -1) : value;
  const labels = host.split('.');
  if (!labels.every((l) => LABEL.test(l))) return false;
  return !/^\d+$/.test(labels.at(-1)!);
}

/** Loopback hosts, where plain http is acceptable (local stand-ins and development). */
export function isLoopbackHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/**
 * One spelling per address, for comparing addresses as sets keys: brackets dropped, IPv6
 * compressed and lower-case (RFC 5952, as the WHATWG URL parser writes it), v4-mapped IPv6
 * (::ffff:a.b.c.d, in any spelling) as the IPv4 address it maps. Anything else as given.
 */
export function ipKey(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 6) return bare;
  let canonical: string;
  try {
    canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return bare.toLowerCase();
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const hi = parseInt(mapped[1]!, 16);
  const lo = parseInt(mapped[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}
