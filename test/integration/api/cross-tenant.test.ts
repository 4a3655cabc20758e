import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantBody, harness, seed, type Harness } from './harness.ts';

/**
 * Every route that takes an id, table-driven: account B asking for account A's resource gets
 * exactly what it gets for an id that does not exist (same status, same body), A's resource is
 * untouched afterwards, and A itself succeeds on the same URL (so the 404 is about ownership,
 * not a wrong URL). A guard checks that the table names every id route the app registers.
 */

type Ids = Awaited<ReturnType<typeof seed>>;
interface Case {
  /** URL with the owner's ids; `missing` is the same URL with the tested id swapped for one that exists nowhere. */
  url(ids: Ids, conv: string): string;
  missing(ids: Ids, conv: string): string;
  body?: (ids: Ids) => unknown;
  /** A's own request succeeds with this status (checked after B's attempts). */
  ownStatus: number;
}

const NOPE = 987_654;
const NOPE_UUID = '00000000-0000-4000-8000-000000000000';

/** Keyed by "METHOD url" exactly as the routes register them. */
const CASES: Record<string, Case> = {
  'GET /user/assistant/:id': { url: (i) => `/user/assistant/${i.assistant}`, missing: () => `/user/assistant/${NOPE}`, ownStatus: 200 },
  'PUT /user/assistant/:id': {
    url: (i) => `/user/assistant/${i.assistant}`,
    missing: () => `/user/assistant/${NOPE}`,
    body: () => ({ name: 'Taken over' }),
    ownStatus: 200,
  },
  'DELETE /user/assistant/:id': { url: (i) => `/user/assistant/${i.assistant}`, missing: () => `/user/assistant/${NOPE}`, ownStatus: 200 },
  'GET /user/folders/:id': { url: (i) => `/user/folders/${i.folder}`, missing: () => `/user/folders/${NOPE}`, ownStatus: 200 },
  'DELETE /user/folders/:id': { url: (i) => `/user/folders/${i.folder}`, missing: () => `/user/folders/${NOPE}`, ownStatus: 200 },
  'GET /user/labels/:id': { url: (i) => `/user/labels/${i.label}`, missing: () => `/user/labels/${NOPE}`, ownStatus: 200 },
  'DELETE /user/labels/:id': { url: (i) => `/user/labels/${i.label}`, missing: () => `/user/labels/${NOPE}`, ownStatus: 200 },
  'GET /user/tools/:id': { url: (i) => `/user/tools/${i.tool}`, missing: () => `/user/tools/${NOPE}`, ownStatus: 200 },
  'PUT /user/tools/:id': { url: (i) => `/user/tools/${i.tool}`, missing: () => `/user/tools/${NOPE}`, body: () => ({ description: 'Hijacked' }), ownStatus: 200 },
  'DELETE /user/tools/:id': { url: (i) => `/user/tools/${i.tool}`, missing: () => `/user/tools/${NOPE}`, ownStatus: 200 },
  'GET /user/knowledge-bases/:id': { url: (i) => `/user/knowledge-bases/${i.kb}`, missing: () => `/user/knowledge-bases/${NOPE}`, ownStatus: 200 },
  'DELETE /user/knowledge-bases/:id': { url: (i) => `/user/knowledge-bases/${i.kb}`, missing: () => `/user/knowledge-bases/${NOPE}`, ownStatus: 200 },
  'POST /user/knowledge-bases/:id/documents': {
    url: (i) => `/user/knowledge-bases/${i.kb}/documents`,
    missing: () => `/user/knowledge-bases/${NOPE}/documents`,
    body: () => ({ title: 'Planted', content: 'Injected text' }),
    ownStatus: 201,
  },
  'GET /user/knowledge-bases/:id/documents/:document_id': {
    url: (i) => `/user/knowledge-bases/${i.kb}/documents/${i.doc}`,
    missing: (i) => `/user/knowledge-bases/${i.kb}/documents/${NOPE}`,
    ownStatus: 200,
  },
  'DELETE /user/knowledge-bases/:id/documents/:document_id': {
    url: (i) => `/user/knowledge-bases/${i.kb}/documents/${i.doc}`,
    missing: (i) => `/user/knowledge-bases/${i.kb}/documents/${NOPE}`,
    ownStatus: 200,
  },
  'GET /user/phone-numbers/:id': { url: (i) => `/user/phone-numbers/${i.callerId}`, missing: () => `/user/phone-numbers/${NOPE}`, ownStatus: 200 },
  'DELETE /user/phone-numbers/:id': { url: (i) => `/user/phone-numbers/${i.callerId}`, missing: () => `/user/phone-numbers/${NOPE}`, ownStatus: 200 },
  'GET /user/sip-trunks/:id': { url: (i) => `/user/sip-trunks/${i.trunk}`, missing: () => `/user/sip-trunks/${NOPE}`, ownStatus: 200 },
  'DELETE /user/sip-trunks/:id': { url: (i) => `/user/sip-trunks/${i.trunk}`, missing: () => `/user/sip-trunks/${NOPE}`, ownStatus: 200 },
  'GET /user/campaigns/:id': { url: (i) => `/user/campaigns/${i.campaign}`, missing: () => `/user/campaigns/${NOPE}`, ownStatus: 200 },
  'DELETE /user/campaigns/:id': { url: (i) => `/user/campaigns/${i.campaign}`, missing: () => `/user/campaigns/${NOPE}`, ownStatus: 200 },
  'POST /user/campaigns/:id/leads': {
    url: (i) => `/user/campaigns/${i.campaign}/leads`,
    missing: () => `/user/campaigns/${NOPE}/leads`,
    body: () => ({ leads: [{ phone_number: '+14155550123' }] }),
    ownStatus: 201,
  },
  'GET /user/campaigns/:id/leads': { url: (i) => `/user/campaigns/${i.campaign}/leads`, missing: () => `/user/campaigns/${NOPE}/leads`, ownStatus: 200 },
  'GET /user/whatsapp/senders/:id': { url: (i) => `/user/whatsapp/senders/${i.sender}`, missing: () => `/user/whatsapp/senders/${NOPE}`, ownStatus: 200 },
  'PUT /user/whatsapp/senders/:id': {
    url: (i) => `/user/whatsapp/senders/${i.sender}`,
    missing: () => `/user/whatsapp/senders/${NOPE}`,
    body: () => ({ status: 'offline' }),
    ownStatus: 200,
  },
  'DELETE /user/whatsapp/senders/:id': { url: (i) => `/user/whatsapp/senders/${i.sender}`, missing: () => `/user/whatsapp/senders/${NOPE}`, ownStatus: 200 },
  'GET /user/calls/:id': { url: (i) => `/user/calls/${i.call}`, missing: () => `/user/calls/${NOPE}`, ownStatus: 200 },
  'GET /user/calls/:id/recording': { url: (i) => `/user/calls/${i.call}/recording`, missing: () => `/user/calls/${NOPE}/recording`, ownStatus: 200 },
  'GET /user/calls/:id/tape': { url: (i) => `/user/calls/${i.call}/tape`, missing: () => `/user/calls/${NOPE}/tape`, ownStatus: 200 },
  'GET /user/calls/:id/webhooks': { url: (i) => `/user/calls/${i.call}/webhooks`, missing: () => `/user/calls/${NOPE}/webhooks`, ownStatus: 200 },
  // The owner's call is not live here: 409; anyone else's: the same 404 as a missing one.
  'POST /user/calls/:id/hangup': { url: (i) => `/user/calls/${i.call}/hangup`, missing: () => `/user/calls/${NOPE}/hangup`, ownStatus: 409 },
  'GET /conversations/:uuid': { url: (_i, c) => `/conversations/${c}`, missing: () => `/conversations/${NOPE_UUID}`, ownStatus: 200 },
  'POST /automate/conversations/:uuid/disable-ai': {
    url: (_i, c) => `/automate/conversations/${c}/disable-ai`,
    missing: () => `/automate/conversations/${NOPE_UUID}/disable-ai`,
    ownStatus: 200,
  },
  'POST /automate/conversations/:uuid/enable-ai': {
    url: (_i, c) => `/automate/conversations/${c}/enable-ai`,
    missing: () => `/automate/conversations/${NOPE_UUID}/enable-ai`,
    ownStatus: 200,
  },
  // A's own request would ask the model; B's must stop at the lookup, which is what is tested.
  'POST /conversations/:uuid/messages': {
    url: (_i, c) => `/conversations/${c}/messages`,
    missing: () => `/conversations/${NOPE_UUID}/messages`,
    body: () => ({ message: 'hello' }),
    ownStatus: 0,
  },
};

