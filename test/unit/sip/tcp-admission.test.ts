import { describe, expect, it } from 'vitest';
import { sourceKey, TcpAdmission, type AdmissionTicket } from '../../../src/sip/tcp-admission.ts';

function admitN(a: TcpAdmission, address: string, n: number, nowMs: number): { tickets: AdmissionTicket[]; refused: string[] } {
  const tickets: AdmissionTicket[] = [];
  const refused: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = a.admit(address, nowMs);
    if (v.ok) tickets.push(v.ticket);
    else refused.push(v.reason);
  }
  return { tickets, refused };
}

describe('TcpAdmission', () => {
  it('refuses a source past its per-source cap, and admits it again once one closes', () => {
    const a = new TcpAdmission({ maxConnections: 100, maxPerSource: 3, acceptRatePerSecond: 1000 });
    const { tickets, refused } = admitN(a, '10.0.0.1', 5, 0);
    expect(tickets).toHaveLength(3);
    expect(refused).toEqual(['per_source', 'per_source']);
    expect(a.admit('10.0.0.2', 0).ok).toBe(true);
    a.release(tickets[0]!);
    a.release(tickets[0]!); // idempotent
    expect(a.admit('10.0.0.1', 0).ok).toBe(true);
    expect(a.open).toBe(4);
    expect(a.refused.per_source).toBe(2);
  });

  it('refuses past the total cap, keeping a tenth of it for trusted sources', () => {
    const a = new TcpAdmission({ maxConnections: 20, maxPerSource: 100, acceptRatePerSecond: 1000, trusted: (ip) => ip === '192.0.2.1' });
    let admitted = 0;
    for (let i = 0; i < 30; i++) if (a.admit(`10.0.1.${i}`, 0).ok) admitted++;
    expect(admitted).toBe(18); // 20 minus the trusted reserve of 2
    expect(a.refused.total).toBe(12);
    // The trunk still gets in, up to the whole cap, then no one does.
    expect(a.admit('192.0.2.1', 0).ok).toBe(true);
    expect(a.admit('::ffff:192.0.2.1', 0).ok).toBe(true);
    expect(a.admit('192.0.2.1', 0)).toEqual({ ok: false, reason: 'total' });
    expect(a.open).toBe(20);
  });

  it('limits the accept rate per source with a token bucket on the given clock', () => {
    const a = new TcpAdmission({ maxConnections: 1000, maxPerSource: 1000, acceptRatePerSecond: 5 });
    expect(a.burst).toBe(10);
    const first = admitN(a, '10.0.0.1', 12, 0);
    expect(first.tickets).toHaveLength(10);
    expect(first.refused).toEqual(['rate', 'rate']);
    // Another source has its own bucket.
    expect(a.admit('10.0.0.2', 0).ok).toBe(true);
    // 200 ms at 5/s is one more token, and no more.
    expect(admitN(a, '10.0.0.1', 2, 200).tickets).toHaveLength(1);
    // A refused attempt spends nothing it did not have: a second later, five more.
    expect(admitN(a, '10.0.0.1', 6, 1200).tickets).toHaveLength(5);
    expect(a.refused.rate).toBe(4);
  });

  it('a source hammering at its per-source cap is held to the rate as well', () => {
    const a = new TcpAdmission({ maxConnections: 1000, maxPerSource: 1, acceptRatePerSecond: 1, acceptBurst: 2 });
    expect(admitN(a, '10.0.0.1', 5, 0).refused).toEqual(['per_source', 'rate', 'rate', 'rate']);
  });

  it('does not count trusted sources against rate or per-source caps', () => {
    const a = new TcpAdmission({ maxConnections: 100, maxPerSource: 1, acceptRatePerSecond: 1, trusted: (ip) => ip === '127.0.0.1' });
    expect(admitN(a, '127.0.0.1', 50, 0).tickets).toHaveLength(50);
  });

  it('refuses when the process descriptors would eat into the reserve, whoever holds them', () => {
    let open = 900;
    let samples = 0;
    const a = new TcpAdmission({
      maxConnections: 10_000,
      maxPerSource: 10_000,
      acceptRatePerSecond: 1e6,
      fds: { limit: 1024, keepFree: 100, sampleEveryMs: 1000, open: () => (samples++, open) },
    });
    // 924 usable: 24 more, counted between samples without re-reading /proc.
    const { tickets, refused } = admitN(a, '10.0.0.1', 30, 0);
    expect(tickets).toHaveLength(24);
    expect(refused).toEqual(Array(6).fill('fd_reserve'));
    expect(samples).toBe(1);
    // Something else released descriptors; the next sample sees it.
    open = 500;
    expect(a.admit('10.0.0.1', 500).ok).toBe(false);
    expect(a.admit('10.0.0.1', 1000).ok).toBe(true);
    expect(samples).toBe(2);
  });

  it('admits everything when descriptors cannot be counted', () => {
    const a = new TcpAdmission({ maxConnections: 10, maxPerSource: 10, acceptRatePerSecond: 100, fds: { limit: 10, keepFree: 10, open: () => undefined } });
    expect(a.admit('10.0.0.1', 0).ok).toBe(true);
  });

  it('forgets idle sources, so a spray of addresses does not grow the table without bound', () => {
    const a = new TcpAdmission({ maxConnections: 100_000, maxPerSource: 10, acceptRatePerSecond: 10 });
    // Each source connects once and closes; 20k sources, 1 ms apart: 20 s of traffic.
    let peak = 0;
    for (let i = 0; i < 20_000; i++) {
      const v = a.admit(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, i);
      if (v.ok) a.release(v.ticket);
      peak = Math.max(peak, a.trackedSources);
    }
    // A bucket refills in 100 ms here (one token at 10/s): only recent sources are kept.
    expect(peak).toBeLessThanOrEqual(2048);
    // A source with an open connection is never forgotten.
    const held = a.admit('10.200.0.1', 30_000);
    expect(held.ok).toBe(true);
    for (let i = 0; i < 5000; i++) a.admit(`10.201.${(i >> 8) & 255}.${i & 255}`, 40_000 + i * 10);
    expect(admitN(a, '10.200.0.1', 10, 100_000).tickets).toHaveLength(9);
  });

  it('keys IPv4 by address and IPv6 by /64', () => {
    expect(sourceKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(sourceKey('2001:db8:1:2:aaaa::1')).toBe(sourceKey('2001:db8:1:2:bbbb::9'));
    expect(sourceKey('2001:db8:1:2::1')).not.toBe(sourceKey('2001:db8:1:3::1'));
    const a = new TcpAdmission({ maxConnections: 100, maxPerSource: 2, acceptRatePerSecond: 100 });
    expect([a.admit('2001:db8::1', 0).ok, a.admit('2001:db8::2', 0).ok, a.admit('2001:db8::3', 0).ok]).toEqual([true, true, false]);
  });
});
