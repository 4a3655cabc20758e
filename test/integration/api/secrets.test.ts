import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantBody, harness, trunkBody, type Harness } from './harness.ts';
import { InMemoryTrunkRegistry } from '../../../src/sip/trunk-registry.ts';

/**
 * Secrets are write-only: the SIP password, WhatsApp auth tokens, calendar API keys, custom tool
 * headers and API keys
 * appear in no answer of any GET or list route, and in no log line (the whole engine log is
 * captured at trace level, request logging included), on success and on failure paths.
 */

const SIP_PASSWORD = 'sip-Pa55word-7f3a9c';
const AUTH_TOKEN = 'wa-auth-token-91b2e77d';
const NEW_AUTH_TOKEN = 'wa-auth-token-rotated-55c1';
const CALENDAR_KEY = 'cal_live_key_0d9e8f7a6b5c';
const TOOL_TOKEN = 'tool_bearer_3c2b1a0f9e8d';

let h: Harness;
let key: string;
const answers: string[] = [];
beforeAll(async () => {
  h = await harness();
  key = (await h.account(10)).key;
});
afterAll(() => h.close());

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) {
  const res = await h.call(key, method, url, body);
  answers.push(res.raw);
  return res;
}

describe('secrets never leave the engine', () => {
  it('through create, update, read and list answers, or the log', async () => {
    const trunk = await call('POST', '/user/sip-trunks', trunkBody({ sip_password: SIP_PASSWORD }));
    expect(trunk.status).toBe(201);
    expect(trunk.body.data).not.toHaveProperty('sip_password');
    // A failed provisioning and a duplicate carry the password through other code paths.
    expect((await call('POST', '/user/sip-trunks', trunkBody({ sip_password: SIP_PASSWORD }))).status).toBe(409);
    const registry = h.ctx.trunks;
    h.ctx.trunks = Object.assign(new InMemoryTrunkRegistry(), {
      provision: async () => {
        throw new Error(`carrier refused password ${SIP_PASSWORD}`);
      },
    });
    expect((await call('POST', '/user/sip-trunks', trunkBody({ sip_username: 'bob', sip_password: SIP_PASSWORD }))).status).toBe(500);
    h.ctx.trunks = registry;

    const sender = await call('POST', '/user/whatsapp/senders', { name: 'WA', phone: '+14155550400', account_sid: 'AC1', auth_token: AUTH_TOKEN });
    expect(sender.status).toBe(201);
    expect((await call('PUT', `/user/whatsapp/senders/${sender.body.data.id}`, { auth_token: NEW_AUTH_TOKEN })).status).toBe(200);

    const custom = await call('POST', '/user/tools', {
      name: 'lookup',
      description: 'Looks up an order',
      parameters: { type: 'object', properties: {} },
      endpoint: 'https://tools.example.com/lookup',
      headers: { Authorization: `Bearer ${TOOL_TOKEN}` },
    });
    expect(custom.status).toBe(201);
    expect((await call('PUT', `/user/tools/${custom.body.data.id}`, { headers: custom.body.data.headers })).status).toBe(200);

    const tool = { type: 'calendar_booking', calendar_api_key: CALENDAR_KEY, calendar_event_slug: 'demo' };
    const assistant = await call('POST', '/user/assistant', assistantBody({ tools: [tool] }));
    expect(assistant.status).toBe(201);
    const id = assistant.body.data.id as number;
    const put = await call('PUT', `/user/assistant/${id}`, { name: 'Renamed' });
    expect(put.status).toBe(200);
    expect(put.body.data.tools[0].data.calendar_api_key).toBe(`********${CALENDAR_KEY.slice(-4)}`);
    // A rule failure with the key in the body: the 422 answer must not echo it either.
    expect((await call('PUT', `/user/assistant/${id}`, { tools: [{ ...tool, calendar_endpoint: 'custom' }] })).status).toBe(422);

    for (const url of [
      '/user/sip-trunks',
      `/user/sip-trunks/${trunk.body.data.id}`,
      '/user/phone-numbers',
      '/user/whatsapp/senders',
      `/user/whatsapp/senders/${sender.body.data.id}`,
      '/user/assistants',
      `/user/assistant/${id}`,
      '/user/tools',
      `/user/tools/${custom.body.data.id}`,
    ]) {
      expect((await call('GET', url)).status, url).toBe(200);
    }

    const everything = answers.join('\n');
    const log = h.logs.join('');
    expect(log).toContain('"reqId"'); // request logging was captured
    for (const secret of [SIP_PASSWORD, AUTH_TOKEN, NEW_AUTH_TOKEN, CALENDAR_KEY, TOOL_TOKEN, key]) {
      expect(everything, 'answers').not.toContain(secret);
      expect(log, 'log').not.toContain(secret);
    }
    // Stored sealed, not in clear.
    const row = h.ctx.store.sqlite.prepare('SELECT * FROM sip_trunks').all();
    expect(JSON.stringify(row)).not.toContain(SIP_PASSWORD);
    const cfg = h.ctx.store.sqlite.prepare('SELECT config FROM assistants').all();
    expect(JSON.stringify(cfg)).not.toContain(CALENDAR_KEY);
    expect(JSON.stringify(h.ctx.store.sqlite.prepare('SELECT * FROM tools').all())).not.toContain(TOOL_TOKEN);
    const wa = h.ctx.store.sqlite.prepare('SELECT * FROM whatsapp_senders').all();
    expect(JSON.stringify(wa)).not.toContain(NEW_AUTH_TOKEN);
  });
});

describe('SIP trunk bounds, the accepted side', () => {
  it.each([
    ['nickname of 50 characters', { nickname: 'n'.repeat(50) }],
    ['no nickname', { nickname: undefined }],
    ['sip_username of 3 characters', { sip_username: 'abc' }],
    ['sip_username of 128 characters', { sip_username: 'u'.repeat(128) }],
    ['sip_password of 3 characters', { sip_password: 'pw3' }],
    ['an extension of 1 character', { sip_trunk_type: 'extension', phone_number: '7', country_code: 'DE' }],
    ['an extension of 15 characters', { sip_trunk_type: 'extension', phone_number: '123456789012345', country_code: 'DE' }],
    ['a 3166-2 subdivision code', { country_code: 'US-CA' }],
    ['each calling format', { sip_calling_format: 'national' }],
    ['an IPv6 host', { sip_address: '2001:db8::10' }],
  ])('%s → 201', async (_label, over) => {
    const n = h.ctx.trunks.list().length;
    const res = await h.call(key, 'POST', '/user/sip-trunks', trunkBody({ sip_username: `u-${n}`, phone_number: `+1415555${String(1000 + n)}`, ...over }));
    expect(res.status, res.raw).toBe(201);
  });
});
