import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../support/app.ts';
import { OpenAiStandIn } from '../../support/openai-stand-in.ts';
import { TwilioStandIn } from '../../support/twilio-stand-in.ts';
import { ContractChecker } from '../../support/api-contract.ts';
import { chatServices } from '../../../src/chat/services.ts';
import { twilioSignature } from '../../../src/chat/twilio.ts';
import type { OutboundCallPlacer } from '../../../src/call/outbound-dialer.ts';
import type { CallSession } from '../../../src/call/call-session.ts';
import { seed, type Harness } from './harness.ts';

/**
 * The API keeps its document: this test drives every documented operation to its success answer
 * and to its common failures (no key, a missing id, malformed JSON, an invalid body), and every
 * answer must be a status the operation documents with a body its schema accepts. (The test
 * harnesses check every other test's answers the same way when they close.)
 */

const PUBLIC_URL = 'https://switchboard.example.test';
let t: TestApp;
let llm: OpenAiStandIn;
let twilio: TwilioStandIn;
let dataDir: string;
let doc: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

beforeAll(async () => {
  [llm, twilio] = await Promise.all([OpenAiStandIn.start(), TwilioStandIn.start()]);
  dataDir = fs.mkdtempSync(path.join('/tmp', 'switchboard-contract-'));
  t = await testApp({
    OPENAI_BASE_URL: llm.baseUrl,
    OPENAI_API_KEY: 'sk-stand-in',
    TWILIO_BASE_URL: twilio.baseUrl,
    SWITCHBOARD_PUBLIC_URL: PUBLIC_URL,
    SWITCHBOARD_DATA_DIR: dataDir,
  });
  doc = (await t.call(undefined, 'GET', '/api/openapi.json')).body;
});
afterAll(async () => {
  await chatServices(t.ctx).stop();
  await t.close();
  await Promise.all([llm.close(), twilio.close()]);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** t.call with the clock moved on, so hundreds of requests stay under the per-key limits. */
const req: TestApp['call'] = (key, method, url, body) => {
  t.clock.advance(600);
  return t.call(key, method, url, body);
};
const raw = (method: 'POST' | 'PUT', url: string, key: string, payload: string) => {
  t.clock.advance(600);
  return t.app.inject({ method, url: `/api${url}`, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload });
};

function operations(): Array<{ method: string; path: string; statuses: string[] }> {
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops).map(([m, op]) => ({ method: m.toUpperCase(), path: p, statuses: Object.keys(op.responses) })),
  );
}

