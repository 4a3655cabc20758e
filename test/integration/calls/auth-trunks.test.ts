import { afterEach, describe, expect, it } from 'vitest';
import { TestPhone } from '../../support/test-phone.ts';
import { TestRegistrar } from '../../support/test-registrar.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  await h?.close();
  h = undefined;
});

const PROVIDER = '127.0.0.3';

async function authTrunk(registrar: TestRegistrar) {
  const trunk = await h!.trunk({ inbound_authorization_type: 'auth', allowed_inbound_ips: null, sip_address: PROVIDER });
  // REST takes a bare host; the test registrar listens on an ephemeral port.
  trunk.live.spec.address = registrar.address;
  h!.server.registrations.sync();
  return trunk;
}

async function startRegistrar(): Promise<TestRegistrar> {
  const r = await TestRegistrar.start(PROVIDER, 'trunkuser', 'trunk-secret');
  cleanups.push(() => r.close());
  return r;
}

async function phone(host: string): Promise<TestPhone> {
  const p = await TestPhone.create({ host });
  cleanups.unshift(() => p.close());
  return p;
}

describe('auth trunks', () => {
  it('register with digest, refresh before expiry, and take calls on the registration', async () => {
    h = await harness();
    const registrar = await startRegistrar();
    const trunk = await authTrunk(registrar);
    await until(() => h!.server.registrations.list()[0]?.state === 'registered', 3000, 'registered');
    expect(registrar.contact).toContain(`sip:${trunk.live.inboundTrunkId}@127.0.0.1`);
    expect(h.server.registrations.list()[0]).toMatchObject({ state: 'registered', expiresSec: 2 });
    // Granted 2 s: refreshed at about 1 s.
    await until(() => registrar.accepted >= 2, 3000, 'refresh');

    await h.assistant(trunk.phoneNumberId);
    const provider = await phone(PROVIDER);
    const call = await provider.call(`sip:${trunk.live.inboundTrunkId}@127.0.0.1:${h.server.port}`);
    expect(h.server.registry.size).toBe(1);
    await call.hangup();
  });

  it('retries a failed registration with backoff until the registrar accepts', async () => {
    h = await harness();
    const registrar = await startRegistrar();
    registrar.failWith = 503;
    await authTrunk(registrar);
    await until(() => registrar.registers.length >= 3, 3000, 'retries');
    // Between retries the state is 'failed'; a retry may already be on the wire ('registering').
    const between = h.server.registrations.list()[0];
    expect(['failed', 'registering']).toContain(between?.state);
    expect(between?.lastStatus).toBe(503);
    registrar.failWith = undefined;
    await until(() => h!.server.registrations.list()[0]?.state === 'registered', 3000, 'recovered');
  });

  it('challenges INVITEs from elsewhere; unknown user and wrong password look the same', async () => {
    h = await harness();
    const registrar = await startRegistrar();
    const trunk = await authTrunk(registrar);
    await h.assistant(trunk.phoneNumberId);
    const pbx = await phone('127.0.0.4');
    const target = h.target('+14155550100');
    expect((await (await pbx.dial(target)).outcome).status).toBe(401);
    const wrongPass = await (await pbx.dial(target, { credentials: { username: 'trunkuser', password: 'nope' } })).outcome;
    const wrongUser = await (await pbx.dial(target, { credentials: { username: 'mallory', password: 'trunk-secret' } })).outcome;
    expect(wrongPass.status).toBe(403);
    expect(wrongUser).toEqual(wrongPass);
    const good = await pbx.call(target, { credentials: { username: 'trunkuser', password: 'trunk-secret' } });
    expect(h.server.registry.size).toBe(1);
    await good.hangup();
  });
});
