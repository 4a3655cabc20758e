/**
 * What kind of address an IP is, for outbound requests made on a customer's behalf: pure, no
 * sockets, no DNS. Anything that reaches the engine's own host or network (loopback, link-local
 * such as the cloud metadata service at 169.254.169.254, private and unique-local ranges,
 * carrier-grade NAT) or is not a unicast destination at all (multicast, broadcast, unspecified,
 * reserved) is forbidden; everything else is `public`.
 *
 * IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, the deprecated
 * IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4
 * address inside, since that is where the packets end up. Documentation ranges are left public:
 * nothing answers there, so they reach nothing internal.
 */

export type ForbiddenKind =
  | 'loopback'
  | 'link-local'
  | 'private'
  | 'carrier-grade NAT'
  | 'unique-local'
  | 'site-local'
  | 'multicast'
  | 'broadcast'
  | 'unspecified'
  | 'this-network'
  | 'reserved';

export interface Ip {
  family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
}

export interface AddressClass {
  /** Undefined: a public unicast address. */
  forbidden?: ForbiddenKind;
  /** The IPv4 address an IPv6 form carries (mapped, compatible, NAT64, 6to4). */
  embedded?: Ip;
}

/** Parses an IPv4 or IPv6 literal (brackets and an IPv6 zone `%eth0` are tolerated); undefined otherwise. */
export function parseIp(text: string): Ip | undefined {
  let s = text.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const v4 = parseIpv4(s);
  if (v4) return { family: 4, bytes: v4 };
  const v6 = parseIpv6(s.replace(/%[^%]*$/, ''));
  return v6 ? { family: 6, bytes: v6 } : undefined;
}

function parseIpv4(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    // Dotted decimal only: `010` or `0x7f` are other parsers' ideas of an address, not an IP literal.
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

function parseIpv6(s: string): Uint8Array | undefined {
  if (s.length === 0 || s.length > 45) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const parts = half.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseIpv4(p);
        if (!v4) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) {
        out.push(parseInt(p, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** An IPv4 address in dotted decimal (embedded addresses are shown this way). */
export function formatIpv4(bytes: Uint8Array): string {
  return Array.from(bytes).join('.');
}

/** True when the first `prefix` bits of `bytes` equal those of `net`. */
export function prefixMatches(bytes: Uint8Array, net: Uint8Array, prefix: number): boolean {
  if (bytes.length !== net.length) return false;
  let bits = prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (net[i]! & mask)) return false;
  }
  return true;
}

type Range = [net: Uint8Array, prefix: number, kind: ForbiddenKind];

const v4 = (a: number, b: number, c: number, d: number): Uint8Array => Uint8Array.of(a, b, c, d);
const v6 = (text: string): Uint8Array => parseIpv6(text)!;

/** Checked in order: the first match decides (so 255.255.255.255 is broadcast, not reserved). */
const V4_RANGES: readonly Range[] = [
  [v4(0, 0, 0, 0), 32, 'unspecified'],
  [v4(255, 255, 255, 255), 32, 'broadcast'],
  [v4(0, 0, 0, 0), 8, 'this-network'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'carrier-grade NAT'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  // IETF protocol assignments (DS-Lite, NAT64 discovery, ...): never a customer's server.
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  // Network benchmarking: lab networks, not the internet.
  [v4(198, 18, 0, 0), 15, 'reserved'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

const V6_RANGES: readonly Range[] = [
  [v6('::'), 128, 'unspecified'],
  [v6('::1'), 128, 'loopback'],
  // Local-use NAT64 (RFC 8215): translated into the operator's own IPv4 network.
  [v6('64:ff9b:1::'), 48, 'private'],
  // Discard-only (RFC 6666).
  [v6('100::'), 64, 'reserved'],
  [v6('fc00::'), 7, 'unique-local'],
  [v6('fe80::'), 10, 'link-local'],
  [v6('fec0::'), 10, 'site-local'],
  [v6('ff00::'), 8, 'multicast'],
];

/** IPv6 prefixes that carry an IPv4 address, and where it sits (byte offset). */
const EMBEDDING: ReadonlyArray<[net: Uint8Array, prefix: number, offset: number]> = [
  [v6('::ffff:0:0'), 96, 12],
  [v6('64:ff9b::'), 96, 12],
  [v6('2002::'), 16, 2],
  // IPv4-compatible (deprecated), after :: and ::1 were decided above.
  [v6('::'), 96, 12],
];

function classifyV4(bytes: Uint8Array): ForbiddenKind | undefined {
  for (const [net, prefix, kind] of V4_RANGES) if (prefixMatches(bytes, net, prefix)) return kind;
  return undefined;
}

export function classifyIp(ip: Ip): AddressClass {
  if (ip.family === 4) {
    const forbidden = classifyV4(ip.bytes);
    return forbidden ? { forbidden } : {};
  }
  for (const [net, prefix, kind] of V6_RANGES) if (prefixMatches(ip.bytes, net, prefix)) return { forbidden: kind };
  for (const [net, prefix, offset] of EMBEDDING) {
    if (!prefixMatches(ip.bytes, net, prefix)) continue;
    const embedded: Ip = { family: 4, bytes: ip.bytes.slice(offset, offset + 4) };
    const forbidden = classifyV4(embedded.bytes);
    return forbidden ? { forbidden, embedded } : { embedded };
  }
  return {};
}

/** Classifies an address literal; undefined when `text` is not one. */
export function classifyAddress(text: string): AddressClass | undefined {
  const ip = parseIp(text);
  return ip && classifyIp(ip);
}
