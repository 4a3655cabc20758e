/**
 * SIP trunks and phone numbers behave the same on SQLite and PostgreSQL: the password is sealed
 * at rest and opened again, the IP list (a JSON column) and the flags come back as they went in,
 * the (number, username, address) index refuses a second trunk on both, and deleting a number
 * unbinds its assistants and stops its campaigns in the same transaction.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRepos, type Repos } from '../../../src/store/index.ts';
import { SecretBox } from '../../../src/store/secrets.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import type { Store } from '../../../src/store/db.ts';
import { isUniqueViolation, type NewSipTrunk } from '../../../src/store/repos/sip-trunks.ts';
import { postgresAvailable, postgresUnavailableReason, STORE_BACKENDS, type StoreBackend } from '../../support/postgres.ts';
import { openTestStore, type TestStore } from '../../support/test-store.ts';

const T0 = 1_764_000_000_123;
const PASSWORD = 'trunk-pass-Secret-991';

let opened: TestStore[] = [];
afterEach(async () => {
  for (const s of opened.reverse()) await s.close();
  opened = [];
});

async function open(backend: StoreBackend): Promise<{ store: Store; repos: Repos; clock: ManualClock }> {
  const s = await openTestStore(backend);
  opened.push(s);
  const clock = new ManualClock(T0);
  return { store: s.store, repos: createRepos(s.store, clock, new SecretBox(Buffer.alloc(32, 5))), clock };
}

const trunk = (accountId: number, over: Partial<NewSipTrunk> = {}): NewSipTrunk => ({
  accountId,
  sipTrunkType: 'number',
  phoneNumber: '+4930123456',
  nickname: 'Berlin office',
  sipUsername: 'berlin',
  sipPassword: PASSWORD,
  sipAddress: 'sip.example.net',
  sipCallingFormat: '+e164',
  inboundAuthorizationType: 'ip',
  allowedInboundIps: ['192.0.2.10', '198.51.100.0/24'],
  outboundProxy: true,
  mediaNat: true,
  countryCode: 'DE',
  transport: 'tls',
  srtp: 'required',
  ...over,
});

if (!postgresAvailable) console.warn(`[store backends: telephony] postgres cases skipped: ${postgresUnavailableReason}`);

describe.each(STORE_BACKENDS)('SIP trunks and phone numbers on %s', (backend) => {
  describe.skipIf(backend === 'postgres' && !postgresAvailable)('', () => {
    it('a trunk round-trips: password sealed and opened, IP list, flags, transport, its number row', async () => {
      const { repos, store } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const other = await repos.accounts.create('Other');
      const ids = { inboundTrunkId: 'in-1', outboundTrunkId: 'out-1' };
      const created = await repos.sipTrunks.create(trunk(acc.id), ids);
      const expected = {
        id: created.id,
        accountId: acc.id,
        sipTrunkType: 'number',
        phoneNumber: '+4930123456',
        nickname: 'Berlin office',
        sipUsername: 'berlin',
        sipAddress: 'sip.example.net',
        inboundAuthorizationType: 'ip',
        allowedInboundIps: ['192.0.2.10', '198.51.100.0/24'],
        outboundProxy: true,
        mediaNat: true,
        countryCode: 'DE',
        transport: 'tls',
        srtp: 'required',
        inboundTrunkId: 'in-1',
        outboundTrunkId: 'out-1',
        phoneNumberId: expect.any(Number),
        createdAt: T0,
        updatedAt: T0,
      };
      expect(created).toMatchObject(expected);
      expect(created).not.toHaveProperty('sipPassword');
      expect(await repos.sipTrunks.get(acc.id, created.id)).toEqual(created);
      expect(await repos.sipTrunks.get(other.id, created.id)).toBeUndefined();

      // At rest the password is sealed; the SIP layer gets it back in clear.
      const raw = await store.db.selectFrom('sip_trunks').select('sip_password_enc').executeTakeFirstOrThrow();
      expect(raw.sip_password_enc).not.toContain(PASSWORD);
      const byIn = await repos.sipTrunks.getByInboundTrunkId('in-1');
      expect(byIn).toEqual({ trunk: created, password: PASSWORD });
      expect(await repos.sipTrunks.getByInboundTrunkId('in-nope')).toBeUndefined();
      const [prov] = await repos.sipTrunks.allForProvisioning();
      expect(prov).toMatchObject({ sipTrunkId: created.id, ids });
      expect(prov!.spec()).toMatchObject({ password: PASSWORD, allowedIps: ['192.0.2.10', '198.51.100.0/24'], outboundProxy: true, mediaNat: true, transport: 'tls', srtp: 'required' });

      // The defaults: no IP list (NULL, not []), flags off, DNS picks the transport.
      const plain = await repos.sipTrunks.create(
        trunk(acc.id, { phoneNumber: '+4940999', nickname: null, inboundAuthorizationType: 'auth', allowedInboundIps: null, outboundProxy: false, mediaNat: false, transport: null, srtp: 'off' }),
        { inboundTrunkId: 'in-2', outboundTrunkId: 'out-2' },
      );
      expect(await repos.sipTrunks.get(acc.id, plain.id)).toMatchObject({ nickname: null, allowedInboundIps: null, outboundProxy: false, mediaNat: false, transport: null, srtp: 'off' });
      expect((await repos.sipTrunks.list(acc.id)).map((t) => t.id)).toEqual([created.id, plain.id]);
      expect(await repos.sipTrunks.list(other.id)).toEqual([]);

      // Its number is listed with the account's numbers, typed sip_trunk.
      expect(await repos.phoneNumbers.get(acc.id, created.phoneNumberId!)).toEqual({
        id: created.phoneNumberId,
        accountId: acc.id,
        phoneNumber: '+4930123456',
        type: 'sip_trunk',
        sipTrunkId: created.id,
        assistantId: null,
        createdAt: T0,
      });
    });

    it('the same number, username and address twice: exists() sees it and the index refuses it, on any account', async () => {
      const { repos, store } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const other = await repos.accounts.create('Other');
      await repos.sipTrunks.create(trunk(acc.id), { inboundTrunkId: 'in-1', outboundTrunkId: 'out-1' });
      expect(await repos.sipTrunks.exists('+4930123456', 'berlin', 'sip.example.net')).toBe(true);
      expect(await repos.sipTrunks.exists('+4930123456', 'berlin', 'sip.example.org')).toBe(false);
      const dup = await repos.sipTrunks.create(trunk(other.id), { inboundTrunkId: 'in-2', outboundTrunkId: 'out-2' }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(dup).toBeDefined();
      expect(isUniqueViolation(dup)).toBe(true); // what the route turns into 409
      // The transaction left nothing behind: no trunk, no orphan number row.
      expect(await repos.sipTrunks.list(other.id)).toEqual([]);
      expect(await repos.phoneNumbers.list(other.id)).toEqual([]);
      expect(await store.db.selectFrom('phone_numbers').select('id').execute()).toHaveLength(1);
      // A different username on the same number and address is a different trunk.
      await repos.sipTrunks.create(trunk(other.id, { sipUsername: 'hamburg' }), { inboundTrunkId: 'in-3', outboundTrunkId: 'out-3' });
      expect(await repos.sipTrunks.list(other.id)).toHaveLength(1);
    });

    it('caller IDs: created, found by number and type, the inbound assistant shown, deleted with what used them', async () => {
      const { repos, clock } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const other = await repos.accounts.create('Other');
      clock.advance(7);
      const cid = await repos.phoneNumbers.createCallerId(acc.id, '+15551234567');
      expect(cid).toEqual({ id: cid.id, accountId: acc.id, phoneNumber: '+15551234567', type: 'caller_id', sipTrunkId: null, assistantId: null, createdAt: T0 + 7 });
      expect(await repos.phoneNumbers.find(acc.id, '+15551234567', 'caller_id')).toEqual(cid);
      expect(await repos.phoneNumbers.find(acc.id, '+15551234567', 'sip_trunk')).toBeUndefined();
      expect(await repos.phoneNumbers.find(other.id, '+15551234567', 'caller_id')).toBeUndefined();
      expect(await repos.phoneNumbers.get(other.id, cid.id)).toBeUndefined();

      // An outbound assistant is not "assigned"; the inbound one is.
      await repos.assistants.create(acc.id, { name: 'Out', type: 'outbound', mode: 'pipeline', phone_number_id: cid.id } as never);
      const inbound = await repos.assistants.create(acc.id, { name: 'In', type: 'inbound', mode: 'pipeline', phone_number_id: cid.id } as never);
      expect((await repos.phoneNumbers.get(acc.id, cid.id))?.assistantId).toBe(inbound.id);
      expect((await repos.phoneNumbers.list(acc.id)).map((p) => [p.id, p.assistantId])).toEqual([[cid.id, inbound.id]]);

      const running = await repos.campaigns.create(acc.id, { name: 'Run', assistantId: inbound.id, phoneNumberId: cid.id, maxConcurrentCalls: 1, callingHours: null });
      const draft = await repos.campaigns.create(acc.id, { name: 'Draft', assistantId: inbound.id, phoneNumberId: cid.id, maxConcurrentCalls: 1, callingHours: null });
      expect(await repos.campaigns.setStatus(running.id, 'draft', 'in-progress')).toBe(true);

      expect(await repos.phoneNumbers.delete(other.id, cid.id)).toBeUndefined();
      clock.advance(1);
      expect(await repos.phoneNumbers.delete(acc.id, cid.id)).toEqual({ stoppedCampaignIds: [running.id] });
      expect(await repos.phoneNumbers.list(acc.id)).toEqual([]);
      const after = await repos.assistants.get(acc.id, inbound.id);
      expect(after).toMatchObject({ phoneNumberId: null, updatedAt: T0 + 8 });
      expect(after!.config.phone_number_id ?? null).toBeNull();
      expect((await repos.campaigns.get(acc.id, running.id))?.status).toBe('stopped');
      expect((await repos.campaigns.get(acc.id, draft.id))?.status).toBe('draft');
      expect(await repos.phoneNumbers.delete(acc.id, cid.id)).toBeUndefined();
    });

    it('deleting a trunk takes its number along, unbinds its assistant and stops its running campaign', async () => {
      const { repos } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const other = await repos.accounts.create('Other');
      const t = await repos.sipTrunks.create(trunk(acc.id), { inboundTrunkId: 'in-1', outboundTrunkId: 'out-1' });
      const a = await repos.assistants.create(acc.id, { name: 'In', type: 'inbound', mode: 'pipeline', phone_number_id: t.phoneNumberId } as never);
      const c = await repos.campaigns.create(acc.id, { name: 'Run', assistantId: a.id, phoneNumberId: t.phoneNumberId!, maxConcurrentCalls: 1, callingHours: null });
      await repos.campaigns.setStatus(c.id, 'draft', 'in-progress');
      expect(await repos.sipTrunks.delete(other.id, t.id)).toBeUndefined();
      const res = await repos.sipTrunks.delete(acc.id, t.id);
      expect(res).toEqual({ trunk: t, stoppedCampaignIds: [c.id] });
      expect(await repos.sipTrunks.list(acc.id)).toEqual([]);
      expect(await repos.phoneNumbers.list(acc.id)).toEqual([]);
      expect((await repos.assistants.get(acc.id, a.id))?.phoneNumberId).toBeNull();
      expect(await repos.sipTrunks.getByInboundTrunkId('in-1')).toBeUndefined();
      // The number is free again.
      expect(await repos.sipTrunks.exists('+4930123456', 'berlin', 'sip.example.net')).toBe(false);
    });
  });
});
