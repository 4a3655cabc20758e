import { describe, expect, it } from 'vitest';
import { cachedDns, locate, orderSrv, type NaptrRecord, type SipDns, type SrvRecord } from '../../../src/sip/locate.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { parseSipUri } from '../../../src/sip/uri.ts';

/** An in-memory DNS that records each question. */
function fakeDns(zone: { a?: Record<string, string[]>; aaaa?: Record<string, string[]>; srv?: Record<string, SrvRecord[]>; naptr?: Record<string, NaptrRecord[]> }) {
  const asked: string[] = [];
  const find = <T>(table: Record<string, T[]> | undefined, name: string, type: string): Promise<T[]> => {
    asked.push(`${type} ${name}`);
    const hit = table?.[name];
    return hit ? Promise.resolve(hit) : Promise.reject(Object.assign(new Error(`queryNotFound ${name}`), { code: 'ENOTFOUND' }));
  };
  const dns: SipDns = {
    naptr: (name) => find(zone.naptr, name, 'NAPTR'),
    srv: (name) => find(zone.srv, name, 'SRV'),
    addresses: (name) => find(zone.a, name, 'A'),
    addresses6: (name) => find(zone.aaaa, name, 'AAAA'),
  };
  return { dns, asked };
}

const uri = (text: string) => parseSipUri(text)!;
const srv = (priority: number, weight: number, port: number, name: string): SrvRecord => ({ priority, weight, port, name });
const naptr = (order: number, preference: number, service: string, replacement: string, flags = 's'): NaptrRecord => ({ order, preference, flags, service, replacement });

