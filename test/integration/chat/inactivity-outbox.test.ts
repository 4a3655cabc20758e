import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OutboxRepo } from '../../../src/store/repos/outbox.ts';
import { chatWorld, type ChatWorld } from './helpers.ts';
import type { Store } from '../../../src/store/db.ts';
import { AVAILABLE_BACKENDS } from '../../support/postgres.ts';
import { verify } from '../../../src/webhooks/signing.ts';
import { DeliveryWorker } from '../../../src/webhooks/delivery.ts';
import { outboundOf } from '../../../src/net/outbound/index.ts';
import { InactivitySweeper } from '../../../src/chat/inactivity.ts';

const MIN = 60_000;

// On both stores: a conversation's end and its event are one transaction.
describe.each(AVAILABLE_BACKENDS)('on %s', (backend) => {
  let w: ChatWorld<Store>;
  let a: { id: number; key: string };
  beforeEach(async () => {
    w = await chatWorld({ backend });
    a = await w.t.account(1);
  });
  afterEach(() => w.close());

  async function conversation(over: Record<string, unknown> = {}) {
    const asst = await w.assistant(a.key, { conversation_inactivity_timeout: 5, conversation_ended_webhook_url: `${w.sink.url}/ended`, ...over });
    const conv = (await w.t.call(a.key, 'POST', '/conversations', { assistant_id: asst.uuid, type: 'test' })).body.conversation_id as string;
    return { asst, conv };
  }
  const say = (conv: string, message: string) => w.t.call(undefined, 'POST', `/conversations/${conv}/messages`, { message });
  const stateOf = async (uuid: string) => (await w.t.ctx.repos.conversations.getByUuid(uuid))!.status;

  describe('conversation ended by inactivity', () => {
    it('open → reset by a message → ends after the timeout → signed event delivered with retries', async () => {
      const { conv } = await conversation();
      await say(conv, 'hello');
      w.t.clock.advance(4 * MIN);
      expect(await w.chat.sweeper.sweep()).toBe(0);
      await say(conv, 'still here'); // restarts the 5 minutes
      w.t.clock.advance(4 * MIN);
      expect(await w.chat.sweeper.sweep()).toBe(0);
      expect(await stateOf(conv)).toBe('active');
      w.t.clock.advance(1 * MIN);
      expect(await w.chat.sweeper.sweep()).toBe(1);
      expect(await stateOf(conv)).toBe('ended');
      expect(await w.chat.sweeper.sweep()).toBe(0);

      w.sink.failFirst = 2;
      await w.chat.delivery.runDue();
      const [row] = await w.t.ctx.repos.outbox.list(a.id);
      expect(row).toMatchObject({ status: 'pending', attempts: 1, eventType: 'conversation.ended', nextAttemptAt: w.t.clock.now() + 5_000 });
      await w.chat.delivery.runDue(); // not due yet
      expect(w.sink.received).toHaveLength(1);
      w.t.clock.advance(5_000);
      await w.chat.delivery.runDue();
      expect((await w.t.ctx.repos.outbox.get(row!.id))).toMatchObject({ attempts: 2, nextAttemptAt: w.t.clock.now() + 10_000 });
      w.t.clock.advance(10_000);
      await w.chat.delivery.runDue();
      expect(await w.t.ctx.repos.outbox.get(row!.id)).toMatchObject({ status: 'delivered', attempts: 3 });

      expect(w.sink.received.map((d) => d.status)).toEqual([500, 500, 200]);
      const ids = new Set(w.sink.received.map((d) => d.headers['webhook-id']));
      expect(ids.size).toBe(1);
      const last = w.sink.received.at(-1)!;
      const body = JSON.parse(last.body);
      expect(body).toMatchObject({
        type: 'conversation.ended',
        data: { conversation_id: conv, reason: 'inactivity', type: 'test', history: expect.arrayContaining([{ role: 'user', content: 'still here' }]) },
      });
      const secret = (await w.t.ctx.repos.accounts.get(a.id))!.webhookSecret;
      const headers = Object.fromEntries(Object.entries(last.headers).map(([k, v]) => [k, String(v)]));
      const now = Math.floor(w.t.clock.now() / 1000);
      expect(verify(secret, headers, last.body, now)).toBe(true);
      expect(verify(secret, { ...headers, 'webhook-signature': 'v1,AAAA' }, last.body, now)).toBe(false);
      expect(verify(secret, headers, last.body.replace('inactivity', 'tampered!!'), now)).toBe(false);
      expect(verify('whsec_b3RoZXI=', headers, last.body, now)).toBe(false);
    });

    it('without retrigger an ended conversation refuses messages; with retrigger it reopens', async () => {
      const plain = await conversation();
      const again = await conversation({ conversation_ended_retrigger: true });
      w.t.clock.advance(6 * MIN);
      expect(await w.chat.sweeper.sweep()).toBe(2);
      const refused = await say(plain.conv, 'hello?');
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ status: false, error: expect.stringMatching(/has ended/) });
      const reopened = await say(again.conv, 'hello?');
      expect(reopened.status).toBe(200);
      expect(await stateOf(again.conv)).toBe('active');
      w.t.clock.advance(6 * MIN);
      expect(await w.chat.sweeper.sweep()).toBe(1);
    });

    it('generate-reply on an ended conversation without retrigger: 409 CONVERSATION_ENDED', async () => {
      const asst = await w.assistant(a.key, { conversation_inactivity_timeout: 1 });
      expect((await w.t.call(a.key, 'POST', '/user/ai/generate-reply', { assistant_id: asst.id, customer_identifier: 'c', message: 'hi' })).status).toBe(200);
      w.t.clock.advance(2 * MIN);
      await w.chat.sweeper.sweep();
      const res = await w.t.call(a.key, 'POST', '/user/ai/generate-reply', { assistant_id: asst.id, customer_identifier: 'c', message: 'hi' });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ success: false, error_code: 'CONVERSATION_ENDED' });
    });

    it('survives a restart: fresh sweeper and worker instances find the work in the store', async () => {
      const { conv } = await conversation();
      w.t.clock.advance(10 * MIN);
      const sweeper = new InactivitySweeper({
        conversations: w.t.ctx.repos.conversations,
        service: w.chat.conversations,
        assistant: (id) => w.t.ctx.repos.assistants.getById(id),
        clock: w.t.clock,
        logger: w.t.ctx.logger,
      });
      expect(await sweeper.sweep()).toBe(1);
      expect(await stateOf(conv)).toBe('ended');
      const worker = new DeliveryWorker({
        outbox: w.t.ctx.repos.outbox,
        secretFor: async (id) => (await w.t.ctx.repos.accounts.get(id))?.webhookSecret,
        clock: w.t.clock,
        logger: w.t.ctx.logger,
        fetch: outboundOf(w.t.ctx).fetch,
      });
      worker.start(); // picks up pending rows on its first tick
      w.t.clock.advance(0);
      await vi.waitFor(() => expect(w.sink.received).toHaveLength(1));
      await worker.stop();
      expect((await w.t.ctx.repos.outbox.list(a.id))[0]!.status).toBe('delivered');
    });

    it('gives up after the maximum attempts and marks the row failed', async () => {
      await conversation();
      w.t.clock.advance(6 * MIN);
      await w.chat.sweeper.sweep();
      w.sink.failFirst = 100;
      for (let i = 0; i < 8; i++) {
        await w.chat.delivery.runDue();
        w.t.clock.advance(3_600_000);
      }
      expect((await w.t.ctx.repos.outbox.list(a.id))[0]).toMatchObject({ status: 'failed', attempts: 8, lastError: 'HTTP 500' });
    });

    it('the end and its event are stored together: if the event cannot be written the conversation stays active', async () => {
      const first = await conversation();
      const second = await conversation();
      w.t.clock.advance(6 * MIN);
      // The service writes the event through an outbox bound to its transaction: fail the next write.
      const spy = vi.spyOn(OutboxRepo.prototype, 'enqueue').mockImplementationOnce(async () => {
        throw new Error('disk full');
      });
      // The failing one is left for the next sweep; it does not hold up the other.
      expect(await w.chat.sweeper.sweep()).toBe(1);
      expect([await stateOf(first.conv), await stateOf(second.conv)]).toEqual(['active', 'ended']);
      expect(await w.t.ctx.repos.outbox.list(a.id)).toHaveLength(1);
      spy.mockRestore();
      expect(await w.chat.sweeper.sweep()).toBe(1);
      expect(await stateOf(first.conv)).toBe('ended');
      expect((await w.t.ctx.repos.outbox.list(a.id)).map((r) => JSON.parse(r.payload).data.conversation_id)).toEqual([second.conv, first.conv]);
    });

    it('generate-reply conversations end too, with customer_identifier and the merged variables', async () => {
      const asst = await w.assistant(a.key, { conversation_inactivity_timeout: 3, conversation_ended_webhook_url: `${w.sink.url}/ended` });
      await w.t.call(a.key, 'POST', '/user/ai/generate-reply', { assistant_id: asst.id, customer_identifier: 'crm:9', message: 'hi', variables: { a: 1 } });
      w.t.clock.advance(MIN);
      await w.t.call(a.key, 'POST', '/user/ai/generate-reply', { assistant_id: asst.id, customer_identifier: 'crm:9', message: 'again', variables: { b: 2 } });
      const last = w.t.clock.now();
      w.t.clock.advance(3 * MIN);
      expect(await w.chat.sweeper.sweep()).toBe(1);
      const [row] = await w.t.ctx.repos.outbox.list(a.id);
      const data = JSON.parse(row!.payload).data;
      expect(data).toMatchObject({
        type: 'api',
        reason: 'inactivity',
        customer_identifier: 'crm:9',
        variables: { a: 1, b: 2 },
        last_message_at: new Date(last).toISOString(),
        ended_at: new Date(w.t.clock.now()).toISOString(),
      });
      expect(data.customer).toBeUndefined();
      expect(data.history.map((m: { content: string }) => m.content)).toEqual(['hi', 'Hello from the stand-in.', 'again', 'Hello from the stand-in.']);
    });
  });
});