/**
 * Id routes not in the table, with why. The provider webhooks carry no bearer key: they are
 * authenticated by the sender's signature, tested with the WhatsApp webhook.
 */
// Catalog voice ids are not store resources; a private voice's preview is a 404 for everyone
// (test/integration/api/voice-previews.test.ts).
const NOT_TENANT_KEYED = new Set(['POST /webhooks/whatsapp/:sender_id', 'POST /webhooks/whatsapp/:sender_id/status', 'GET /voices/:id/preview.wav']);

let h: Harness;
let a: { id: number; key: string };
let b: { id: number; key: string };
let dataDir: string;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-tenant-'));
  h = await harness({ dataDir });
  a = await h.account(10);
  b = await h.account(10);
});
afterAll(async () => {
  await h.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('cross-tenant isolation', () => {
  it('the table covers every route whose path takes an id', () => {
    const idRoutes = h.built.api.routes.filter((r) => r.url.includes('/:')).map((r) => `${r.method} ${r.url}`);
    const uncovered = idRoutes.filter((k) => !(k in CASES) && !NOT_TENANT_KEYED.has(k));
    expect(uncovered).toEqual([]);
    const stale = Object.keys(CASES).filter((k) => !idRoutes.includes(k));
    expect(stale).toEqual([]);
  });

  it.each(Object.keys(CASES))("%s: another account's id answers exactly like a missing one; the owner's resource is untouched", async (key) => {
    const c = CASES[key]!;
    const [method] = key.split(' ') as ['GET' | 'POST' | 'PUT' | 'DELETE'];
    // A fresh set of A's resources per route, so a DELETE case cannot disturb the next one.
    const n = Object.keys(CASES).indexOf(key);
    const ids = await seed(h, a.key, n);
    fs.mkdirSync(path.join(dataDir, 'recordings'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'recordings', `${ids.call}.wav`), 'RIFFfake');
    fs.writeFileSync(path.join(dataDir, 'recordings', `${ids.call}.tape.json`), '{"kind":"switchboard-call-tape"}');
    await h.ctx.repos.calls.update(ids.call, { recordingPath: `recordings/${ids.call}.wav`, details: { tape: `recordings/${ids.call}.tape.json` } });
    const assistantUuid = (await h.call(a.key, 'GET', `/user/assistant/${ids.assistant}`)).body.uuid as string;
    const conv = (await h.call(a.key, 'POST', '/conversations', { assistant_id: assistantUuid, type: 'test' })).body.conversation_id as string;
    expect(conv).toEqual(expect.any(String));

    const body = c.body?.(ids);
    const before = await snapshot(ids, conv);
    const foreign = await h.call(b.key, method, c.url(ids, conv), body);
    const missing = await h.call(b.key, method, c.missing(ids, conv), body);
    expect(foreign.status, foreign.raw).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect(await snapshot(ids, conv)).toEqual(before);
    // The same request by the owner works: the 404 above is about ownership.
    if (c.ownStatus) expect((await h.call(a.key, method, c.url(ids, conv), body)).status).toBe(c.ownStatus);
  });

  it('ids inside bodies: another account’s is refused like a missing one', async () => {
    const ids = await seed(h, a.key, 90);
    const mine = await seed(h, b.key, 91);
    const cases: Array<[string, string, (id: number) => unknown, number]> = [
      ['POST', '/user/assistants/disable-inbound-webhook', (id) => ({ assistant_id: id }), ids.assistant],
      ['POST', '/user/ai/generate-reply', (id) => ({ assistant_id: id, customer_identifier: 'c1', message: 'hi' }), ids.assistant],
      ['POST', '/user/campaigns', (id) => ({ name: 'x', assistant_id: id, phone_number_id: mine.callerId }), ids.assistant],
      ['POST', '/user/campaigns', (id) => ({ name: 'x', assistant_id: mine.assistant, phone_number_id: id }), ids.callerId],
      ['POST', '/user/calls', (id) => ({ assistant_id: id, phone_number_id: mine.callerId, to: '+14155550111' }), ids.assistant],
      ['POST', '/user/calls', (id) => ({ assistant_id: mine.assistant, phone_number_id: id, to: '+14155550111' }), ids.callerId],
      ['POST', '/user/whatsapp/senders', (id) => ({ name: 'x', phone: '+14155559999', account_sid: 'AC1', auth_token: 't', assistant_id: id }), ids.assistant],
      ['PUT', `/user/whatsapp/senders/${mine.sender}`, (id) => ({ assistant_id: id }), ids.assistant],
      ['POST', '/user/whatsapp/send-freeform', (id) => ({ sender_id: id, recipient_phone: '+14155550111', message: 'hi' }), ids.sender],
      ['GET', '/user/whatsapp/session-status?recipient_phone=%2B14155550111&sender_id=', () => undefined, ids.sender],
      ['POST', '/user/assistant', (id) => assistantBody({ folder_id: id }), ids.folder],
      ['POST', '/user/assistant', (id) => assistantBody({ label_ids: [id] }), ids.label],
      ['POST', '/user/assistant', (id) => assistantBody({ tool_ids: [id] }), ids.tool],
      ['POST', '/user/assistant', (id) => assistantBody({ knowledgebase_id: id }), ids.kb],
      ['POST', '/user/assistant', (id) => assistantBody({ phone_number_id: id }), ids.callerId],
      ['POST', '/user/assistant', (id) => assistantBody({ tools: [{ type: 'assistant_transfer', assistant_id: id }] }), ids.assistant],
      ['POST', '/user/assistant', (id) => assistantBody({ tools: [{ type: 'warm_call_transfer', supervisor_phone: '+14155550000', outbound_phone_id: id, description: 'x' }] }), ids.callerId],
      ['PUT', `/user/assistant/${mine.assistant}`, (id) => ({ folder_id: id }), ids.folder],
    ];
    for (const [method, url, body, foreignId] of cases) {
      const q = url.endsWith('=');
      const foreign = await h.call(b.key, method as 'POST', q ? url + foreignId : url, q ? undefined : body(foreignId));
      const missing = await h.call(b.key, method as 'POST', q ? url + NOPE : url, q ? undefined : body(NOPE));
      expect(foreign.status, `${method} ${url}: ${foreign.raw}`).toBeGreaterThanOrEqual(400);
      expect(foreign.status, `${method} ${url}`).not.toBe(500);
      // Same text apart from the numbers (the ids themselves): a leak would read differently.
      const shape = (x: unknown) => JSON.stringify(x).replace(/\d+/g, '#');
      expect(shape(foreign.body), `${method} ${url}`).toBe(shape(missing.body));
      expect(foreign.status).toBe(missing.status);
    }
    // A's assistant still has its inbound webhook: B's disable attempt changed nothing.
    expect((await h.call(a.key, 'GET', `/user/assistant/${ids.assistant}`)).body.inbound_webhook_enabled).toBe(true);
  });

  it('update-status: another user’s campaign is 403 (the spec lists access denied apart from not found) and stays draft', async () => {
    const ids = await seed(h, a.key, 92);
    const res = await h.call(b.key, 'POST', '/user/campaigns/update-status', { campaign_id: ids.campaign, action: 'start' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: expect.stringMatching(/another user/), success: false });
    expect((await h.call(a.key, 'GET', `/user/campaigns/${ids.campaign}`)).body.status).toBe('draft');
  });

  it('lists hold only the caller’s rows', async () => {
    await seed(h, a.key, 93);
    const fresh = await h.account(1);
    for (const url of ['/user/assistants', '/user/folders', '/user/labels', '/user/tools', '/user/knowledge-bases', '/user/phone-numbers', '/user/sip-trunks', '/user/campaigns', '/user/whatsapp/senders', '/user/calls']) {
      const res = await h.call(fresh.key, 'GET', url);
      expect(res.status, url).toBe(200);
      expect(url === '/user/assistants' ? res.body.assistants : res.body, url).toEqual([]);
    }
  });
});

/** What A owns, as A sees it: must not change when B pokes at it. */
async function snapshot(ids: Ids, conv: string): Promise<unknown> {
  const get = async (url: string) => {
    const r = await h.call(a.key, 'GET', url);
    return [r.status, r.body];
  };
  return Promise.all([
    get(`/user/assistant/${ids.assistant}`),
    get(`/user/folders/${ids.folder}`),
    get(`/user/labels/${ids.label}`),
    get(`/user/tools/${ids.tool}`),
    get(`/user/knowledge-bases/${ids.kb}`),
    get(`/user/phone-numbers/${ids.callerId}`),
    get(`/user/sip-trunks/${ids.trunk}`),
    get(`/user/campaigns/${ids.campaign}`),
    get(`/user/campaigns/${ids.campaign}/leads`),
    get(`/user/whatsapp/senders/${ids.sender}`),
    get(`/user/calls/${ids.call}`),
    get(`/conversations/${conv}`),
  ]);
}
