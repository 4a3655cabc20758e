/**
 * SIP proxies we trust to tell us where a request really came from (SIP_TRUSTED_PROXIES).
 *
 * Behind a proxy tier (Kamailio, OpenSIPS) every request arrives from a proxy's address, so the
 * packet's source says nothing about the caller. A trusted proxy asserts the caller's address in
 * `X-Switchboard-Source: ip[:port]` (the proxy sets it from the packet it received and removes any
 * copy the client sent). The header is honoured ONLY when the packet's own source is inside one of
 * the configured CIDR ranges; from anyone else it is ignored and removed from the request, so
 * nothing downstream can mistake it for a fact. A trusted proxy's request without the header (or
 * with an unreadable one) is taken by its packet source, as before.
 *
 * The original source then stands for the packet source in trunk IP checks, the abuse guard's
 * per-source accounting and the call record's remote address; SIP responses still go back to the
 * packet source (the proxy), as Via says. Pure: no I/O, table-tested.
 */
import { isIP } from 'node:net';
import { cidrContains, parseAllowList, type Cidr } from '../net/outbound/cidr.ts';
import { parseIp } from '../net/outbound/address.ts';
import { ipKey } from '../util/ip.ts';
import type { SipRequest } from './message.ts';
import type { Source } from './transaction-types.ts';

/** Lower-case, as the parser stores header names. */
export const SOURCE_HEADER = 'x-switchboard-source';

/** `ip`, `ip:port`, `[v6]` or `[v6]:port`; undefined when it is not an IP literal with a valid port. */
export function parseAssertedSource(value: string): { address: string; port?: number } | undefined {
  const text = value.trim();
  if (text.length === 0 || text.length > 64) return undefined;
  let address: string;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed) {
    address = bracketed[1]!;
    portText = bracketed[2];
    if (isIP(address) !== 6) return undefined;
  } else if (isIP(text) !== 0) {
    address = text; // a bare IPv4, or a bare IPv6 (no port then)
  } else {
    const v4 = /^([0-9.]+):(\d{1,5})$/.exec(text);
    if (!v4 || isIP(v4[1]!) !== 4) return undefined;
    address = v4[1]!;
    portText = v4[2];
  }
  if (portText === undefined) return { address: ipKey(address) };
  const port = Number(portText);
  if (port < 1 || port > 65535) return undefined;
  return { address: ipKey(address), port };
}

export class TrustedProxies {
  private readonly cidrs: Cidr[];

  /** `list`: comma-separated addresses and CIDR ranges (validated by config.ts); empty: none. */
  constructor(list = '') {
    const { cidrs, invalid } = parseAllowList(list);
    if (invalid.length > 0) throw new Error(`SIP_TRUSTED_PROXIES: not addresses or CIDR ranges: ${invalid.join(', ')}`);
    this.cidrs = cidrs;
  }

  get size(): number {
    return this.cidrs.length;
  }

  /** Whether a packet from `address` comes from a trusted proxy. */
  trusts(address: string): boolean {
    if (this.cidrs.length === 0) return false;
    const ip = parseIp(ipKey(address));
    return ip !== undefined && this.cidrs.some((c) => cidrContains(c, ip));
  }

  /**
   * Where `req` really came from: the asserted source when `source` is a trusted proxy and the
   * (single) header is readable, else `source` itself. The port defaults to the packet's.
   */
  origin(req: SipRequest, source: Source): Source {
    if (!this.trusts(source.address)) return source;
    const values = req.headers.filter((h) => h.name === SOURCE_HEADER);
    if (values.length !== 1) return source;
    const asserted = parseAssertedSource(values[0]!.value);
    if (!asserted) return source;
    return { transport: source.transport, address: asserted.address, port: asserted.port ?? source.port };
  }

  /**
   * Removes the header from a request that did not come from a trusted proxy (nothing later may
   * read it as a fact); true when there was one to remove.
   */
  scrub(req: SipRequest, source: Source): boolean {
    if (this.trusts(source.address)) return false;
    const before = req.headers.length;
    req.headers = req.headers.filter((h) => h.name !== SOURCE_HEADER);
    return req.headers.length !== before;
  }
}
