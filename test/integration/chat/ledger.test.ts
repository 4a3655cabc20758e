import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatWorld, postTwilio, balanceMicros, type ChatWorld } from './helpers.ts';
import type { Store } from '../../../src/store/db.ts';
import { AVAILABLE_BACKENDS } from '../../support/postgres.ts';

// The same money paths on both stores: on PostgreSQL the charges take the account's row lock.
describe.each(AVAILABLE_BACKENDS)('on %s', (backend) => {
  let w: ChatWorld<Store>;
  beforeEach(async () => {
    w = await chatWorld({ backend });
  });
  afterEach(() => w.close());

  async function ledgerRows(accountId: number) {
    return w.t.ctx.store.db.selectFrom('ledger').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  }

  describe('billing ledger', () => {
    it('every charge and refund is a row with reason and reference; the balance is their sum', async () => {
      const a = await w.t.account(1);
      const asst = await w.assistant(a.key);
      const sender = await w.req(a.key, 'POST', '/user/whatsapp/senders', { name: 'Shop', phone: '+14155550100', assistant_id: asst.id, account_sid: 'AC1', auth_token: 'tok' });
      const senderId = sender.body.data.id as number;

      const widget = (await w.req(a.key, 'POST', '/conversations', { assistant_id: asst.uuid })).body.conversation_id as string;
      expect((await w.req(undefined, 'POST', `/conversations/${widget}/messages`, { message: 'hi' })).status).toBe(200);
      const free = (await w.req(a.key, 'POST', '/conversations', { assistant_id: asst.uuid, type: 'test' })).body.conversation_id as string;
      expect((await w.req(undefined, 'POST', `/conversations/${free}/messages`, { message: 'hi' })).status).toBe(200);
      const gen = await w.req(a.key, 'POST', '/user/ai/generate-reply', { assistant_id: asst.id, customer_identifier: 'crm:1', message: 'hi' });
      expect(gen.status).toBe(200);
      const form = { From: 'whatsapp:+491701234567', To: 'whatsapp:+14155550100', Body: 'Hallo', MessageSid: 'SMin1' };
      expect((await postTwilio(w.t, `/webhooks/whatsapp/${senderId}`, form, 'tok')).status).toBe(200);
      await w.chat.whatsapp.idle();
      const sent = await w.req(a.key, 'POST', '/user/whatsapp/send-freeform', { sender_id: senderId, recipient_phone: '+491701234567', message: 'human' });
      expect(sent.status).toBe(200);
      w.twilio.failNext = 1;
      const failed = await w.req(a.key, 'POST', '/user/whatsapp/send-freeform', { sender_id: senderId, recipient_phone: '+491701234567', message: 'lost' });
      expect(failed.status).toBe(502);

      const rows = await ledgerRows(a.id);
      const waConv = (await w.t.ctx.repos.conversations.latestWhatsapp(senderId, '+491701234567'))!;
      const lostId = Math.max(...(await w.t.ctx.repos.messages.list(waConv.id)).map((m) => m.id));
      expect(rows.map((r) => ({ amount: r.amount_micros, reason: r.reason, reference: r.reference }))).toEqual([
        { amount: 1_000_000, reason: 'test top-up', reference: null },
        { amount: -10_000, reason: 'widget message', reference: `conversation:${widget}` },
        { amount: -10_000, reason: 'generate-reply', reference: `conversation:${gen.body.conversation_id}` },
        { amount: -5_000, reason: 'whatsapp ai reply', reference: `conversation:${waConv.uuid}` },
        { amount: -5_000, reason: 'whatsapp freeform', reference: `conversation:${waConv.uuid}` },
        { amount: -5_000, reason: 'whatsapp freeform', reference: `conversation:${waConv.uuid}` },
        { amount: 5_000, reason: 'refund: whatsapp send failed', reference: `message:${lostId}` },
      ]);
      expect(await balanceMicros(w.t, a.id)).toBe(rows.reduce((s, r) => s + r.amount_micros, 0));
      expect(await balanceMicros(w.t, a.id)).toBe(1_000_000 - 30_000);
    });

    it('concurrent widget messages and generate-replies at two cents: exactly two are served, never below zero', async () => {
      const a = await w.t.account(0.02);
      const asst = await w.assistant(a.key);
      const conv = (await w.req(a.key, 'POST', '/conversations', { assistant_id: asst.uuid })).body.conversation_id as string;
      w.llm.defaultResponse = { content: 'ok', delayMs: 20 };
      const results = await Promise.all([
        ...Array.from({ length: 4 }, (_, i) => w.t.call(undefined, 'POST', `/conversations/${conv}/messages`, { message: `w${i}` })),
        ...Array.from({ length: 4 }, (_, i) => w.t.call(a.key, 'POST', '/user/ai/generate-reply', { assistant_id: asst.id, customer_identifier: `c${i}`, message: 'hi' })),
      ]);
      expect(results.filter((r) => r.status === 200)).toHaveLength(2);
      for (const r of results.filter((x) => x.status !== 200)) {
        expect([400, 402]).toContain(r.status);
        expect(r.body.error).toMatch(/top up/i);
      }
      let running = 0;
      for (const r of await ledgerRows(a.id)) {
        running += r.amount_micros;
        expect(running).toBeGreaterThanOrEqual(0);
      }
      expect(await balanceMicros(w.t, a.id)).toBe(0);
    });
  });
});
