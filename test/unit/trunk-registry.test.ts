import { describe, expect, it } from 'vitest';
import { InMemoryTrunkRegistry, restoreTrunks, trunkUri, uriHost, uriHostWithoutPort, type TrunkSpec } from '../../src/sip/trunk-registry.ts';
import { createLogger } from '../../src/util/logger.ts';

const spec = (over: Partial<TrunkSpec> = {}): TrunkSpec => ({
  id: null,
  accountId: 1,
  trunkType: 'number',
  phoneNumber: '+14155550100',
  username: 'alice',
  password: 'pw',
  address: 'sip.example.com',
  callingFormat: '+e164',
  authType: 'auth',
  allowedIps: null,
  outboundProxy: false,
  countryCode: 'US',
  ...over,
});

describe('InMemoryTrunkRegistry', () => {
  it('provisions distinct inbound and outbound ids and finds the trunk by number, with or without +', async () => {
    const r = new InMemoryTrunkRegistry();
    const ids = await r.provision(spec());
    expect(ids.inboundTrunkId).not.toBe(ids.outboundTrunkId);
    expect(r.findInboundByNumber('+14155550100')?.inboundTrunkId).toBe(ids.inboundTrunkId);
    expect(r.findInboundByNumber('14155550100')?.outboundTrunkId).toBe(ids.outboundTrunkId);
    expect(r.findInboundByNumber('+14155550199')).toBeUndefined();
    r.attach(ids.inboundTrunkId, 42);
    expect(r.list()[0]?.spec.id).toBe(42);
  });

  it('matches extensions exactly', async () => {
    const r = new InMemoryTrunkRegistry();
    await r.provision(spec({ trunkType: 'extension', phoneNumber: '100' }));
    expect(r.findInboundByNumber('100')).toBeDefined();
    expect(r.findInboundByNumber('1000')).toBeUndefined();
  });

  it('finds IP-authorized trunks by source address or range; auth trunks never', async () => {
    const r = new InMemoryTrunkRegistry();
    await r.provision(spec({ authType: 'ip', allowedIps: ['203.0.113.7', '198.51.100.0/24'] }));
    await r.provision(spec({ phoneNumber: '+14155550101' })); // auth trunk
    expect(r.findInboundBySource('203.0.113.7')).toHaveLength(1);
    expect(r.findInboundBySource('198.51.100.9')).toHaveLength(1);
    expect(r.findInboundBySource('192.0.2.1')).toHaveLength(0);
  });

  it('deprovisions idempotently and keeps stored ids when reused', async () => {
    const r = new InMemoryTrunkRegistry();
    const ids = await r.provision(spec(), { inboundTrunkId: 'in-1', outboundTrunkId: 'out-1' });
    expect(ids).toEqual({ inboundTrunkId: 'in-1', outboundTrunkId: 'out-1' });
    await r.deprovision(ids);
    await r.deprovision(ids);
    expect(r.list()).toEqual([]);
  });

  it('restoreTrunks provisions every stored trunk and skips the ones that fail', async () => {
    const r = new InMemoryTrunkRegistry();
    const n = await restoreTrunks(
      {
        async allForProvisioning() {
          return [
            { sipTrunkId: 1, ids: { inboundTrunkId: 'a', outboundTrunkId: 'b' }, spec: () => spec({ id: 1 }) },
            { sipTrunkId: 2, ids: { inboundTrunkId: 'c', outboundTrunkId: 'd' }, spec: () => { throw new Error('bad seal'); } },
          ];
        },
      },
      r,
      createLogger('silent'),
    );
    expect(n).toBe(1);
    expect(r.list().map((t) => t.spec.id)).toEqual([1]);
  });
});

describe('trunk URIs', () => {
  it('bracket an IPv6 address, keep names and IPv4 (with a port) as they are, and name the transport', () => {
    expect(trunkUri({ address: '2001:db8::7' }, '+14155550100')).toBe('sip:+14155550100@[2001:db8::7]');
    expect(trunkUri({ address: 'sip.example.com', transport: 'tls' }, '100')).toBe('sip:100@sip.example.com;transport=tls');
    expect(trunkUri({ address: '192.0.2.1:5080' })).toBe('sip:192.0.2.1:5080');
    expect(uriHost('::1')).toBe('[::1]');
    expect(uriHostWithoutPort('::1')).toBe('[::1]');
    expect(uriHostWithoutPort('[::1]:5070')).toBe('[::1]');
    expect(uriHostWithoutPort('192.0.2.1:5080')).toBe('192.0.2.1');
    expect(uriHostWithoutPort('sip.example.com')).toBe('sip.example.com');
  });
});