describe('RFC 3263 server location', () => {
  it('a numeric host is the one place, with no DNS asked', async () => {
    const { dns, asked } = fakeDns({});
    expect(await locate(uri('sip:+14155550100@192.0.2.7'), dns)).toEqual([{ transport: 'udp', address: '192.0.2.7', port: 5060 }]);
    expect(await locate(uri('sip:a@192.0.2.7:5080;transport=TCP'), dns)).toEqual([{ transport: 'tcp', address: '192.0.2.7', port: 5080 }]);
    expect(await locate(uri('sips:a@[2001:db8::1]'), dns)).toEqual([{ transport: 'tls', address: '2001:db8::1', port: 5061 }]);
    expect(asked).toEqual([]);
  });

  it('maddr overrides the host', async () => {
    const { dns } = fakeDns({});
    expect(await locate(uri('sip:a@pbx.example.com;maddr=198.51.100.2'), dns)).toEqual([{ transport: 'udp', address: '198.51.100.2', port: 5060 }]);
  });

  it('a name with a port: its addresses at that port, no NAPTR or SRV', async () => {
    const { dns, asked } = fakeDns({ a: { 'pbx.example.com': ['192.0.2.1', '192.0.2.2'] }, srv: { '_sip._udp.pbx.example.com': [srv(1, 1, 7000, 'x.example.com')] } });
    expect(await locate(uri('sip:a@pbx.example.com:5070'), dns)).toEqual([
      { transport: 'udp', address: '192.0.2.1', port: 5070 },
      { transport: 'udp', address: '192.0.2.2', port: 5070 },
    ]);
    expect(asked).toEqual(['A pbx.example.com']);
  });

  it('a transport parameter without a port: SRV for that transport only', async () => {
    const { dns, asked } = fakeDns({
      srv: { '_sip._tcp.example.com': [srv(10, 0, 5090, 'sip1.example.com')] },
      a: { 'sip1.example.com': ['192.0.2.10'] },
    });
    expect(await locate(uri('sip:a@example.com;transport=tcp'), dns)).toEqual([{ transport: 'tcp', address: '192.0.2.10', port: 5090 }]);
    expect(asked).toEqual(['SRV _sip._tcp.example.com', 'A sip1.example.com']);
  });

  it('NAPTR chooses the transport by order, then preference, among the services we speak', async () => {
    const { dns } = fakeDns({
      naptr: {
        'example.com': [
          naptr(10, 50, 'SIP+D2U', '_sip._udp.example.com'),
          naptr(10, 20, 'SIP+D2T', '_sip._tcp.example.com'),
          naptr(5, 10, 'SIP+D2S', '_sip._sctp.example.com'), // SCTP: not ours, skipped
          naptr(2, 10, 'SIPS+D2T', '_sips._tcp.example.com'), // TLS: only when we listen for TLS
          naptr(1, 10, 'SIP+D2T', 'ignored.example.com', 'a'), // not an SRV flag, skipped
        ],
      },
      srv: {
        '_sip._udp.example.com': [srv(0, 0, 5060, 'u.example.com')],
        '_sip._tcp.example.com': [srv(0, 0, 5062, 't.example.com')],
        '_sip._sctp.example.com': [srv(0, 0, 5063, 's.example.com')],
        '_sips._tcp.example.com': [srv(0, 0, 5061, 's.example.com')],
      },
      a: { 'u.example.com': ['192.0.2.20'], 't.example.com': ['192.0.2.21'], 's.example.com': ['192.0.2.22'] },
    });
    expect(await locate(uri('sip:a@example.com'), dns)).toEqual([{ transport: 'tcp', address: '192.0.2.21', port: 5062 }]);
  });

  it('with a TLS listener a sip: URI may go over TLS when NAPTR prefers it; the place carries the domain to verify', async () => {
    const { dns } = fakeDns({
      naptr: { 'example.com': [naptr(20, 10, 'SIP+D2U', '_sip._udp.example.com'), naptr(10, 10, 'SIPS+D2T', '_sips._tcp.example.com')] },
      srv: { '_sip._udp.example.com': [srv(0, 0, 5060, 'u.example.com')], '_sips._tcp.example.com': [srv(0, 0, 5061, 'tls.example.com')] },
      a: { 'u.example.com': ['192.0.2.30'], 'tls.example.com': ['192.0.2.31'] },
    });
    // RFC 5922 §4: the identity is the domain of the URI, not the SRV target.
    expect(await locate(uri('sip:a@example.com'), dns, Math.random, { tls: true })).toEqual([
      { transport: 'tls', address: '192.0.2.31', port: 5061, serverName: 'example.com' },
    ]);
    expect(await locate(uri('sip:a@example.com'), dns, Math.random, { tls: false })).toEqual([{ transport: 'udp', address: '192.0.2.30', port: 5060 }]);
  });

  it('with a TLS listener and no NAPTR, _sips._tcp is asked after UDP and TCP', async () => {
    const { dns, asked } = fakeDns({ srv: { '_sips._tcp.example.com': [srv(0, 0, 5061, 't.example.com')] }, a: { 't.example.com': ['192.0.2.41'] } });
    expect(await locate(uri('sip:a@example.com'), dns, Math.random, { tls: true })).toEqual([
      { transport: 'tls', address: '192.0.2.41', port: 5061, serverName: 'example.com' },
    ]);
    expect(asked).toEqual(['NAPTR example.com', 'SRV _sip._udp.example.com', 'SRV _sip._tcp.example.com', 'SRV _sips._tcp.example.com', 'A t.example.com']);
  });

  it('a sips: URI uses only SIPS+D2T, over TLS', async () => {
    const { dns } = fakeDns({
      naptr: { 'example.com': [naptr(10, 10, 'SIP+D2U', '_sip._udp.example.com'), naptr(20, 10, 'SIPS+D2T', '_sips._tcp.example.com')] },
      srv: { '_sip._udp.example.com': [srv(0, 0, 5060, 'u.example.com')], '_sips._tcp.example.com': [srv(0, 0, 5061, 'tls.example.com')] },
      a: { 'u.example.com': ['192.0.2.30'], 'tls.example.com': ['192.0.2.31'] },
    });
    expect(await locate(uri('sips:a@example.com'), dns)).toEqual([{ transport: 'tls', address: '192.0.2.31', port: 5061, serverName: 'example.com' }]);
  });

  it('no NAPTR: SRV for UDP, then TCP; the first with records wins', async () => {
    const { dns, asked } = fakeDns({
      srv: { '_sip._tcp.example.com': [srv(0, 0, 5060, 't.example.com')] },
      a: { 't.example.com': ['192.0.2.40'] },
    });
    expect(await locate(uri('sip:a@example.com'), dns)).toEqual([{ transport: 'tcp', address: '192.0.2.40', port: 5060 }]);
    expect(asked).toEqual(['NAPTR example.com', 'SRV _sip._udp.example.com', 'SRV _sip._tcp.example.com', 'A t.example.com']);
  });

  it('no NAPTR and no SRV: the name’s addresses on the default port', async () => {
    const { dns } = fakeDns({ a: { 'pbx.example.com': ['192.0.2.50'] } });
    expect(await locate(uri('sip:a@pbx.example.com'), dns)).toEqual([{ transport: 'udp', address: '192.0.2.50', port: 5060 }]);
    expect(await locate(uri('sips:a@pbx.example.com'), dns)).toEqual([{ transport: 'tls', address: '192.0.2.50', port: 5061, serverName: 'pbx.example.com' }]);
  });

  it('AAAA: only when we can send IPv6, after the A addresses, for bare names and SRV targets alike', async () => {
    const { dns, asked } = fakeDns({
      a: { 'pbx.example.com': ['192.0.2.50'] },
      aaaa: { 'pbx.example.com': ['2001:db8::50', '::ffff:192.0.2.50'], 'v6.example.com': ['2001:db8::51'] },
      srv: { '_sip._udp.example.com': [srv(10, 0, 5070, 'v6.example.com'), srv(20, 0, 5080, 'pbx.example.com')] },
    });
    // An IPv4 transport: A only, as before, and no AAAA question asked.
    expect(await locate(uri('sip:a@pbx.example.com:5060'), dns)).toEqual([{ transport: 'udp', address: '192.0.2.50', port: 5060 }]);
    expect(asked.filter((q) => q.startsWith('AAAA'))).toEqual([]);
    // A first, then AAAA; a v4-mapped AAAA answer is not a second place.
    expect(await locate(uri('sip:a@pbx.example.com:5060'), dns, Math.random, { ipv6: true })).toEqual([
      { transport: 'udp', address: '192.0.2.50', port: 5060 },
      { transport: 'udp', address: '2001:db8::50', port: 5060 },
    ]);
    expect(await locate(uri('sip:a@example.com'), dns, () => 0, { ipv6: true })).toEqual([
      { transport: 'udp', address: '2001:db8::51', port: 5070 },
      { transport: 'udp', address: '192.0.2.50', port: 5080 },
      { transport: 'udp', address: '2001:db8::50', port: 5080 },
    ]);
    // A name with AAAA only is found only by a transport that can reach it.
    await expect(locate(uri('sip:a@v6.example.com:5060'), dns)).rejects.toThrow(/no SIP server found/);
  });

  it('SRV targets in priority order, every address of each; a target without addresses is passed over', async () => {
    const { dns } = fakeDns({
      srv: { '_sip._udp.example.com': [srv(20, 0, 5080, 'backup.example.com'), srv(10, 0, 5070, 'gone.example.com'), srv(10, 0, 5060, 'main.example.com')] },
      a: { 'main.example.com': ['192.0.2.60', '192.0.2.61'], 'backup.example.com': ['192.0.2.62'] },
    });
    const places = await locate(uri('sip:a@example.com'), dns, () => 0);
    expect(places).toEqual([
      { transport: 'udp', address: '192.0.2.60', port: 5060 },
      { transport: 'udp', address: '192.0.2.61', port: 5060 },
      { transport: 'udp', address: '192.0.2.62', port: 5080 },
    ]);
  });

  it('a lone "." target means no SIP service there; nothing found at all is an error', async () => {
    const { dns } = fakeDns({ srv: { '_sip._udp.example.com': [srv(0, 0, 0, '.')] }, a: { 'example.com': ['192.0.2.70'] } });
    await expect(locate(uri('sip:a@example.com'), dns)).rejects.toThrow(/no SIP server found for example.com/);
    await expect(locate(uri('sip:a@nowhere.example'), fakeDns({}).dns)).rejects.toThrow(/no SIP server found/);
  });

  it('an SRV set that leads nowhere gives way to the next transport, not to the bare name', async () => {
    const { dns } = fakeDns({
      naptr: { 'example.com': [naptr(1, 1, 'SIP+D2U', '_sip._udp.example.com'), naptr(2, 1, 'SIP+D2T', '_sip._tcp.example.com')] },
      srv: { '_sip._udp.example.com': [srv(0, 0, 5060, 'stale.example.com')], '_sip._tcp.example.com': [srv(0, 0, 5062, 't.example.com')] },
      a: { 't.example.com': ['192.0.2.80'], 'example.com': ['192.0.2.99'] },
    });
    expect(await locate(uri('sip:a@example.com'), dns)).toEqual([{ transport: 'tcp', address: '192.0.2.80', port: 5062 }]);
    const stale = fakeDns({ srv: { '_sip._udp.example.com': [srv(0, 0, 5060, 'stale.example.com')] }, a: { 'example.com': ['192.0.2.99'] } });
    await expect(locate(uri('sip:a@example.com'), stale.dns)).rejects.toThrow(/no SIP server found/);
  });

  it('never more than 16 places', async () => {
    const many = Array.from({ length: 30 }, (_, i) => srv(i, 0, 5060 + i, `h${i}.example.com`));
    const a = Object.fromEntries(many.map((r, i) => [r.name, [`192.0.2.${i + 1}`]]));
    const { dns } = fakeDns({ srv: { '_sip._udp.example.com': many }, a });
    expect(await locate(uri('sip:a@example.com'), dns)).toHaveLength(16);
  });
});

