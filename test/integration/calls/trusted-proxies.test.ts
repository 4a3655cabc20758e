/**
 * SIP_TRUSTED_PROXIES over real SIP on loopback: a proxy on 127.0.0.5 (trusted) forwards INVITEs
 * asserting the caller's address in X-Switchboard-Source; the IP trunk for 127.0.0.9 takes them,
 * and the call's remote address is the caller's. The same header from 127.0.0.6 (not trusted) is
 * ignored: the INVITE is judged by its real source and refused 403 as unknown. The abuse guard
 * counts strikes against the asserted source, so one bad caller behind the proxy is banned alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SOURCE_HEADER } from '../../../src/sip/trusted-proxies.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { harness, until, type Harness } from './harness.ts';

let h: Harness | undefined;
const phones: TestPhone[] = [];
afterEach(async () => {
  for (const p of phones.splice(0)) await p.close();
  await h?.close();
  h = undefined;
});

async function phone(host: string): Promise<TestPhone> {
  const p = await TestPhone.create({ host });
  phones.push(p);
  return p;
}

const asserting = (value: string) => ({ headers: [{ name: SOURCE_HEADER, value }] });

describe('SIP_TRUSTED_PROXIES', () => {
  it("a trusted proxy's asserted source picks the IP trunk and is the call's remote address", async () => {
    h = await harness({}, 10, { trustedProxies: '127.0.0.5/32' });
    await h.trunk({ sip_address: '127.0.0.9', allowed_inbound_ips: ['127.0.0.9'] });
    const proxy = await phone('127.0.0.5');
    const call = await proxy.call(h.target('echo'), asserting('127.0.0.9:5099'));
    await until(() => h!.server.registry.size === 1, 2000, 'call registered');
    const session = h.server.registry.list()[0]!;
    expect(session.facts?.remote).toBe('udp:127.0.0.9:5099');
    expect(await call.hangup()).toBe(200);
    await until(() => h!.server.registry.size === 0, 3000, 'call ended');

    // The proxy speaking for itself (no assertion) is no trunk's source.
    const bare = await proxy.dial(h.target('echo'));
    expect((await bare.outcome).status).toBe(403);
  }, 20_000);

  it('the same assertion from an untrusted source is ignored: judged by its real source, refused 403', async () => {
    h = await harness({}, 10, { trustedProxies: '127.0.0.5/32' });
    await h.trunk({ sip_address: '127.0.0.9', allowed_inbound_ips: ['127.0.0.9'] });
    const stranger = await phone('127.0.0.6');
    const call = await stranger.dial(h.target('echo'), asserting('127.0.0.9:5099'));
    expect((await call.outcome).status).toBe(403);
    expect(h.server.registry.size).toBe(0);
  }, 20_000);

  it('an untrusted source a trunk does accept keeps its own address on the call, whatever it asserts', async () => {
    h = await harness({}, 10, { trustedProxies: '127.0.0.5/32' });
    await h.trunk({ sip_address: '127.0.0.9', allowed_inbound_ips: ['127.0.0.9', '127.0.0.6'] });
    const stranger = await phone('127.0.0.6');
    const call = await stranger.call(h.target('echo'), asserting('127.0.0.9:5099'));
    await until(() => h!.server.registry.size === 1, 2000, 'call registered');
    expect(h.server.registry.list()[0]!.facts?.remote).toBe(`udp:127.0.0.6:${stranger.port}`);
    expect(await call.hangup()).toBe(200);
  }, 20_000);

  it("strikes count against the asserted source, not the proxy: that caller is banned, the proxy's other callers are not", async () => {
    h = await harness({ abuse: { maxStrikes: 3 } }, 10, { trustedProxies: '127.0.0.5/32' });
    await h.trunk({ sip_address: '127.0.0.9', allowed_inbound_ips: ['127.0.0.9'] });
    const proxy = await phone('127.0.0.5');
    for (let i = 0; i < 3; i++) {
      const probe = await proxy.dial(h.target('echo'), asserting('127.0.0.66'));
      expect((await probe.outcome).status).toBe(403);
    }
    expect(h.server.abuse.isBanned('127.0.0.66')).toBe(true);
    expect(h.server.abuse.isBanned('127.0.0.5')).toBe(false);
    // The banned caller, through the proxy, hears nothing; the trunk's caller still gets through.
    const banned = await proxy.dial(h.target('echo'), asserting('127.0.0.66'));
    expect((await banned.outcome).status).toBe(408);
    const call = await proxy.call(h.target('echo'), asserting('127.0.0.9'));
    expect(await call.hangup()).toBe(200);
  }, 20_000);
});