describe('every operation answers as /api/openapi.json documents', () => {
  it('success and common failures of every route keep the contract', async () => {
    const a = await t.account(100);
    const other = await t.account(100);
    const ok = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, key = a.key) => {
      const res = await req(key, method, url, body);
      expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      return res.body;
    };
    const ids = await seed({ call: req, ctx: t.ctx } as unknown as Harness, a.key);
    const assistantUuid = (await t.ctx.repos.assistants.getById(ids.assistant))!.uuid;

    // Assistants and the catalog.
    await ok('GET', '/user/assistants');
    await ok('GET', `/user/assistant/${ids.assistant}`);
    await ok('PUT', `/user/assistant/${ids.assistant}`, { name: 'Renamed' });
    await ok('POST', '/user/assistants/disable-inbound-webhook', { assistant_id: ids.assistant });
    const voices = await ok('GET', '/user/assistants/voices');
    for (const list of ['languages', 'llm-models', 'multimodal-models', 'synthesizer-providers', 'transcriber-providers']) await ok('GET', `/user/assistants/${list}`);
    // A preview of an offline (Flite) voice: needs no provider.
    const flite = t.ctx.catalog.voices({ accountId: 0 }).find((v) => v.offline);
    expect(flite, 'an offline voice in the catalog').toBeDefined();
    const preview = await t.app.inject({ method: 'GET', url: `/api/voices/${flite!.id}/preview.wav` });
    expect(preview.statusCode).toBe(200);
    expect(voices.length).toBeGreaterThan(0);

    // Folders, labels, tools, knowledge bases, numbers, trunks, senders: lists, reads, updates.
    for (const [list, id] of [['folders', ids.folder], ['labels', ids.label], ['tools', ids.tool], ['knowledge-bases', ids.kb], ['phone-numbers', ids.callerId], ['sip-trunks', ids.trunk], ['whatsapp/senders', ids.sender]] as const) {
      await ok('GET', `/user/${list}`);
      await ok('GET', `/user/${list}/${id}`);
    }
    await ok('GET', `/user/knowledge-bases/${ids.kb}/documents/${ids.doc}`);
    await ok('PUT', `/user/tools/${ids.tool}`, { description: 'Looks up an order by number' });
    await ok('PUT', `/user/whatsapp/senders/${ids.sender}`, { name: 'Shop' });

    // Campaigns: read, start, stop.
    await ok('GET', '/user/campaigns');
    await ok('GET', `/user/campaigns/${ids.campaign}`);
    await ok('GET', `/user/campaigns/${ids.campaign}/leads`);
    await ok('POST', '/user/campaigns/update-status', { campaign_id: ids.campaign, action: 'start' });
    expect((await req(a.key, 'POST', '/user/campaigns/update-status', { campaign_id: ids.campaign, action: 'start' })).status).toBe(409);
    expect((await req(other.key, 'POST', '/user/campaigns/update-status', { campaign_id: ids.campaign, action: 'stop' })).status).toBe(403);
    await ok('POST', '/user/campaigns/update-status', { campaign_id: ids.campaign, action: 'stop' });

    // The webhook signing secret: read and rotate.
    await ok('GET', '/user/webhook-secret');
    await ok('POST', '/user/webhook-secret/rotate', { overlap_seconds: 60 });

    // Calls: a record with a recording and a tape in the data directory; placing one through a
    // dialer stand-in that records the queued call (the real dialer has its own SIP tests).
    fs.writeFileSync(path.join(dataDir, 'rec.wav'), Buffer.alloc(44));
    fs.writeFileSync(path.join(dataDir, 'call.tape.json'), JSON.stringify({ version: 1, packets: [] }));
    const recorded = await t.ctx.repos.calls.create({
      accountId: a.id,
      direction: 'inbound',
      fromNumber: '+14155550111',
      toNumber: '+14155550100',
      status: 'completed',
      recordingPath: 'rec.wav',
      details: { tape: 'call.tape.json' },
    });
    await ok('GET', '/user/calls');
    await ok('GET', `/user/calls/${recorded.id}`);
    // Hang-up: 409 while the call is not live here, 200 once this node holds it.
    expect((await req(a.key, 'POST', `/user/calls/${recorded.id}/hangup`)).status).toBe(409);
    const live = { uuid: recorded.uuid, accountId: a.id, recordId: recorded.id, state: 'active', close: async () => {} } as unknown as CallSession;
    t.ctx.liveCalls = { get: (uuid) => (uuid === live.uuid ? live : undefined), list: () => [live] };
    await ok('POST', `/user/calls/${recorded.id}/hangup`);
    await ok('GET', '/user/calls?status=completed,in-progress&direction=inbound&from=2020-01-01&to=2030-01-01T00:00:00Z');
    await t.ctx.repos.outbox.enqueue(a.id, 'call.completed', 'https://hooks.example.com/calls', JSON.stringify({ type: 'call.completed', data: { call: { uuid: recorded.uuid } } }));
    await ok('GET', `/user/calls/${recorded.id}/webhooks`);
    for (const file of ['recording', 'tape']) expect((await req(a.key, 'GET', `/user/calls/${recorded.id}/${file}`)).status).toBe(200);
    const placeCall = { assistant_id: ids.assistant, phone_number_id: ids.trunkNumber, to: '+14155550123' };
    expect((await req(a.key, 'POST', '/user/calls', placeCall)).status).toBe(503);
    const dialer: OutboundCallPlacer = {
      place: (input) =>
        t.ctx.repos.calls.create({ accountId: input.accountId, direction: 'outbound', fromNumber: '+14155550200', toNumber: input.to, status: 'queued', assistantId: input.assistant.id, phoneNumberId: input.phoneNumberId }),
    };
    (t.ctx as { dialer?: OutboundCallPlacer }).dialer = dialer;
    await ok('POST', '/user/calls', placeCall);

    // Chat: a conversation with a reply from the model stand-in, hand-over, generate-reply.
    const conv = await ok('POST', '/conversations', { assistant_id: assistantUuid, type: 'test' });
    await ok('GET', `/conversations/${conv.conversation_id}`);
    await ok('GET', '/user/conversations');
    await ok('POST', `/conversations/${conv.conversation_id}/messages`, { message: 'Hello?' });
    await ok('POST', `/automate/conversations/${conv.conversation_id}/disable-ai`);
    await ok('POST', `/automate/conversations/${conv.conversation_id}/enable-ai`);
    await ok('POST', '/user/ai/generate-reply', { assistant_id: ids.assistant, customer_identifier: 'crm-1', message: 'Hi' });
    expect((await req(a.key, 'POST', '/user/ai/generate-reply', { assistant_id: 999_999, customer_identifier: 'crm-1', message: 'Hi' })).status).toBe(404);

    // WhatsApp: a customer message (signed webhook) opens the session; status; freeform; delivery status.
    const sender = await t.ctx.repos.whatsappSenders.get(a.id, ids.sender);
    const twilioPost = async (url: string, params: Record<string, string>) => {
      t.clock.advance(600);
      const res = await t.app.inject({
        method: 'POST',
        url: `/api${url}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(sender!.authToken, `${PUBLIC_URL}/api${url}`, params) },
        payload: new URLSearchParams(params).toString(),
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    const customer = '+491701234567';
    await twilioPost(`/webhooks/whatsapp/${ids.sender}`, { From: `whatsapp:${customer}`, To: `whatsapp:${sender!.phone}`, Body: 'Hi', MessageSid: 'SMin1', ProfileName: 'Jonas' });
    await ok('GET', `/user/whatsapp/session-status?sender_id=${ids.sender}&recipient_phone=${encodeURIComponent(customer)}`);
    const sent = await ok('POST', '/user/whatsapp/send-freeform', { sender_id: ids.sender, recipient_phone: customer, message: 'Your order shipped.' });
    await twilioPost(`/webhooks/whatsapp/${ids.sender}/status`, { MessageSid: sent.message_sid, MessageStatus: 'delivered' });
    expect((await req(a.key, 'POST', '/user/whatsapp/send-freeform', { sender_id: ids.sender, recipient_phone: '+491709999999', message: 'x' })).status).toBe(403);
    expect((await req(a.key, 'POST', '/user/whatsapp/send-freeform', { sender_id: ids.sender, recipient_phone: '12', message: 'x' })).status).toBe(422);

    // The common failures, on every operation: no key, another account's id, malformed JSON,
    // an invalid body.
    const fill = (p: string, id: number) => p.replace(/\{[a-z_]+\}/g, String(id));
    for (const op of operations()) {
      const url = fill(op.path, 999_999);
      const method = op.method as 'GET' | 'POST' | 'PUT' | 'DELETE';
      if (op.statuses.includes('401')) await req(undefined, method, url, method === 'GET' || method === 'DELETE' ? undefined : {});
      if (op.statuses.includes('401')) await req('not-a-key', method, url);
      if (op.path.includes('{') && (method === 'GET' || method === 'DELETE')) await req(other.key, method, fill(op.path, ids.assistant));
      if (op.path.includes('{')) await req(a.key, method, url);
      if (method === 'POST' || method === 'PUT') {
        await raw(method, fill(op.path, 1), a.key, '{"broken": ');
        await raw(method, fill(op.path, 1), a.key, '[]');
      }
    }

    // The deletions, last.
    await ok('DELETE', `/user/knowledge-bases/${ids.kb}/documents/${ids.doc}`);
    await ok('DELETE', `/user/campaigns/${ids.campaign}`);
    for (const [list, id] of [['folders', ids.folder], ['labels', ids.label], ['tools', ids.tool], ['knowledge-bases', ids.kb], ['phone-numbers', ids.callerId], ['sip-trunks', ids.trunk], ['whatsapp/senders', ids.sender]] as const) {
      await ok('DELETE', `/user/${list}/${id}`);
    }
    await ok('DELETE', `/user/assistant/${ids.assistant}`);

    // Every answer keeps the contract, and every operation was seen succeeding and failing.
    const checker = new ContractChecker(doc as ConstructorParameters<typeof ContractChecker>[0]);
    expect(checker.checkAll(t.responses)).toEqual([]);
    const missing: string[] = [];
    for (const op of operations()) {
      // An event stream never completes, so inject cannot record it: test/integration/e2e/live-feed.test.ts reads it over a socket.
      if (op.path === '/user/calls/events') continue;
      const seen = op.statuses.filter((s) => checker.seen.has(`${op.method} ${op.path} ${s}`));
      const success = op.statuses.find((s) => s.startsWith('2'))!;
      if (!seen.includes(success)) missing.push(`${op.method} ${op.path} ${success}`);
      if (!seen.some((s) => !s.startsWith('2'))) missing.push(`${op.method} ${op.path}: no failure`);
    }
    expect(missing).toEqual([]);
  }, 180_000);

  it('finds an answer that breaks the document: undocumented status, wrong body, undocumented field', () => {
    const checker = new ContractChecker(doc as ConstructorParameters<typeof ContractChecker>[0]);
    const answer = (status: number, body: unknown, contentType = 'application/json; charset=utf-8') =>
      checker.check({ method: 'GET', route: '/api/user/folders/:id', status, contentType, body: JSON.stringify(body) });
    const folder = { id: 1, name: 'F', created_at: '2025-01-06T12:00:00.000Z' };
    expect(answer(200, folder)).toEqual([]);
    expect(answer(404, { message: 'Folder not found' })).toEqual([]);
    expect(answer(418, { message: 'teapot' })[0]).toMatch(/status not documented/);
    expect(answer(200, { ...folder, id: '1' })[0]).toMatch(/\/id must be integer/);
    expect(answer(200, { ...folder, secret: 'x' })[0]).toMatch(/must NOT have additional properties \(secret\)/);
    expect(answer(200, { ...folder, created_at: 'yesterday' })[0]).toMatch(/created_at/);
    expect(answer(404, { error: 'Folder not found' })[0]).toMatch(/does not match/);
    expect(answer(200, folder, 'text/html')[0]).toMatch(/content type text\/html not documented/);
  });
});