describe('RFC 2782 SRV order', () => {
  it('ascending priority first, whatever the weights', () => {
    const out = orderSrv([srv(30, 100, 1, 'c'), srv(10, 1, 1, 'a'), srv(20, 50, 1, 'b')], () => 0.99);
    expect(out.map((r) => r.name)).toEqual(['a', 'b', 'c']);
  });

  it('within a priority, each pick is weighted: the running sum reaching the random number', () => {
    const records = [srv(1, 10, 1, 'ten'), srv(1, 30, 1, 'thirty'), srv(1, 0, 1, 'zero')];
    // Zero weight first in the running sum: chosen only by a random number of exactly 0.
    expect(orderSrv(records, () => 0).map((r) => r.name)).toEqual(['zero', 'ten', 'thirty']);
    // 0.5 of 40 = 20: past "zero" (0) and "ten" (10), reached by "thirty" (40).
    expect(orderSrv(records, () => 0.5)[0]!.name).toBe('thirty');
    // 0.2 of 40 = 8: reached by "ten".
    expect(orderSrv(records, () => 0.2)[0]!.name).toBe('ten');
  });

  it('over many draws, first picks follow the weights', () => {
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const records = [srv(1, 1, 1, 'light'), srv(1, 3, 1, 'heavy')];
    let heavy = 0;
    for (let i = 0; i < 4000; i++) if (orderSrv(records, random)[0]!.name === 'heavy') heavy++;
    expect(heavy / 4000).toBeGreaterThan(0.72);
    expect(heavy / 4000).toBeLessThan(0.78);
  });
});

