/**
 * Locating SIP servers (RFC 3263 §4): from a URI to the ordered list of places a request may go,
 * each a transport, an address and a port. The client tries them in order, moving on after a
 * transport error, a timeout or a 503 (§4.3; user-agent.ts and the outgoing INVITE do that).
 *
 * - A numeric host (or `maddr`) is the one place, at the URI's port or the transport's default.
 * - A name with a port: its addresses at that port (no SRV, §4.2).
 * - A name with a `transport` parameter and no port: SRV for that transport, else its addresses.
 * - A bare name: NAPTR (RFC 3403) picks the transport and the SRV name among the services we
 *   speak (SIP+D2U, SIP+D2T, and SIPS+D2T when we listen for TLS; only SIPS+D2T for a `sips:`
 *   URI), by order then preference; with no usable NAPTR, SRV for `_sip._udp`, then `_sip._tcp`
 *   (then `_sips._tcp` when we listen for TLS; only `_sips._tcp` for `sips:`); with no SRV
 *   either, its addresses at the default port over UDP (TLS for `sips:`).
 * - A TLS place carries the name its certificate must show (RFC 5922 §4): the domain looked up.
 * - SRV targets are ordered by priority, then by weighted random choice within a priority
 *   (RFC 2782). A lone target of "." says the service is not offered there; SRV targets without
 *   an address, likewise: the next NAPTR (or SRV) candidate is tried.
 *
 * DNS sits behind SipDns: the system's resolver by default (addresses through getaddrinfo, so
 * /etc/hosts holds as before), or given servers (`dnsAt`). A failed NAPTR or SRV query reads as
 * "none", so a resolver that knows only addresses behaves as before RFC 3263. A name's places are
 * its IPv4 (A) addresses first, then its IPv6 (AAAA) ones when our transport can send IPv6
 * (`LocateOptions.ipv6`: SIP_HOST is `::` or an IPv6 address). A first, whatever getaddrinfo's
 * preference: a carrier reached over IPv4 today keeps being reached the same way, and an
 * IPv6-only name becomes reachable. A numeric IPv6 host passes through as written. `cachedDns` keeps
 * answers a while (the system resolver is wrapped in it), so a campaign's calls to one carrier
 * do not ask the same three questions for every INVITE; the SRV order is still drawn per request.
 */
import { lookup, Resolver } from 'node:dns/promises';
import net from 'node:net';
import { systemClock, type Clock } from '../util/clock.ts';
import type { Destination, TransportKind } from './transaction-types.ts';
import type { SipUri } from './uri.ts';

export interface SrvRecord {
  priority: number;
  weight: number;
  port: number;
  name: string;
}

export interface NaptrRecord {
  order: number;
  preference: number;
  flags: string;
  service: string;
  replacement: string;
}

export interface SipDns {
  naptr(name: string): Promise<NaptrRecord[]>;
  srv(name: string): Promise<SrvRecord[]>;
  /** IPv4 addresses of a name. */
  addresses(name: string): Promise<string[]>;
  /** IPv6 addresses of a name (absent: a resolver that knows IPv4 only). */
  addresses6?(name: string): Promise<string[]>;
}

/** At most this many places from one lookup: enough for any real failover set. */
const MAX_DESTINATIONS = 16;
const QUERY_TIMEOUT_MS = 2000;

/** The system's resolver: NAPTR and SRV over DNS, addresses through getaddrinfo (/etc/hosts); cached. */
export function systemDns(): SipDns {
  const resolver = new Resolver({ timeout: QUERY_TIMEOUT_MS, tries: 2 });
  return cachedDns({
    naptr: (name) => resolver.resolveNaptr(name),
    srv: (name) => resolver.resolveSrv(name),
    addresses: async (name) => (await lookup(name, { family: 4, all: true })).map((a) => a.address),
    addresses6: async (name) => (await lookup(name, { family: 6, all: true })).map((a) => a.address),
  });
}

export interface DnsCacheOptions {
  clock?: Clock;
  /** How long an answer is reused (default 60 s; Node's resolver does not give SRV TTLs). */
  ttlMs?: number;
  /** How long a failed or empty answer is reused (default 5 s). */
  negativeTtlMs?: number;
  /** Names kept at most (default 1000); the oldest go first. */
  maxEntries?: number;
}

