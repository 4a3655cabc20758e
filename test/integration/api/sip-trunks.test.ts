import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platform, trunkBody, type Platform } from './platform-helpers.ts';
import type { TrunkRegistry } from '../../../src/sip/trunk-registry.ts';
import { InMemoryTrunkRegistry, restoreTrunks } from '../../../src/sip/trunk-registry.ts';
import { createLogger } from '../../../src/util/logger.ts';

let t: Platform;
beforeEach(async () => { t = await platform(); });
afterEach(async () => { await t.close(); });

const count = async (table: 'sip_trunks' | 'phone_numbers') =>
  Number((await t.ctx.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

describe('POST /user/sip-trunks', () => {
  it('creates a trunk: 201 with the spec fields, a phone number record, provisioned trunks, no password', async () => {
    const res = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody());
    expect(res.status).toBe(201);
    expect(res.body.message).toEqual(expect.any(String));
    const d = res.body.data;
    expect(d).toMatchObject({
      id: expect.any(Number),
      phone_number: '+14155550100',
      phone_number_id: expect.any(Number),
      nickname: 'Main line',
      sip_username: 'alice',
      sip_address: 'sip.example.com',
      sip_calling_format: '+e164',
      inbound_authorization_type: 'auth',
      allowed_inbound_ips: null,
      outbound_proxy: false,
      media_nat: false,
      country_code: 'US',
      inbound_trunk_id: expect.any(String),
      outbound_trunk_id: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(res.body)).not.toContain('s3cret-pass');
    expect(d).not.toHaveProperty('sip_password');
    const stored = await t.ctx.store.db.selectFrom('sip_trunks').select('sip_password_enc').executeTakeFirstOrThrow();
    expect(stored.sip_password_enc).not.toContain('s3cret-pass');
    const phone = (await t.req(t.a.key, 'GET', '/user/phone-numbers')).body[0];
    expect(phone).toMatchObject({ id: d.phone_number_id, type: 'sip_trunk', sip_trunk_id: d.id });
    const provisioned = t.ctx.trunks.findInboundByNumber('+14155550100');
    expect(provisioned).toMatchObject({ inboundTrunkId: d.inbound_trunk_id, outboundTrunkId: d.outbound_trunk_id });
    expect(provisioned?.spec).toMatchObject({ id: d.id, accountId: t.a.id, password: 's3cret-pass', username: 'alice' });
  });

  it('transport (beside the spec): absent is null (DNS chooses); tls needs the TLS listener; others are 422', async () => {
    const plain = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody());
    expect(plain.body.data.transport).toBeNull();
    expect(t.ctx.trunks.findInboundByNumber('+14155550100')?.spec.transport).toBeUndefined();
    const tcp = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ phone_number: '+14155550101', transport: 'tcp' }));
    expect(tcp.status).toBe(201);
    expect(tcp.body.data.transport).toBe('tcp');
    const tlsNoListener = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ phone_number: '+14155550102', transport: 'tls' }));
    expect(tlsNoListener.status).toBe(422);
    expect(tlsNoListener.body.errors.transport[0]).toMatch(/SIP_TLS_CERT/);
    const bad = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ phone_number: '+14155550103', transport: 'sctp' }));
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toHaveProperty('transport');
  });

  it("srtp 'required' only on a tls trunk: SDES keys must not travel in clear signalling", async () => {
    const clear = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ srtp: 'required' }));
    expect(clear.status).toBe(422);
    expect(clear.body.errors.srtp[0]).toMatch(/transport is tls/);
  });

  it('a tls trunk on an engine listening for TLS: stored, shown and provisioned; srtp may be required there', async () => {
    const secure = await platform(10, { SIP_TLS_CERT: '/etc/switchboard/sip.pem', SIP_TLS_KEY: '/etc/switchboard/sip.key' });
    try {
      const required = await secure.req(secure.a.key, 'POST', '/user/sip-trunks', trunkBody({ phone_number: '+14155550109', transport: 'tls', srtp: 'required' }));
      expect(required.status).toBe(201);
      expect(required.body.data).toMatchObject({ transport: 'tls', srtp: 'required' });
      const res = await secure.req(secure.a.key, 'POST', '/user/sip-trunks', trunkBody({ transport: 'tls' }));
      expect(res.status).toBe(201);
      expect(res.body.data.transport).toBe('tls');
      expect((await secure.req(secure.a.key, 'GET', `/user/sip-trunks/${res.body.data.id}`)).body.transport).toBe('tls');
      expect(secure.ctx.trunks.findInboundByNumber('+14155550100')?.spec.transport).toBe('tls');
    } finally {
      await secure.close();
    }
  });

  it('media_nat (beyond the spec): off by default; on, it reaches the SIP layer and survives a restart', async () => {
    const res = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ media_nat: true }));
    expect(res.status).toBe(201);
    expect(res.body.data.media_nat).toBe(true);
    expect(t.ctx.trunks.findInboundByNumber('+14155550100')?.spec.mediaNat).toBe(true);
    expect((await t.req(t.a.key, 'GET', `/user/sip-trunks/${res.body.data.id}`)).body.media_nat).toBe(true);
    const fresh = new InMemoryTrunkRegistry();
    await restoreTrunks(t.ctx.repos.sipTrunks, fresh, createLogger('silent'));
    expect(fresh.list()[0]?.spec.mediaNat).toBe(true);
  });

  it('detects the country from the number, takes an explicit one, and accepts extensions', async () => {
    const uk = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ phone_number: '+442071838750' }));
    expect(uk.body.data.country_code).toBe('GB');
    const given = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ phone_number: '+14165550100', country_code: 'us-ny' }));
    expect(given.body.data.country_code).toBe('US');
    const ext = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ sip_trunk_type: 'extension', phone_number: '1001', country_code: 'DE' }));
    expect(ext.status).toBe(201);
    expect(ext.body.data).toMatchObject({ phone_number: '1001', country_code: 'DE', sip_trunk_type: 'extension' });
  });

  it('takes IP authorization with addresses and ranges', async () => {
    const res = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({
      inbound_authorization_type: 'ip',
      allowed_inbound_ips: ['203.0.113.7', '2001:db8::1', '198.51.100.0/24'],
      outbound_proxy: true,
      sip_address: '203.0.113.7',
    }));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ allowed_inbound_ips: ['203.0.113.7', '2001:db8::1', '198.51.100.0/24'], outbound_proxy: true });
    expect(t.ctx.trunks.findInboundBySource('198.51.100.50')).toHaveLength(1);
  });

  it.each([
    ['sip_trunk_type', { sip_trunk_type: 'pbx' }],
    ['phone_number', { phone_number: '4155550100' }],
    ['phone_number', { phone_number: '+04155550100' }],
    ['phone_number', { sip_trunk_type: 'extension', phone_number: '1234567890123456', country_code: 'US' }],
    ['phone_number', { sip_trunk_type: 'extension', phone_number: '10 01', country_code: 'US' }],
    ['nickname', { nickname: 'n'.repeat(51) }],
    ['sip_username', { sip_username: 'ab' }],
    ['sip_username', { sip_username: 'u'.repeat(129) }],
    ['sip_password', { sip_password: 'pw' }],
    ['sip_password', { sip_password: undefined }],
    ['sip_address', { sip_address: 'sip.example.com:5060' }],
    ['sip_address', { sip_address: 'sip:sip.example.com' }],
    ['sip_address', { sip_address: 'sip.example.com/x' }],
    ['sip_address', { sip_address: '[2001:db8::1]:5060' }],
    ['sip_calling_format', { sip_calling_format: 'e.164' }],
    ['inbound_authorization_type', { inbound_authorization_type: 'none' }],
    ['allowed_inbound_ips', { inbound_authorization_type: 'ip' }],
    ['allowed_inbound_ips', { inbound_authorization_type: 'ip', allowed_inbound_ips: [] }],
    ['allowed_inbound_ips.1', { inbound_authorization_type: 'ip', allowed_inbound_ips: ['203.0.113.7', 'bad-ip'] }],
    ['country_code', { country_code: 'XX' }],
    ['country_code', { sip_trunk_type: 'extension', phone_number: '100' }],
    ['country_code', { phone_number: '+88212345678' }],
    ['outbound_proxy', { outbound_proxy: 'yes' }],
    ['media_nat', { media_nat: 'yes' }],
    ['srtp', { srtp: 'maybe' }],
  ])('422 {message, errors} naming %s', async (field, over) => {
    const res = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody(over));
    expect(res.status).toBe(422);
    expect(res.body.message).toEqual(expect.any(String));
    expect(res.body.errors[field]).toBeDefined();
    expect(await count('sip_trunks')).toBe(0);
  });

  it('srtp: off unless given; the policy is answered, stored and handed to the SIP layer, and survives a restart', async () => {
    const plain = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody());
    expect(plain.body.data.srtp).toBe('off');
    const secured = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ sip_username: 'bob', srtp: 'offered' }));
    expect(secured.status).toBe(201);
    expect(secured.body.data.srtp).toBe('offered');
    expect(t.ctx.trunks.list().find((x) => x.inboundTrunkId === secured.body.data.inbound_trunk_id)?.spec.srtp).toBe('offered');
    const fresh = new InMemoryTrunkRegistry();
    await restoreTrunks(t.ctx.repos.sipTrunks, fresh, createLogger('silent'));
    expect(fresh.list().map((x) => x.spec.srtp).sort()).toEqual(['off', 'offered']);
  });

  it('409 {error} for the same number, username and address (any account, any case of host)', async () => {
    expect((await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody())).status).toBe(201);
    const dup = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ sip_address: 'SIP.Example.com', sip_password: 'other' }));
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ error: expect.stringMatching(/already exists/) });
    expect((await t.req(t.b.key, 'POST', '/user/sip-trunks', trunkBody())).status).toBe(409);
    expect((await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody({ sip_username: 'bob' }))).status).toBe(201);
    expect(t.ctx.trunks.list()).toHaveLength(2);
  });

  it('500 {error} and nothing saved when provisioning fails', async () => {
    const failing: TrunkRegistry = Object.assign(new InMemoryTrunkRegistry(), {
      provision: async () => { throw new Error('carrier API down'); },
    });
    t.ctx.trunks = failing;
    const res = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody());
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: expect.stringMatching(/provision/i) });
    expect(await count('sip_trunks')).toBe(0);
    expect(await count('phone_numbers')).toBe(0);
  });

  it('undoes the provisioning when saving fails after it', async () => {
    const registry = new InMemoryTrunkRegistry();
    t.ctx.trunks = registry;
    // Lose the race the pre-check cannot see: the row appears between check and insert.
    const exists = t.ctx.repos.sipTrunks.exists.bind(t.ctx.repos.sipTrunks);
    t.ctx.repos.sipTrunks.exists = async () => false;
    expect((await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody())).status).toBe(201);
    const dup = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody());
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ error: expect.any(String) });
    expect(registry.list()).toHaveLength(1);
    expect(await count('phone_numbers')).toBe(1);
    t.ctx.repos.sipTrunks.exists = exists;
  });

  it('never logs the password', async () => {
    const lines: string[] = [];
    const logger = createLogger('trace', new Writable({ write(chunk, _e, cb) { lines.push(String(chunk)); cb(); } }));
    t.ctx.trunks = Object.assign(new InMemoryTrunkRegistry(), { provision: async () => { throw new Error('down'); } });
    const original = t.ctx.logger;
    t.ctx.logger = logger;
    await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody());
    t.ctx.logger = original;
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain('s3cret-pass');
  });
});

