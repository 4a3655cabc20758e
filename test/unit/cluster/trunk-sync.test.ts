import { describe, expect, it } from 'vitest';
import { TrunkSync } from '../../../src/cluster/trunk-sync.ts';
import { InMemoryTrunkRegistry, type StoredTrunkSource, type TrunkIds, type TrunkSpec } from '../../../src/sip/trunk-registry.ts';

const quiet = { info() {}, warn() {}, error() {} };

function spec(id: number, number: string): TrunkSpec {
  return {
    id,
    accountId: 1,
    trunkType: 'number',
    phoneNumber: number,
    username: 'u',
    password: 'p',
    address: 'sip.example.com',
    callingFormat: 'e164',
    authType: 'ip',
    allowedIps: ['203.0.113.7'],
    outboundProxy: false,
    countryCode: 'US',
  };
}

/** The shared store's rows, as another node would change them. */
class Rows implements StoredTrunkSource {
  rows: Array<{ sipTrunkId: number; ids: TrunkIds; spec: TrunkSpec }> = [];
  async allForProvisioning() {
    return this.rows.map((r) => ({ sipTrunkId: r.sipTrunkId, ids: r.ids, spec: () => r.spec }));
  }
}

const ids = (n: number): TrunkIds => ({ inboundTrunkId: `ST_in_${n}`, outboundTrunkId: `ST_out_${n}` });

describe('TrunkSync', () => {
  it('provisions a trunk another node stored, and removes one it deleted after two reads without it', async () => {
    const store = new Rows();
    const registry = new InMemoryTrunkRegistry();
    const sync = new TrunkSync(store, registry, quiet);
    store.rows.push({ sipTrunkId: 7, ids: ids(7), spec: spec(7, '+14155550100') });
    expect(await sync.syncOnce()).toEqual({ added: 1, removed: 0 });
    expect(registry.findInboundByNumber('+14155550100')?.spec.id).toBe(7);
    expect(registry.findInboundBySource('203.0.113.7')).toHaveLength(1);
    expect(await sync.syncOnce()).toEqual({ added: 0, removed: 0 });

    store.rows = [];
    expect(await sync.syncOnce()).toEqual({ added: 0, removed: 0 }); // one miss: maybe being created
    expect(await sync.syncOnce()).toEqual({ added: 0, removed: 1 });
    expect(registry.findInboundByNumber('+14155550100')).toBeUndefined();
  });

  it('leaves a trunk this node is creating (provisioned before its row is saved) alone', async () => {
    const store = new Rows();
    const registry = new InMemoryTrunkRegistry();
    const sync = new TrunkSync(store, registry, quiet);
    const local = await registry.provision(spec(0, '+14155550111'));
    await sync.syncOnce(); // the row is not saved yet
    store.rows.push({ sipTrunkId: 9, ids: local, spec: spec(9, '+14155550111') });
    expect(await sync.syncOnce()).toEqual({ added: 0, removed: 0 });
    expect(registry.findInboundByNumber('+14155550111')).toBeDefined();
  });

  it('one trunk whose secret cannot be opened does not keep the others out', async () => {
    const store = new Rows();
    const registry = new InMemoryTrunkRegistry();
    const sync = new TrunkSync(store, registry, quiet);
    store.rows.push({ sipTrunkId: 1, ids: ids(1), spec: spec(1, '+14155550101') }, { sipTrunkId: 2, ids: ids(2), spec: spec(2, '+14155550102') });
    const original = store.allForProvisioning.bind(store);
    store.allForProvisioning = async () =>
      (await original()).map((r) => (r.sipTrunkId === 1 ? { ...r, spec: () => { throw new Error('sealed under another key'); } } : r));
    expect(await sync.syncOnce()).toEqual({ added: 1, removed: 0 });
    expect(registry.findInboundByNumber('+14155550102')).toBeDefined();
  });
});