/** `dns` with each answer (and each failure, for less long) reused for a while; concurrent asks share one query. */
export function cachedDns(dns: SipDns, o: DnsCacheOptions = {}): SipDns {
  const clock = o.clock ?? systemClock;
  const ttl = o.ttlMs ?? 60_000;
  const negativeTtl = o.negativeTtlMs ?? 5_000;
  const max = o.maxEntries ?? 1000;
  const entries = new Map<string, { until: number; answer: Promise<unknown> }>();
  const ask = <T>(kind: keyof SipDns, name: string, query: () => Promise<T[]>): Promise<T[]> => {
    const key = `${kind} ${name.toLowerCase()}`;
    const now = clock.monotonic();
    const hit = entries.get(key);
    if (hit && hit.until > now) return hit.answer as Promise<T[]>;
    entries.delete(key);
    const answer = query();
    const entry = { until: Number.POSITIVE_INFINITY, answer };
    entries.set(key, entry);
    while (entries.size > max) entries.delete(entries.keys().next().value!);
    answer.then(
      (records) => (entry.until = clock.monotonic() + (records.length > 0 ? ttl : negativeTtl)),
      () => (entry.until = clock.monotonic() + negativeTtl),
    );
    return answer;
  };
  return {
    naptr: (name) => ask('naptr', name, () => dns.naptr(name)),
    srv: (name) => ask('srv', name, () => dns.srv(name)),
    addresses: (name) => ask('addresses', name, () => dns.addresses(name)),
    ...(dns.addresses6 ? { addresses6: (name: string) => ask('addresses6', name, () => dns.addresses6!(name)) } : {}),
  };
}

/** Every query to the given DNS servers (`host` or `host:port`), addresses too. */
export function dnsAt(servers: string[]): SipDns {
  const resolver = new Resolver({ timeout: QUERY_TIMEOUT_MS, tries: 2 });
  resolver.setServers(servers);
  return {
    naptr: (name) => resolver.resolveNaptr(name),
    srv: (name) => resolver.resolveSrv(name),
    addresses: (name) => resolver.resolve4(name),
    addresses6: (name) => resolver.resolve6(name),
  };
}

const DEFAULT_PORT: Record<TransportKind, number> = { udp: 5060, tcp: 5060, tls: 5061 };

/**
 * The NAPTR services we can use, by URI scheme (RFC 3263 §4.1). A `sip:` URI may go over TLS too,
 * but only when we listen for TLS ourselves: the peer's in-dialog requests come back to our
 * Contact, which then names TLS.
 */
function services(scheme: 'sip' | 'sips', tls: boolean): Record<string, TransportKind> {
  if (scheme === 'sips') return { 'SIPS+D2T': 'tls' };
  return tls ? { 'SIP+D2U': 'udp', 'SIP+D2T': 'tcp', 'SIPS+D2T': 'tls' } : { 'SIP+D2U': 'udp', 'SIP+D2T': 'tcp' };
}

export interface LocateOptions {
  /** We listen for TLS, so a `sip:` URI may be reached over TLS when DNS says so. */
  tls?: boolean;
  /** We can send over IPv6, so a name's AAAA addresses are places too (after its A ones). */
  ipv6?: boolean;
}

/** A name's addresses: A first, then AAAA when `ipv6`; a failed query reads as none. */
async function addressesOf(dns: SipDns, name: string, ipv6: boolean): Promise<string[]> {
  const v4 = await dns.addresses(name).catch(() => []);
  const v6 = ipv6 && dns.addresses6 ? await dns.addresses6(name).catch(() => []) : [];
  // A v4-mapped answer (some resolvers map A records for an IPv6 query) is an A address again.
  return [...v4, ...v6.filter((a) => !a.toLowerCase().startsWith('::ffff:'))];
}

function srvName(scheme: 'sip' | 'sips', transport: TransportKind): string {
  return transport === 'udp' ? '_sip._udp' : transport === 'tcp' ? `_${scheme}._tcp` : '_sips._tcp';
}

/** The transport a URI names, if it names one: its `transport` param, or TLS for `sips:`. */
function namedTransport(uri: SipUri): TransportKind | undefined {
  const param = uri.params.get('transport')?.toLowerCase();
  if (param === 'udp' || param === 'tcp' || param === 'tls') return uri.scheme === 'sips' && param !== 'tls' ? 'tls' : param;
  return uri.scheme === 'sips' ? 'tls' : undefined;
}

