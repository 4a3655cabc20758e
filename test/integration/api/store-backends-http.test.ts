/**
 * The REST app on either store, over a real socket on loopback: assistants, knowledge bases, a
 * call's webhook deliveries (found by a field inside the JSON payload) and the conversations list
 * (with its message counts) go through HTTP the same way on SQLite and on PostgreSQL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testAppOn, type TestApp } from '../../support/app.ts';
import type { Store } from '../../../src/store/db.ts';
import { postgresAvailable, STORE_BACKENDS } from '../../support/postgres.ts';
import { eventBody } from '../../../src/webhooks/events.ts';

let t: TestApp<Store> | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const assistant = (over: Record<string, unknown> = {}) => ({
  name: 'Support line',
  voice_id: 121,
  language_id: 1,
  type: 'outbound',
  mode: 'pipeline',
  timezone: 'Europe/Paris',
  initial_message: 'Hello, how can I help?',
  system_prompt: 'You are a helpful agent.',
  llm_model_id: 1,
  ...over,
});

async function listen(app: TestApp<Store>): Promise<(key: string, method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>> {
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  return async (key, method, path, body) => {
    const res = await fetch(`${address}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

describe.each(STORE_BACKENDS)('REST over HTTP on %s', (backend) => {
  describe.skipIf(backend === 'postgres' && !postgresAvailable)('', () => {
    it('assistants: create, list, read, update, delete', async () => {
      t = await testAppOn(backend);
      const a = await t.account(10);
      const other = await t.account(10);
      const http = await listen(t);
      const created = await http(a.key, 'POST', '/user/assistant', assistant());
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.data.id as number;
      await http(other.key, 'POST', '/user/assistant', assistant({ name: 'Not yours' }));
      const list = await http(a.key, 'GET', '/user/assistants');
      expect(list.status).toBe(200);
      expect(list.body.assistants).toEqual([expect.objectContaining({ id, name: 'Support line', status: 'inactive' })]);
      const updated = await http(a.key, 'PUT', `/user/assistant/${id}`, { name: 'Renamed', max_duration: 1200 });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      const read = await http(a.key, 'GET', `/user/assistant/${id}`);
      expect(read.body.data ?? read.body).toMatchObject({ id, name: 'Renamed', max_duration: 1200, record: false });
      expect((await http(other.key, 'GET', `/user/assistant/${id}`)).status).toBe(404);
      expect((await http(a.key, 'DELETE', `/user/assistant/${id}`)).status).toBe(200);
      expect((await http(a.key, 'DELETE', `/user/assistant/${id}`)).status).toBe(404);
      expect((await http(a.key, 'GET', '/user/assistants')).body.assistants).toEqual([]);
    });

    it('knowledge bases: listed over HTTP; the search ranks the title match first', async () => {
      t = await testAppOn(backend);
      const a = await t.account(10);
      const kb = await t.ctx.repos.knowledgeBases.create(a.id, 'Help', null);
      await t.ctx.repos.knowledgeBases.addDocument(a.id, kb.id, 'Opening hours', 'Open nine to five.');
      await t.ctx.repos.knowledgeBases.addDocument(a.id, kb.id, 'Parking', 'Parking is free; opening of the garage at eight.');
      const http = await listen(t);
      const list = await http(a.key, 'GET', '/user/knowledge-bases');
      expect(list.status).toBe(200);
      const hits = await t.ctx.repos.knowledgeBases.search(a.id, kb.id, 'opening hours');
      expect(hits.map((h) => h.title)).toEqual(['Opening hours', 'Parking']);
    });

    it('SIP trunks: password never shown, lists and flags back; a duplicate is 409, also when racing', async () => {
      t = await testAppOn(backend);
      const a = await t.account(10);
      const other = await t.account(10);
      const http = await listen(t);
      const body = {
        sip_trunk_type: 'number',
        phone_number: '+14155550100',
        nickname: 'Main line',
        sip_username: 'alice',
        sip_password: 's3cret-pass-77',
        sip_address: 'sip.example.com',
        sip_calling_format: '+e164',
        inbound_authorization_type: 'ip',
        allowed_inbound_ips: ['192.0.2.10'],
        outbound_proxy: true,
        media_nat: true,
      };
      const created = await http(a.key, 'POST', '/user/sip-trunks', body);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(JSON.stringify(created.body)).not.toContain('s3cret-pass-77');
      expect(created.body.data).toMatchObject({ allowed_inbound_ips: ['192.0.2.10'], outbound_proxy: true, media_nat: true, phone_number_id: expect.any(Number) });
      const read = await http(a.key, 'GET', `/user/sip-trunks/${created.body.data.id}`);
      expect(read.status).toBe(200);
      expect(read.body.data ?? read.body).toMatchObject({ id: created.body.data.id, allowed_inbound_ips: ['192.0.2.10'], outbound_proxy: true, media_nat: true });
      const dup = await http(other.key, 'POST', '/user/sip-trunks', { ...body, sip_password: 'another' });
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({ error: expect.stringMatching(/already exists/) });
      // Five identical creates at once, all past the pre-check (as when they race between check
      // and insert): the unique index lets one in, the others are 409 (PostgreSQL's 23505 like
      // SQLite's constraint error), and no provisioned trunk is left behind by the losers.
      const repo = t.ctx.repos.sipTrunks;
      const save = repo.create.bind(repo);
      let refusedAtIndex = 0;
      repo.exists = async () => false;
      repo.create = async (...args) => save(...args).catch((err: unknown) => { refusedAtIndex++; throw err; });
      const racing = await Promise.all(Array.from({ length: 5 }, () => http(a.key, 'POST', '/user/sip-trunks', { ...body, sip_username: 'bob' })));
      expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      expect(refusedAtIndex).toBe(4);
      expect(t.ctx.trunks.list()).toHaveLength(2);
      expect((await t.ctx.repos.phoneNumbers.list(a.id)).map((p) => p.type)).toEqual(['sip_trunk', 'sip_trunk']);
    });

    it("a call's webhook deliveries: matched by the payload's call uuid, oldest first, only the account's own", async () => {
      t = await testAppOn(backend);
      const a = await t.account(10);
      const other = await t.account(10);
      const { calls, outbox } = t.ctx.repos;
      const newCall = (accountId: number) =>
        calls.create({ accountId, direction: 'inbound', fromNumber: '+15550001', toNumber: '+15550002', status: 'completed', inviteAt: t!.clock.now() } as never);
      const c1 = await newCall(a.id);
      const c2 = await newCall(a.id);
      const theirs = await newCall(other.id);
      const callEvent = (uuid: string) => eventBody('call.completed', t!.clock.now(), { call: { uuid, status: 'completed' } });
      const first = await outbox.enqueue(a.id, 'call.completed', 'https://user:pw@hooks.example.com/in?token=abc', callEvent(c1.uuid));
      await outbox.enqueue(a.id, 'call.completed', 'https://hooks.example.com/in', callEvent(c2.uuid));
      // A NUL character inside some text of another event (JSON escapes it as \u0000, which
      // PostgreSQL's jsonb refuses): that row must not break the lookup of the others.
      await outbox.enqueue(a.id, 'call.completed', 'https://hooks.example.com/in', eventBody('call.completed', t.clock.now(), { call: { uuid: c2.uuid, transcript: 'caller said \u0000 here' } }));
      await outbox.enqueue(a.id, 'conversation.ended', 'https://hooks.example.com/in', eventBody('conversation.ended', t.clock.now(), { conversation: { uuid: c1.uuid } }));
      await outbox.enqueue(a.id, 'call.completed', 'https://hooks.example.com/in', eventBody('call.completed', t.clock.now(), { call: 'not an object' }));
      await outbox.enqueue(other.id, 'call.completed', 'https://hooks.example.com/theirs', callEvent(c1.uuid)); // another account's row naming c1
      t.clock.advance(1000);
      const second = await outbox.enqueue(a.id, 'call.completed', 'https://hooks.example.com/second', callEvent(c1.uuid));
      await outbox.markDelivered(first, 2);
      await outbox.markRetry(second, 1, t.clock.now() + 30_000, 'HTTP 503 from https://hooks.example.com/second?sig=xyz');
      const http = await listen(t);

      const res = await http(a.key, 'GET', `/user/calls/${c1.id}/webhooks`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual([
        expect.objectContaining({ id: first, event: 'call.completed', status: 'delivered', attempts: 2, destination: 'https://hooks.example.com/in', last_response_code: null, next_attempt_at: null }),
        expect.objectContaining({ id: second, status: 'pending', attempts: 1, destination: 'https://hooks.example.com/second', last_response_code: 503, last_error: 'HTTP 503 from https://hooks.example.com/second?…' }),
      ]);
      expect(res.body[0].delivered_at).toEqual(expect.any(String));
      expect(res.body[1].next_attempt_at).toBe(new Date(t.clock.now() + 30_000).toISOString());
      expect((await http(a.key, 'GET', `/user/calls/${c2.id}/webhooks`)).body).toHaveLength(2);
      expect((await http(other.key, 'GET', `/user/calls/${theirs.id}/webhooks`)).body).toEqual([]);
      expect((await http(other.key, 'GET', `/user/calls/${c1.id}/webhooks`)).status).toBe(404);
      expect((await http(a.key, 'GET', `/user/calls/${theirs.id + 100}/webhooks`)).status).toBe(404);
    });

    it('conversations list: most recently active first, message counts, flags, the assistant filter and paging', async () => {
      t = await testAppOn(backend);
      const a = await t.account(10);
      const other = await t.account(10);
      const { conversations, messages } = t.ctx.repos;
      const created = t.clock.now();
      const oldest = await conversations.create({ accountId: a.id, assistantId: 11, type: 'widget', inactivityMs: 60_000 }, 'Hello!');
      t.clock.advance(1000);
      const api = await conversations.create({ accountId: a.id, assistantId: 12, type: 'api', customerIdentifier: 'cust-7', externalIdentifier: 'ext-7', inactivityMs: 60_000 });
      t.clock.advance(1000);
      const busy = await conversations.create({ accountId: a.id, assistantId: 11, type: 'widget', inactivityMs: 60_000 });
      await conversations.create({ accountId: other.id, assistantId: 11, type: 'widget', inactivityMs: 60_000 }, 'Not yours');
      t.clock.advance(1000);
      await messages.append({ conversationId: busy.id, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }, { role: 'user', content: 'bye' }], inactivityMs: 60_000 });
      t.clock.advance(1000);
      await messages.append({ conversationId: oldest.id, messages: [{ role: 'user', content: 'back again' }], inactivityMs: 60_000 }); // now the most recent
      await conversations.setAiEnabled(a.id, api.uuid, false);
      expect(await conversations.end(api.id, 'assistant')).toBe(true);
      const http = await listen(t);

      const res = await http(a.key, 'GET', '/user/conversations');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.map((c: { conversation_id: string }) => c.conversation_id)).toEqual([oldest.uuid, busy.uuid, api.uuid]);
      expect(res.body.map((c: { message_count: number }) => c.message_count)).toEqual([2, 3, 0]);
      expect(res.body[0]).toMatchObject({ assistant_id: 11, type: 'widget', status: 'active', ai_enabled: true, customer: null, ended_at: null, created_at: new Date(created).toISOString(), last_message_at: new Date(created + 4000).toISOString() });
      expect(res.body[2]).toMatchObject({ assistant_id: 12, type: 'api', status: 'ended', ai_enabled: false, customer_identifier: 'cust-7', external_identifier: 'ext-7', ended_at: expect.any(String) });
      const filtered = await http(a.key, 'GET', '/user/conversations?assistant_id=11');
      expect(filtered.body.map((c: { conversation_id: string }) => c.conversation_id)).toEqual([oldest.uuid, busy.uuid]);
      const page = await http(a.key, 'GET', '/user/conversations?limit=1&offset=1');
      expect(page.body.map((c: { conversation_id: string }) => c.conversation_id)).toEqual([busy.uuid]);
      expect((await http(other.key, 'GET', '/user/conversations')).body).toHaveLength(1);
      expect((await http(a.key, 'GET', '/user/conversations?limit=0')).status).toBe(422);
    });
  });
});