describe('the DNS cache', () => {
  it('reuses answers for their time, failures for less, and shares a query in flight', async () => {
    const clock = new ManualClock();
    const { dns, asked } = fakeDns({ srv: { '_sip._udp.example.com': [srv(1, 1, 5060, 'a.example.com')] }, a: { 'a.example.com': ['192.0.2.1'] } });
    const cached = cachedDns(dns, { clock, ttlMs: 60_000, negativeTtlMs: 5_000 });
    await Promise.all([locate(uri('sip:x@example.com'), cached), locate(uri('sip:y@EXAMPLE.com'), cached)]);
    expect(asked).toEqual(['NAPTR example.com', 'SRV _sip._udp.example.com', 'A a.example.com']);
    // The NAPTR failure is asked again after 5 s; the answers only after 60.
    clock.advance(6_000);
    await locate(uri('sip:x@example.com'), cached);
    expect(asked.slice(3)).toEqual(['NAPTR example.com']);
    clock.advance(60_000);
    await locate(uri('sip:x@example.com'), cached);
    expect(asked.slice(4)).toEqual(['NAPTR example.com', 'SRV _sip._udp.example.com', 'A a.example.com']);
  });

  it('keeps at most maxEntries names', async () => {
    const { dns, asked } = fakeDns({ a: { 'a.test': ['192.0.2.1'], 'b.test': ['192.0.2.2'] } });
    const cached = cachedDns(dns, { maxEntries: 1 });
    await cached.addresses('a.test');
    await cached.addresses('b.test');
    await cached.addresses('a.test');
    expect(asked).toEqual(['A a.test', 'A b.test', 'A a.test']);
  });
});