describe('GET/DELETE /user/sip-trunks', () => {
  it('lists and reads the account\'s trunks; 404 for another account', async () => {
    const d = (await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody())).body.data;
    expect((await t.req(t.a.key, 'GET', '/user/sip-trunks')).body).toEqual([d]);
    expect((await t.req(t.a.key, 'GET', `/user/sip-trunks/${d.id}`)).body).toEqual(d);
    expect((await t.req(t.b.key, 'GET', '/user/sip-trunks')).body).toEqual([]);
    expect((await t.req(t.b.key, 'GET', `/user/sip-trunks/${d.id}`)).status).toBe(404);
    expect((await t.req(t.b.key, 'DELETE', `/user/sip-trunks/${d.id}`)).status).toBe(404);
    expect(t.ctx.trunks.list()).toHaveLength(1);
  });

  it('delete removes the trunk, its number and the provisioning; assistants lose the number', async () => {
    const d = (await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody())).body.data;
    const assistant = await t.assistant(t.a.id, 'inbound', d.phone_number_id);
    const res = await t.req(t.a.key, 'DELETE', `/user/sip-trunks/${d.id}`);
    expect(res.status).toBe(200);
    expect(res.body.message).toMatch(/deleted/);
    expect(await count('sip_trunks')).toBe(0);
    expect(await count('phone_numbers')).toBe(0);
    expect(t.ctx.trunks.list()).toEqual([]);
    const row = await t.ctx.store.db.selectFrom('assistants').select('phone_number_id').where('id', '=', assistant).executeTakeFirstOrThrow();
    expect(row.phone_number_id).toBeNull();
    expect((await t.req(t.a.key, 'DELETE', `/user/sip-trunks/${d.id}`)).status).toBe(404);
  });

  it('re-provisions stored trunks with their ids (engine start)', async () => {
    const d = (await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody())).body.data;
    const fresh = new InMemoryTrunkRegistry();
    expect(await restoreTrunks(t.ctx.repos.sipTrunks, fresh, createLogger('silent'))).toBe(1);
    expect(fresh.list()[0]).toMatchObject({ inboundTrunkId: d.inbound_trunk_id, outboundTrunkId: d.outbound_trunk_id });
    expect(fresh.list()[0]?.spec).toMatchObject({ id: d.id, password: 's3cret-pass', countryCode: 'US' });
    const viaRepo = await t.ctx.repos.sipTrunks.getByInboundTrunkId(d.inbound_trunk_id);
    expect(viaRepo).toMatchObject({ password: 's3cret-pass', trunk: { id: d.id, phoneNumberId: d.phone_number_id } });
  });
});
