/**
 * The repositories behave the same on SQLite and PostgreSQL: the same values come back (money
 * to the micro-dollar, epoch-ms timestamps, 0/1 flags), the same rows are found, charges never
 * overspend. PostgreSQL runs on the run's test server (test/support/postgres.ts), a fresh
 * database per test; without the binaries those cases skip with the reason printed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createRepos, type Repos } from '../../../src/store/index.ts';
import { SecretBox } from '../../../src/store/secrets.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { MIGRATIONS, type Store } from '../../../src/store/db.ts';
import { PG_MIGRATIONS } from '../../../src/store/migrations/pg/index.ts';
import { postgresAvailable, postgresUnavailableReason, STORE_BACKENDS, type StoreBackend } from '../../support/postgres.ts';
import { openTestStore, type TestStore } from '../../support/test-store.ts';
import { PostCallSweeper } from '../../../src/call/wiring/sweeper.ts';
import { sqliteDialerStore } from '../../../src/campaigns/dialer-store.ts';
import { jsonField } from '../../../src/store/dialect.ts';
import { createLogger } from '../../../src/util/logger.ts';

const T0 = 1_764_000_000_123; // an epoch-ms timestamp with milliseconds

let opened: TestStore[] = [];
afterEach(async () => {
  for (const s of opened.reverse()) await s.close();
  opened = [];
});

async function open(backend: StoreBackend): Promise<{ store: Store; repos: Repos; clock: ManualClock; url?: string }> {
  const s = await openTestStore(backend);
  opened.push(s);
  const clock = new ManualClock(T0);
  return { store: s.store, repos: createRepos(s.store, clock, new SecretBox(Buffer.alloc(32, 3))), clock, ...(s.url && { url: s.url }) };
}

const skip = (backend: StoreBackend) => backend === 'postgres' && !postgresAvailable;
if (!postgresAvailable) console.warn(`[store backends] postgres cases skipped: ${postgresUnavailableReason}`);

describe.each(STORE_BACKENDS)('store on %s', (backend) => {
  describe.skipIf(skip(backend))('', () => {
    it('migrates an empty database to the latest schema, with a PostgreSQL twin for every migration', async () => {
      expect(PG_MIGRATIONS).toHaveLength(MIGRATIONS.length);
      const { store } = await open(backend);
      if (store.dialect === 'postgres') {
        const rows = await sql<{ version: number }>`SELECT version FROM schema_migrations ORDER BY version`.execute(store.db);
        expect(rows.rows.map((r) => r.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
      } else {
        const v = await sql<{ user_version: number }>`PRAGMA user_version`.execute(store.db);
        expect(v.rows[0]?.user_version).toBe(MIGRATIONS.length);
      }
      // Every table the schema types name is there and readable.
      for (const table of ['accounts', 'api_keys', 'ledger', 'assistants', 'calls', 'conversations', 'messages', 'webhook_outbox', 'leads', 'kb_documents'] as const) {
        expect(await store.db.selectFrom(table).selectAll().execute()).toEqual([]);
      }
    });

    it('accounts, keys and the ledger: exact micro-dollar amounts and ms timestamps back', async () => {
      const { repos } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      expect(acc.createdAt).toBe(T0);
      expect(await repos.accounts.get(acc.id)).toMatchObject({ id: acc.id, name: 'Acme', createdAt: T0 });
      const key = await repos.accounts.createKey(acc.id);
      expect(await repos.accounts.accountForKey(key)).toBe(acc.id);
      expect(await repos.accounts.list()).toEqual([expect.objectContaining({ id: acc.id, activeKeys: 1, createdAt: T0 })]);
      expect(await repos.accounts.revokeKey(key)).toBe(true);
      expect(await repos.accounts.accountForKey(key)).toBeUndefined();
      // Past 2^31 and with every digit significant: $123,456,789.012345.
      const big = 123_456_789_012_345;
      await repos.ledger.adjust(acc.id, big, 'top-up', 'ref:1');
      await repos.ledger.adjust(acc.id, -1, 'correction');
      expect(await repos.ledger.balance(acc.id)).toBe(big - 1);
      expect(await repos.ledger.tryCharge(acc.id, big, 'too much')).toBe(false);
      expect(await repos.ledger.tryCharge(acc.id, 12_345, 'call', 'call:x')).toBe(true);
      expect(await repos.ledger.covers(acc.id, big - 1 - 12_345)).toBe(true);
      expect(await repos.ledger.covers(acc.id, big - 12_345)).toBe(false);
      await repos.ledger.setBalance(acc.id, 500_000);
      expect(await repos.ledger.balance(acc.id)).toBe(500_000);
      expect(await repos.ledger.balance(acc.id + 999)).toBe(0);
    });

    it('webhook secrets rotate and stay sealed', async () => {
      const { repos, store, clock } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const before = await repos.accounts.signingSecrets(acc.id);
      expect(before).toHaveLength(1);
      const stored = await store.db.selectFrom('accounts').select('webhook_secret').where('id', '=', acc.id).executeTakeFirstOrThrow();
      expect(stored.webhook_secret).not.toContain(before![0]!);
      clock.advance(1000);
      const state = await repos.accounts.rotateWebhookSecret(acc.id, 3_600_000);
      expect(state).toBeDefined();
      expect(await repos.accounts.signingSecrets(acc.id)).toHaveLength(2);
    });

    it('folders, labels and tools: create, list, update, delete', async () => {
      const { repos } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const f = await repos.folders.create(acc.id, 'Sales');
      await repos.labels.create(acc.id, 'VIP');
      expect(await repos.folders.list(acc.id)).toEqual([expect.objectContaining({ id: f.id, name: 'Sales' })]);
      expect((await repos.labels.list(acc.id)).map((l) => l.name)).toEqual(['VIP']);
      expect(await repos.folders.delete(acc.id, f.id)).toBe(true);
      expect(await repos.folders.get(acc.id, f.id)).toBeUndefined();
      const input = {
        name: 'lookup',
        description: 'Looks things up',
        parameters: { type: 'object', properties: {} },
        endpoint: 'https://example.com/x',
        method: 'POST',
        headers: { Authorization: 'Bearer secret-token-123' },
        timeoutMs: 5000,
      };
      const tool = await repos.tools.create(acc.id, input as never);
      expect(await repos.tools.get(acc.id, tool.id)).toMatchObject({ name: 'lookup', timeoutMs: 5000 });
      await repos.tools.update(acc.id, tool.id, { ...input, name: 'lookup2' } as never);
      expect((await repos.tools.list(acc.id)).map((x) => x.name)).toEqual(['lookup2']);
      expect(await repos.tools.getMany(acc.id, [tool.id, tool.id + 50])).toHaveLength(1);
      expect(await repos.tools.delete(acc.id, tool.id)).toBe(true);
      expect(await repos.tools.list(acc.id)).toEqual([]);
    });

    it('knowledge-base search: ranked, title matches first, any word matches, operators inert', async () => {
      const { repos } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const kb = await repos.knowledgeBases.create(acc.id, 'Help', null);
      const other = await repos.knowledgeBases.create(acc.id, 'Other', 'desc');
      const hours = await repos.knowledgeBases.addDocument(acc.id, kb.id, 'Opening hours', 'We are open from nine to five on weekdays.');
      const refunds = await repos.knowledgeBases.addDocument(acc.id, kb.id, 'Refunds', 'Refunds are paid within 14 days. Our opening offer ends soon.');
      await repos.knowledgeBases.addDocument(acc.id, kb.id, 'Parking', 'There is free parking behind the building.');
      await repos.knowledgeBases.addDocument(acc.id, other.id, 'Opening hours elsewhere', 'Other base: opening hours never leak.');
      const hits = await repos.knowledgeBases.search(acc.id, kb.id, 'What are your opening hours?');
      expect(hits.map((h) => h.document_id)).toEqual([hours.id, refunds.id]);
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
      expect(hits[0]!.snippet).toContain('open');
      expect(await repos.knowledgeBases.search(acc.id, kb.id, 'title:secret AND "x NOT (y* OR ^z) NEAR(a b)')).toEqual([]);
      expect(await repos.knowledgeBases.search(acc.id, kb.id, "?!* ''")).toEqual([]);
      expect((await repos.knowledgeBases.search(acc.id, kb.id, 'parking refunds', 1)).length).toBe(1);
      expect(await repos.knowledgeBases.search(acc.id + 1, kb.id, 'opening')).toEqual([]);
      expect((await repos.knowledgeBases.get(acc.id, kb.id))?.documentCount).toBe(3);
      expect(await repos.knowledgeBases.deleteDocument(acc.id, kb.id, hours.id)).toBe(true);
      expect((await repos.knowledgeBases.search(acc.id, kb.id, 'hours')).map((h) => h.document_id)).toEqual([]);
      expect(await repos.knowledgeBases.delete(acc.id, kb.id)).toBe(true);
      expect(await repos.knowledgeBases.list(acc.id)).toEqual([expect.objectContaining({ id: other.id, documentCount: 1 })]);
    });

    it('campaigns and leads: batched add skips duplicates, counts by status', async () => {
      const { repos } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const c = await repos.campaigns.create(acc.id, { name: 'C', assistantId: 1, phoneNumberId: 1, maxConcurrentCalls: 2, callingHours: null });
      const leads = Array.from({ length: 1200 }, (_, i) => ({ phoneNumber: `+1555${String(i % 1100).padStart(7, '0')}`, variables: { n: i, ok: true } }));
      expect(await repos.leads.add(acc.id, c.id, leads)).toEqual({ added: 1100, duplicates: 100 });
      expect(await repos.leads.add(acc.id, c.id, [{ phoneNumber: '+15550000001' }, { phoneNumber: '+15559999999' }])).toEqual({ added: 1, duplicates: 1 });
      expect(await repos.leads.pendingCount(c.id)).toBe(1101);
      const [first] = await repos.leads.list(acc.id, c.id, { limit: 1, offset: 0 });
      expect(first).toMatchObject({ phoneNumber: '+15550000000', variables: { n: 0, ok: true }, status: 'pending', attempts: 0, createdAt: T0 });
      await repos.leads.update(first!.id, { status: 'done', attempts: 1, lastOutcome: 'completed', nextAttemptAt: T0 + 5 });
      expect((await repos.leads.list(acc.id, c.id, { status: 'done', limit: 5, offset: 0 }))[0]).toMatchObject({ nextAttemptAt: T0 + 5 });
      const counts = await repos.campaigns.leadCounts(acc.id, [c.id]);
      expect(counts.get(c.id)).toBeDefined();
      expect(await repos.campaigns.setStatus(c.id, 'draft', 'in-progress')).toBe(true);
      expect(await repos.campaigns.delete(acc.id, c.id)).toBe('running');
    });

    it('calls: create, update, list newest first, heartbeat', async () => {
      const { repos, store } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const a = await repos.calls.create({ accountId: acc.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', status: 'in-progress', inviteAt: T0, answerAt: T0 + 10 } as never);
      const b = await repos.calls.create({ accountId: acc.id, direction: 'outbound', fromNumber: '+3', toNumber: '+4', status: 'ringing', inviteAt: T0 + 1 } as never);
      await repos.calls.update(a.id, { costMicros: 9_007_199_254_740, details: { post_call: { finished_at: 1 } }, transcript: [{ role: 'user', text: 'hi' }] } as never);
      expect(await repos.calls.getById(a.id)).toMatchObject({ costMicros: 9_007_199_254_740, answerAt: T0 + 10, details: { post_call: { finished_at: 1 } } });
      expect((await repos.calls.list(acc.id, { limit: 10 })).map((c) => c.id)).toEqual([b.id, a.id]);
      expect(await repos.calls.markAlive([a.id], T0 + 20)).toBe(1);
      const alive = await store.db.selectFrom('calls').select('last_alive_at').where('uuid', '=', a.uuid).executeTakeFirstOrThrow();
      expect(alive.last_alive_at).toBe(T0 + 20);
    });

    it('conversations and messages: one transaction with the charge; flags and deadlines round-trip', async () => {
      const { repos, clock } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      await repos.ledger.adjust(acc.id, 25_000, 'top-up');
      const conv = await repos.conversations.create({ accountId: acc.id, assistantId: 7, type: 'widget', inactivityMs: 60_000, variables: { a: 1 } }, 'Hello!');
      expect(conv).toMatchObject({ aiEnabled: true, status: 'active', inactivityDeadline: T0 + 60_000, variables: { a: 1 }, lastMessageAt: T0 });
      clock.advance(5);
      const charge = { accountId: acc.id, micros: 10_000, reason: 'widget message', reference: `conversation:${conv.uuid}` };
      const r1 = await repos.messages.append({ conversationId: conv.id, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo', functionCalls: [{ name: 'f', arguments: {}, result: { ok: 1 } }] }], charge, inactivityMs: 60_000 });
      expect(r1).toEqual({ charged: true, ids: [expect.any(Number), expect.any(Number)] });
      await repos.messages.append({ conversationId: conv.id, messages: [{ role: 'user', content: 'again' }], charge, inactivityMs: 60_000 });
      const refused = await repos.messages.append({ conversationId: conv.id, messages: [{ role: 'user', content: 'broke' }], charge, inactivityMs: 60_000 });
      expect(refused).toEqual({ charged: false, ids: [] });
      expect(await repos.ledger.balance(acc.id)).toBe(5_000);
      const msgs = await repos.messages.list(conv.id);
      expect(msgs.map((m) => m.content)).toEqual(['Hello!', 'hi', 'yo', 'again']);
      expect(msgs[2]!.functionCalls).toEqual([{ name: 'f', arguments: {}, result: { ok: 1 } }]);
      const after = (await repos.conversations.getById(conv.id))!;
      expect(after).toMatchObject({ lastMessageAt: T0 + 5, lastCustomerMessageAt: T0 + 5, inactivityDeadline: T0 + 60_005 });
      expect(await repos.conversations.setAiEnabled(acc.id, conv.uuid, false)).toBe(true);
      expect((await repos.conversations.getByUuid(conv.uuid))?.aiEnabled).toBe(false);
      await repos.messages.setProviderSid(r1.ids[1]!, 'SM1', 'queued');
      expect((await repos.messages.findBySid('SM1'))?.deliveryStatus).toBe('queued');
      await repos.messages.setDeliveryStatus(r1.ids[1]!, 'read');
      expect((await repos.messages.get(r1.ids[1]!))?.deliveryStatus).toBe('read');
      expect(await repos.conversations.end(conv.id, 'inactivity')).toBe(false); // deadline not yet passed
      clock.advance(60_000);
      expect((await repos.conversations.dueForEnd(clock.now())).map((c) => c.id)).toEqual([conv.id]);
      expect(await repos.conversations.end(conv.id, 'inactivity')).toBe(true);
      expect(await repos.conversations.end(conv.id, 'assistant')).toBe(false);
      await repos.conversations.reopen(conv.id, 1000);
      expect((await repos.conversations.getById(conv.id))?.status).toBe('active');
    });

    it('find-or-create of a customer conversation: racing first requests share one row', async () => {
      const { repos } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const input = { accountId: acc.id, assistantId: 3, type: 'api' as const, customerIdentifier: 'cust-1', inactivityMs: 1000 };
      const results = await Promise.all(Array.from({ length: 6 }, () => repos.conversations.findOrCreateForCustomer(input)));
      expect(new Set(results.map((r) => r.conversation.id)).size).toBe(1);
      expect(results.filter((r) => r.created)).toHaveLength(1);
    });

    it('outbox: enqueue, due in order, delivered, pending count', async () => {
      const { repos, clock } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const id1 = await repos.outbox.enqueue(acc.id, 'call.completed', 'https://example.com/h', '{"a":1}');
      const id2 = await repos.outbox.enqueue(acc.id, 'conversation.ended', 'https://example.com/h', '{"b":2}');
      expect(await repos.outbox.pendingCount()).toBe(2);
      expect((await repos.outbox.due(clock.now())).map((r) => r.id)).toEqual([id1, id2]);
      await repos.outbox.markRetry(id1, 1, T0 + 1000, 'HTTP 500');
      expect(await repos.outbox.nextDueAt()).toBe(T0);
      await repos.outbox.markDelivered(id2, 1);
      await repos.outbox.markFailed(id1, 8, 'x'.repeat(600));
      expect(await repos.outbox.pendingCount()).toBe(0);
      expect(await repos.outbox.get(id2)).toMatchObject({ status: 'delivered', deliveredAt: T0, payload: '{"b":2}' });
      expect((await repos.outbox.get(id1))?.lastError).toHaveLength(500);
      expect(await repos.outbox.nextDueAt()).toBeUndefined();
    });

    it('whatsapp senders: the token is sealed, read back, updated, deleted', async () => {
      const { repos, store } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const s = await repos.whatsappSenders.create(acc.id, { name: 'WA', phone: '+4915112345678', assistantId: null, accountSid: 'AC1', authToken: 'tok-secret-123456', status: 'online' });
      const raw = await store.db.selectFrom('whatsapp_senders').select('auth_token_enc').executeTakeFirstOrThrow();
      expect(raw.auth_token_enc).not.toContain('tok-secret');
      expect(await repos.whatsappSenders.findByPhone(acc.id, '+4915112345678')).toMatchObject({ id: s.id });
      await repos.whatsappSenders.update(acc.id, s.id, { status: 'offline' });
      expect((await repos.whatsappSenders.getById(s.id))?.status).toBe('offline');
      expect(await repos.whatsappSenders.delete(acc.id, s.id)).toBe(true);
      expect(await repos.whatsappSenders.list(acc.id)).toEqual([]);
    });

    it('the dialect helpers agree: orphan calls close at max(answer, heartbeat), JSON fields, attempts floor at 0', async () => {
      const { repos, store, clock } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      const answered = await repos.calls.create({ accountId: acc.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', status: 'in-progress', inviteAt: T0, answerAt: T0 + 10 } as never);
      await repos.calls.markAlive([answered.id], T0 + 500);
      const noBeat = await repos.calls.create({ accountId: acc.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', status: 'in-progress', inviteAt: T0, answerAt: T0 + 20 } as never);
      const unanswered = await repos.calls.create({ accountId: acc.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', status: 'ringing', inviteAt: T0 + 1 } as never);
      // A heartbeat without an answer (SQLite's max(a, NULL) is NULL: the INVITE time wins).
      await repos.calls.markAlive([unanswered.id], T0 + 900);
      const sweeper = new PostCallSweeper({ store, assistants: repos.assistants, postCall: {} as never, logger: createLogger('silent'), busy: () => false });
      expect(await sweeper.closeOrphans(T0 + 1000)).toBe(3);
      const ends = await Promise.all([answered, noBeat, unanswered].map(async (c) => (await repos.calls.getById(c.id))!));
      expect(ends.map((c) => [c.status, c.endAt])).toEqual([['completed', T0 + 500], ['completed', T0 + 20], ['failed', T0 + 1]]);

      await repos.calls.update(answered.id, { details: { post_call: { finished_at: 42 } } } as never);
      // A NUL character in some text of a document (stored as the JSON escape \u0000, which
      // PostgreSQL's JSON parser refuses) fails neither that row nor the query over the others.
      await repos.calls.update(noBeat.id, { details: { note: 'caller said \u0000 here' } } as never);
      await repos.calls.update(unanswered.id, { details: { post_call: { finished_at: 7, summary: 'x\u0000y', raw: 'a\\u0000b' } } } as never);
      const rows = await store.db
        .selectFrom('calls')
        .select(['id', jsonField(store.dialect, 'details', ['post_call', 'finished_at']).as('finished')])
        .orderBy('id')
        .execute();
      expect(rows.map((r) => (r.finished === null ? null : Number(r.finished)))).toEqual([42, null, 7]);

      const c = await repos.campaigns.create(acc.id, { name: 'C', assistantId: 1, phoneNumberId: 1, maxConcurrentCalls: 1, callingHours: null });
      await repos.leads.add(acc.id, c.id, [{ phoneNumber: '+15550000001' }]);
      const dialer = sqliteDialerStore(store, repos, clock);
      const [lead] = await dialer.dueLeads(c.id, clock.now(), 1);
      expect(await dialer.claim(lead!.id, 'a1')).toBe(true);
      expect(await dialer.finish(lead!.id, 'a1', { status: 'pending', lastOutcome: 'busy', nextAttemptAt: T0 + 60_000, attemptsDelta: -5 })).toBe(true);
      expect((await repos.leads.list(acc.id, c.id, { limit: 1, offset: 0 }))[0]).toMatchObject({ attempts: 0, nextAttemptAt: T0 + 60_000 });
      expect(await dialer.covers(acc.id, 1)).toBe(false);
    });

    it('concurrent charges on one account never overspend (several connections at once)', async () => {
      const { repos, store, url } = await open(backend);
      const acc = await repos.accounts.create('Acme');
      await repos.ledger.adjust(acc.id, 100_000, 'top-up'); // ten charges of 10 000
      // On PostgreSQL: four more "nodes", each its own pool, all charging at once.
      const nodes: Repos[] = [repos];
      if (store.dialect === 'postgres' && url) {
        for (let i = 0; i < 4; i++) {
          const { openPostgresStore } = await import('../../../src/store/postgres.ts');
          const other = await openPostgresStore(url, ':memory:', { maxConnections: 5 });
          opened.push({ store: other, close: () => other.close() });
          nodes.push(createRepos(other, new ManualClock(T0), new SecretBox(Buffer.alloc(32, 3))));
        }
      }
      const attempts = 40;
      const results = await Promise.all(Array.from({ length: attempts }, (_, i) => nodes[i % nodes.length]!.ledger.tryCharge(acc.id, 10_000, 'charge', `c${i}`)));
      expect(results.filter(Boolean)).toHaveLength(10);
      expect(await repos.ledger.balance(acc.id)).toBe(0);
      const rows = await store.db.selectFrom('ledger').select('amount_micros').where('account_id', '=', acc.id).execute();
      expect(rows.reduce((s, r) => s + r.amount_micros, 0)).toBe(0);
      expect(rows).toHaveLength(11);
    });
  });
});

describe.skipIf(!postgresAvailable)('PostgreSQL migrations', () => {
  it('two nodes starting at once migrate once', async () => {
    const first = await openTestStore('postgres');
    opened.push(first);
    const { openPostgresStore } = await import('../../../src/store/postgres.ts');
    // A fresh database, opened by three nodes together: the advisory lock lets one migrate.
    const { createTestDatabase, dropTestDatabase } = await import('../../support/postgres.ts');
    const url = await createTestDatabase();
    const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(url, ':memory:')));
    try {
      const rows = await sql<{ version: number }>`SELECT version FROM schema_migrations ORDER BY version`.execute(stores[0]!.db);
      expect(rows.rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1));
    } finally {
      for (const s of stores) await s.close();
      await dropTestDatabase(url);
    }
  });
});
