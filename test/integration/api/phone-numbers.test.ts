import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { platform, trunkBody, type Platform } from './platform-helpers.ts';

let t: Platform;
beforeEach(async () => { t = await platform(); });
afterEach(async () => { await t.close(); });

describe('/user/phone-numbers', () => {
  it('lists trunk and caller-ID numbers with the inbound assistant assigned', async () => {
    const trunk = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody());
    const trunkNumberId = trunk.body.data.phone_number_id as number;
    const callerId = await t.req(t.a.key, 'POST', '/user/phone-numbers', { phone_number: '+442071838750', type: 'caller_id' });
    expect(callerId.status).toBe(201);
    await t.assistant(t.a.id, 'outbound', trunkNumberId); // outbound ones do not count as assigned
    const inbound = await t.assistant(t.a.id, 'inbound', trunkNumberId);
    const list = await t.req(t.a.key, 'GET', '/user/phone-numbers');
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      expect.objectContaining({ id: trunkNumberId, phone_number: '+14155550100', type: 'sip_trunk', sip_trunk_id: trunk.body.data.id, assistant_id: inbound }),
      expect.objectContaining({ id: callerId.body.data.id, phone_number: '+442071838750', type: 'caller_id', sip_trunk_id: null, assistant_id: null }),
    ]);
    expect((await t.req(t.b.key, 'GET', '/user/phone-numbers')).body).toEqual([]);
  });

  it('validates caller-ID numbers and refuses duplicates', async () => {
    for (const body of [{ phone_number: '4155550100' }, { phone_number: '+1' }, {}, { phone_number: '+14155550100', type: 'sip_trunk' }]) {
      expect((await t.req(t.a.key, 'POST', '/user/phone-numbers', body)).status).toBe(422);
    }
    expect((await t.req(t.a.key, 'POST', '/user/phone-numbers', { phone_number: '+14155550111' })).status).toBe(201);
    const dup = await t.req(t.a.key, 'POST', '/user/phone-numbers', { phone_number: '+14155550111' });
    expect(dup.status).toBe(409);
    expect(dup.body.message).toBeDefined();
    // Another account may register the same caller ID.
    expect((await t.req(t.b.key, 'POST', '/user/phone-numbers', { phone_number: '+14155550111' })).status).toBe(201);
  });

  it('deletes caller-ID numbers only; trunk numbers go with their trunk', async () => {
    const trunk = await t.req(t.a.key, 'POST', '/user/sip-trunks', trunkBody());
    const res = await t.req(t.a.key, 'DELETE', `/user/phone-numbers/${trunk.body.data.phone_number_id}`);
    expect(res.status).toBe(409);
    const id = (await t.req(t.a.key, 'POST', '/user/phone-numbers', { phone_number: '+14155550111' })).body.data.id;
    expect((await t.req(t.b.key, 'DELETE', `/user/phone-numbers/${id}`)).status).toBe(404);
    expect((await t.req(t.a.key, 'DELETE', `/user/phone-numbers/${id}`)).status).toBe(200);
    expect((await t.req(t.a.key, 'DELETE', `/user/phone-numbers/${id}`)).status).toBe(404);
  });
});
