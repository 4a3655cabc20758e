/**
 * The operator's allow-list (SWITCHBOARD_OUTBOUND_ALLOW_CIDRS): comma-separated addresses and
 * CIDR ranges, IPv4 or IPv6, that customer URLs may reach although they are private, loopback
 * and so on (an on-premises CRM at 10.0.0.0/8, a stand-in on 127.0.0.1). `/0` is accepted: an
 * operator who writes `0.0.0.0/0,::/0` has chosen to turn the guard off.
 */
import { parseIp, prefixMatches, type Ip } from './address.ts';

export interface Cidr {
  ip: Ip;
  prefix: number;
  /** As the operator wrote it (for messages). */
  text: string;
}

/** `10.0.0.0/8`, `127.0.0.1` (a /32), `fd00::/8`, `::1`; undefined when invalid. */
export function parseCidr(text: string): Cidr | undefined {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const addressText = slash < 0 ? trimmed : trimmed.slice(0, slash);
  if (addressText.includes('%') || addressText.startsWith('[')) return undefined;
  const ip = parseIp(addressText);
  if (!ip) return undefined;
  const max = ip.family === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = trimmed.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) return undefined;
    prefix = Number(p);
  }
  return { ip, prefix, text: trimmed };
}

/** Parses the whole list; the invalid entries are reported rather than skipped. */
export function parseAllowList(text: string): { cidrs: Cidr[]; invalid: string[] } {
  const cidrs: Cidr[] = [];
  const invalid: string[] = [];
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const c = parseCidr(entry);
    if (c) cidrs.push(c);
    else invalid.push(entry.trim());
  }
  return { cidrs, invalid };
}

export function cidrContains(cidr: Cidr, ip: Ip): boolean {
  return cidr.ip.family === ip.family && prefixMatches(ip.bytes, cidr.ip.bytes, cidr.prefix);
}