/** The places a request for `uri` may go, in the order to try them; throws when there are none. */
export async function locate(uri: SipUri, dns: SipDns, random: () => number = Math.random, opts: LocateOptions = {}): Promise<Destination[]> {
  const host = (uri.params.get('maddr') ?? uri.host).replace(/^\[|\]$/g, '');
  const named = namedTransport(uri);
  if (net.isIP(host)) {
    const transport = named ?? 'udp';
    return [{ transport, address: host, port: uri.port ?? DEFAULT_PORT[transport] }];
  }
  const ipv6 = opts.ipv6 ?? false;
  const found = uri.port !== undefined ? undefined : await viaSrv(uri.scheme, host, named, dns, random, opts.tls ?? false, ipv6);
  const out = found ?? [];
  if (found === undefined) {
    // No SRV at all (§4.2): the name's own addresses.
    const transport = named ?? 'udp';
    for (const address of await addressesOf(dns, host, ipv6)) {
      out.push({ transport, address, port: uri.port ?? DEFAULT_PORT[transport] });
    }
  }
  if (out.length === 0) throw new Error(`no SIP server found for ${host}`);
  // RFC 5922 §4: a TLS peer must prove the domain we looked up, whatever SRV pointed at.
  return out.slice(0, MAX_DESTINATIONS).map((d) => (d.transport === 'tls' ? { ...d, serverName: host.toLowerCase() } : d));
}

/**
 * Places found through NAPTR and SRV, or undefined when the domain publishes no SRV for SIP
 * (then its addresses are used). Candidates are tried in order: one whose SRV says "no service
 * here" (a lone "." target) or whose targets have no address gives way to the next. An empty
 * list means SRV records exist but lead nowhere.
 */
async function viaSrv(
  scheme: 'sip' | 'sips',
  host: string,
  named: TransportKind | undefined,
  dns: SipDns,
  random: () => number,
  tls: boolean,
  ipv6: boolean,
): Promise<Destination[] | undefined> {
  const candidates: { transport: TransportKind; name: string }[] = [];
  const ours = services(scheme, tls);
  if (named) {
    candidates.push({ transport: named, name: `${srvName(scheme, named)}.${host}` });
  } else {
    const usable = (await dns.naptr(host).catch(() => []))
      .filter((n) => n.flags.toLowerCase() === 's' && ours[n.service.toUpperCase()] !== undefined)
      .sort((a, b) => a.order - b.order || a.preference - b.preference);
    for (const n of usable) candidates.push({ transport: ours[n.service.toUpperCase()]!, name: n.replacement });
    if (candidates.length === 0) {
      for (const t of new Set(Object.values(ours))) {
        candidates.push({ transport: t, name: `${srvName(scheme, t)}.${host}` });
      }
    }
  }
  let sawSrv = false;
  for (const c of candidates) {
    const records = await dns.srv(c.name).catch(() => []);
    if (records.length === 0) continue;
    sawSrv = true;
    if (records.length === 1 && (records[0]!.name === '' || records[0]!.name === '.')) continue;
    const out: Destination[] = [];
    for (const r of orderSrv(records, random)) {
      for (const address of await addressesOf(dns, r.name, ipv6)) out.push({ transport: c.transport, address, port: r.port });
      if (out.length >= MAX_DESTINATIONS) break;
    }
    if (out.length > 0) return out;
  }
  return sawSrv ? [] : undefined;
}

/**
 * RFC 2782's order: ascending priority; within one priority, repeatedly a weighted random pick
 * among those left (weight-0 records first in the running sum, so they are chosen only rarely).
 */
export function orderSrv(records: readonly SrvRecord[], random: () => number = Math.random): SrvRecord[] {
  const out: SrvRecord[] = [];
  const priorities = [...new Set(records.map((r) => r.priority))].sort((a, b) => a - b);
  for (const p of priorities) {
    const left = records.filter((r) => r.priority === p).sort((a, b) => (a.weight === 0 ? 0 : 1) - (b.weight === 0 ? 0 : 1));
    while (left.length > 0) {
      const total = left.reduce((s, r) => s + r.weight, 0);
      const pick = random() * total;
      let sum = 0;
      let i = left.findIndex((r) => (sum += r.weight) >= pick);
      if (i < 0) i = left.length - 1;
      out.push(left.splice(i, 1)[0]!);
    }
  }
  return out;
}
