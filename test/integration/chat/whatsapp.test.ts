import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chatWorld, postTwilio, balanceMicros, PUBLIC_URL, type ChatWorld } from './helpers.ts';
import type { Store } from '../../../src/store/db.ts';
import { AVAILABLE_BACKENDS } from '../../support/postgres.ts';
import { verify } from '../../../src/webhooks/signing.ts';

const SENDER_PHONE = '+14155550100';
const CUSTOMER = '+491701234567';
const TOKEN = 'twilio-auth-token-1';
const HOUR = 3_600_000;

// Every case on both stores: inbound find-or-create and the end of a conversation are transactions.
describe.each(AVAILABLE_BACKENDS)('on %s', (backend) => {
  let w: ChatWorld<Store>;
  let a: { id: number; key: string };
  let senderId: number;
  let assistantId: number;
  beforeEach(async () => {
    w = await chatWorld({ backend });
    a = await w.t.account(1);
    assistantId = (await w.assistant(a.key, { conversation_ended_webhook_url: `${w.sink.url}/events` })).id;
    const res = await w.req(a.key, 'POST', '/user/whatsapp/senders', {
      name: 'Shop',
      phone: SENDER_PHONE,
      assistant_id: assistantId,
      account_sid: 'AC123',
      auth_token: TOKEN,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    senderId = res.body.data.id;
  });
  afterEach(() => w.close());

  const inbound = (body: string, token: string | null = TOKEN, extra: Record<string, string> = {}) =>
    postTwilio(w.t, `/webhooks/whatsapp/${senderId}`, {
      From: `whatsapp:${CUSTOMER}`,
      To: `whatsapp:${SENDER_PHONE}`,
      Body: body,
      MessageSid: `SMin${Math.random().toString(16).slice(2)}`,
      ProfileName: 'Jonas',
      ...extra,
    }, token);

  const status = (phone = CUSTOMER, sender = senderId, key = a.key) =>
    w.t.call(key, 'GET', `/user/whatsapp/session-status?sender_id=${sender}&recipient_phone=${encodeURIComponent(phone)}`);
  const freeform = (body: Record<string, unknown>, key = a.key) => w.t.call(key, 'POST', '/user/whatsapp/send-freeform', body);

  async function rows() {
    const db = w.t.ctx.store.db;
    return {
      conversations: (await db.selectFrom('conversations').selectAll().execute()).length,
      messages: (await db.selectFrom('messages').selectAll().execute()).length,
    };
  }

  describe('inbound webhook signature', () => {
    it('rejects unsigned, wrongly signed and wrong-URL requests with 403 and stores nothing', async () => {
      expect((await inbound('hi', null)).status).toBe(403);
      expect((await inbound('hi', 'not-the-token')).status).toBe(403);
      const otherUrl = await postTwilio(w.t, `/webhooks/whatsapp/${senderId}`, { From: `whatsapp:${CUSTOMER}`, Body: 'x' }, TOKEN, `http://evil.test/api/webhooks/whatsapp/${senderId}`);
      expect(otherUrl.status).toBe(403);
      expect((await postTwilio(w.t, '/webhooks/whatsapp/9999', { Body: 'x' }, TOKEN)).status).toBe(403);
      expect(await rows()).toEqual({ conversations: 0, messages: 0 });
      expect(w.llm.requests).toHaveLength(0);
    });

    it('accepts a signed message, answers with the AI through Twilio and charges the send', async () => {
      w.llm.enqueue({ content: 'Hallo Jonas!' });
      const before = await balanceMicros(w.t, a.id);
      const res = await inbound('Hallo');
      expect(res.status).toBe(200);
      expect(res.body).toContain('<Response>');
      await w.chat.whatsapp.idle();
      expect(w.twilio.sent).toEqual([
        expect.objectContaining({
          accountSid: 'AC123',
          credentials: `AC123:${TOKEN}`,
          From: `whatsapp:${SENDER_PHONE}`,
          To: `whatsapp:${CUSTOMER}`,
          Body: 'Hallo Jonas!',
          StatusCallback: `${PUBLIC_URL}/api/webhooks/whatsapp/${senderId}/status`,
        }),
      ]);
      expect(before - await balanceMicros(w.t, a.id)).toBe(5_000);
      const st = await status();
      const view = await w.req(a.key, 'GET', `/conversations/${(await w.t.ctx.repos.conversations.getById(st.body.conversation_id))!.uuid}`);
      expect(view.body).toMatchObject({
        whatsapp_sender: { name: 'Shop', phone: SENDER_PHONE },
        customer: { name: 'Jonas', phone: CUSTOMER },
        history: [{ role: 'user', content: 'Hallo' }, { role: 'assistant', content: 'Hallo Jonas!' }],
      });
    });

    it('no AI reply while AI is disabled; the message is still recorded', async () => {
      await inbound('first');
      await w.chat.whatsapp.idle();
      const conv = (await status()).body.conversation_id as number;
      const uuid = (await w.t.ctx.repos.conversations.getById(conv))!.uuid;
      await w.req(a.key, 'POST', `/automate/conversations/${uuid}/disable-ai`);
      const sends = w.twilio.sent.length;
      await inbound('second');
      await w.chat.whatsapp.idle();
      expect(w.twilio.sent.length).toBe(sends);
      expect((await w.req(a.key, 'GET', `/conversations/${uuid}`)).body.history.at(-1)).toEqual({ role: 'user', content: 'second' });
    });
  });

  describe('24-hour session on a manual clock', () => {
    it('open → reset → expire → reopen, with fields present exactly when the spec says', async () => {
      const none = await status();
      expect(none.body).toEqual({ success: true, has_conversation: false, session_status: expect.any(Object) });
      expect(Object.keys(none.body.session_status).sort()).toEqual(['can_send_freeform', 'expires_at', 'is_open', 'message', 'requires_template']);
      expect(none.body.session_status).toMatchObject({ is_open: false, can_send_freeform: false, requires_template: true });

      await inbound('hello');
      const t0 = w.t.clock.now();
      const open = await status();
      expect(open.body).toEqual({
        success: true,
        has_conversation: true,
        conversation_id: expect.any(Number),
        customer_name: 'Jonas',
        last_customer_message_at: new Date(t0).toISOString(),
        session_status: {
          is_open: true,
          can_send_freeform: true,
          requires_template: false,
          message: expect.any(String),
          minutes_remaining: 1440,
          expires_at: new Date(t0 + 24 * HOUR).toISOString(),
        },
      });

      w.t.clock.advance(23 * HOUR);
      expect((await status()).body.session_status.minutes_remaining).toBe(60);
      await inbound('still there');
      const t1 = w.t.clock.now();
      expect((await status()).body.session_status).toMatchObject({ minutes_remaining: 1440, expires_at: new Date(t1 + 24 * HOUR).toISOString() });

      w.t.clock.advance(24 * HOUR);
      const expired = await status();
      expect(expired.body.session_status).toEqual({
        is_open: false,
        can_send_freeform: false,
        requires_template: true,
        message: expect.any(String),
        expired_at: new Date(t1 + 24 * HOUR).toISOString(),
      });
      const refused = await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'hi' });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ success: false, error: expect.any(String), error_code: 'SESSION_EXPIRED', session_status: expired.body.session_status });

      await inbound('back again');
      expect((await status()).body.session_status).toMatchObject({ is_open: true, minutes_remaining: 1440 });
      expect((await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'welcome back' })).status).toBe(200);
    });
  });

  describe('send-freeform', () => {
    it('sends, charges, and returns ids with the updated session status', async () => {
      await inbound('hi');
      await w.chat.whatsapp.idle();
      const before = await balanceMicros(w.t, a.id);
      const res = await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'A human here.' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        conversation_id: expect.any(Number),
        message_id: expect.any(Number),
        whatsapp_message_id: expect.any(Number),
        message_sid: w.twilio.sent.at(-1)!.sid,
        session_status: expect.objectContaining({ is_open: true, can_send_freeform: true }),
      });
      expect(w.twilio.sent.at(-1)!.Body).toBe('A human here.');
      expect(before - await balanceMicros(w.t, a.id)).toBe(5_000);
    });

    it('every error code, in the spec’s order', async () => {
      await inbound('hi');
      await w.chat.whatsapp.idle();
      const b = await w.t.account(1);
      const bad = await freeform({ sender_id: senderId, recipient_phone: '0170 123', message: 'x' });
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual({ success: false, error: expect.any(String), error_code: 'INVALID_PHONE' });
      expect((await status('0170123')).body.error_code).toBe('INVALID_PHONE');
      const missing = await freeform({ sender_id: senderId });
      expect(missing.status).toBe(422);
      expect(missing.body).toMatchObject({ message: expect.any(String), errors: { recipient_phone: expect.any(Array), message: expect.any(Array) } });
      expect((await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x'.repeat(4097) })).status).toBe(422);
      const foreign = await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' }, b.key);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ success: false, error: expect.any(String), error_code: 'SENDER_NOT_FOUND' });
      expect((await status(CUSTOMER, senderId, b.key)).body.error_code).toBe('SENDER_NOT_FOUND');
      expect((await status(CUSTOMER, 9999)).status).toBe(404);

      w.t.clock.advance(1000);
      await w.t.call(a.key, 'PUT', `/user/whatsapp/senders/${senderId}`, { status: 'offline' });
      const offline = await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' });
      expect(offline.status).toBe(503);
      expect(offline.body.error_code).toBe('SENDER_OFFLINE');
      await w.t.call(a.key, 'PUT', `/user/whatsapp/senders/${senderId}`, { status: 'online' });

      const stranger = await freeform({ sender_id: senderId, recipient_phone: '+15005550006', message: 'x' });
      expect(stranger.status).toBe(403);
      expect(stranger.body).toMatchObject({ error_code: 'SESSION_EXPIRED', session_status: { requires_template: true } });

      await w.t.ctx.repos.ledger.setBalance(a.id, 4_000);
      w.t.clock.advance(1000);
      const broke = await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' });
      expect(broke.status).toBe(402);
      expect(broke.body).toEqual({ success: false, error: expect.stringMatching(/top up/i), error_code: 'INSUFFICIENT_BALANCE' });
    });

    it('when several preconditions fail, the first in the spec’s order decides', async () => {
      await inbound('hi');
      await w.chat.whatsapp.idle();
      const b = await w.t.account(1);
      // Expired session, zero balance, offline sender, and another account asking with a bad number.
      w.t.clock.advance(25 * HOUR);
      await w.t.ctx.repos.ledger.setBalance(a.id, 0);
      await w.t.call(a.key, 'PUT', `/user/whatsapp/senders/${senderId}`, { status: 'offline' });
      expect((await freeform({ sender_id: senderId, recipient_phone: '12345', message: 'x' }, b.key)).body.error_code).toBe('INVALID_PHONE');
      expect((await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' }, b.key)).body.error_code).toBe('SENDER_NOT_FOUND');
      expect((await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' })).body.error_code).toBe('SENDER_OFFLINE');
      await w.t.call(a.key, 'PUT', `/user/whatsapp/senders/${senderId}`, { status: 'online' });
      expect((await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' })).body.error_code).toBe('SESSION_EXPIRED');
      await inbound('back');
      await w.chat.whatsapp.idle();
      expect((await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' })).body.error_code).toBe('INSUFFICIENT_BALANCE');
      expect(w.twilio.sent).toHaveLength(1);
    });

    it('401 without a key; session-status consumes no balance', async () => {
      expect((await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' }, '')).status).toBe(401);
      expect((await w.t.call(undefined, 'GET', `/user/whatsapp/session-status?sender_id=${senderId}&recipient_phone=${encodeURIComponent(CUSTOMER)}`)).status).toBe(401);
      const missing = await w.t.call(a.key, 'GET', '/user/whatsapp/session-status');
      expect(missing.status).toBe(422);
      expect(missing.body).toMatchObject({ message: expect.any(String), errors: { sender_id: expect.any(Array), recipient_phone: expect.any(Array) } });
      const before = await balanceMicros(w.t, a.id);
      await status();
      await status('+15005550006');
      expect(await balanceMicros(w.t, a.id)).toBe(before);
    });

    it('429 {message, retry_after} past 5 sends per second', async () => {
      await inbound('hi');
      await w.chat.whatsapp.idle();
      w.t.clock.advance(2000);
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: `m${i}` }));
      expect(results.slice(0, 5).every((r) => r.status === 200)).toBe(true);
      expect(results[5]!.status).toBe(429);
      expect(results[5]!.body).toMatchObject({ message: expect.any(String), retry_after: 1 });
      w.t.clock.advance(1000);
      expect((await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'later' })).status).toBe(200);
    });

    it('a provider failure is refunded', async () => {
      await inbound('hi');
      await w.chat.whatsapp.idle();
      const before = await balanceMicros(w.t, a.id);
      w.twilio.failNext = 1;
      const res = await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' });
      expect(res.status).toBe(502);
      expect(res.body.error_code).toBe('PROVIDER_FAILED');
      expect(await balanceMicros(w.t, a.id)).toBe(before);
    });
  });

  describe('delivery status callbacks', () => {
    it('records the status and emits a signed read receipt through the outbox', async () => {
      await inbound('hi');
      await w.chat.whatsapp.idle();
      const sent = await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'Seen?' });
      const sid = sent.body.message_sid as string;
      const path = `/webhooks/whatsapp/${senderId}/status`;
      expect((await postTwilio(w.t, path, { MessageSid: sid, MessageStatus: 'read' }, null)).status).toBe(403);
      expect((await w.t.ctx.repos.messages.get(sent.body.message_id))!.deliveryStatus).toBe('queued');
      expect((await postTwilio(w.t, path, { MessageSid: sid, MessageStatus: 'read' }, TOKEN)).status).toBe(200);
      expect((await w.t.ctx.repos.messages.get(sent.body.message_id))!.deliveryStatus).toBe('read');
      await w.chat.delivery.runDue();
      const event = w.sink.received.find((d) => d.path === '/events')!;
      const body = JSON.parse(event.body);
      expect(body).toMatchObject({
        type: 'message.read_receipt',
        data: { conversation_id: sent.body.conversation_id, message_id: sent.body.message_id, message_sid: sid, status: 'read', recipient_phone: CUSTOMER },
      });
      const secret = (await w.t.ctx.repos.accounts.get(a.id))!.webhookSecret;
      const headers = Object.fromEntries(Object.entries(event.headers).map(([k, v]) => [k, String(v)]));
      expect(verify(secret, headers, event.body, Math.floor(w.t.clock.now() / 1000))).toBe(true);
      void assistantId;
    });

    it('delivered and failed updates are recorded and emitted (error_code only when given); unknown SIDs are ignored', async () => {
      await inbound('hi');
      await w.chat.whatsapp.idle();
      const ok = await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'one' });
      const path = `/webhooks/whatsapp/${senderId}/status`;
      expect((await postTwilio(w.t, path, { MessageSid: ok.body.message_sid, MessageStatus: 'delivered' }, TOKEN)).status).toBe(200);
      expect((await w.t.ctx.repos.messages.get(ok.body.message_id))!.deliveryStatus).toBe('delivered');
      expect((await postTwilio(w.t, path, { MessageSid: ok.body.message_sid, MessageStatus: 'undelivered', ErrorCode: '63016' }, TOKEN)).status).toBe(200);
      expect((await postTwilio(w.t, path, { MessageSid: 'SMunknown', MessageStatus: 'read' }, TOKEN)).status).toBe(200);
      const events = (await w.t.ctx.repos.outbox.list(a.id)).filter((r) => r.eventType === 'message.read_receipt').map((r) => JSON.parse(r.payload).data);
      expect(events).toEqual([
        { conversation_id: ok.body.conversation_id, conversation_uuid: expect.any(String), message_id: ok.body.message_id, message_sid: ok.body.message_sid, status: 'delivered', sender_id: senderId, recipient_phone: CUSTOMER },
        { conversation_id: ok.body.conversation_id, conversation_uuid: expect.any(String), message_id: ok.body.message_id, message_sid: ok.body.message_sid, status: 'undelivered', sender_id: senderId, recipient_phone: CUSTOMER, error_code: '63016' },
      ]);
    });

    it('read receipts go to webhook_url when the assistant’s webhook is active', async () => {
      await w.req(a.key, 'PUT', `/user/assistant/${assistantId}`, { is_webhook_active: true, webhook_url: `${w.sink.url}/hook` });
      await inbound('hi');
      await w.chat.whatsapp.idle();
      const sent = await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'x' });
      await postTwilio(w.t, `/webhooks/whatsapp/${senderId}/status`, { MessageSid: sent.body.message_sid, MessageStatus: 'read' }, TOKEN);
      await w.chat.delivery.runDue();
      expect(w.sink.received.filter((d) => d.path === '/hook').map((d) => JSON.parse(d.body).type)).toEqual(['message.read_receipt']);
      expect(w.sink.received.filter((d) => d.path === '/events')).toHaveLength(0);
    });
  });

  describe('inbound details', () => {
    it('a valid signature over other parameters, or for the other endpoint’s URL, is refused; repeated MessageSids are ignored', async () => {
      const params = { From: `whatsapp:${CUSTOMER}`, Body: 'hi', MessageSid: 'SMdup' };
      const path = `/webhooks/whatsapp/${senderId}`;
      const sig = (await import('../../../src/chat/twilio.ts')).twilioSignature(TOKEN, `${PUBLIC_URL}/api${path}`, params);
      const tampered = await w.t.app.inject({
        method: 'POST',
        url: `/api${path}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': sig },
        payload: new URLSearchParams({ ...params, Body: 'pay me' }).toString(),
      });
      expect(tampered.statusCode).toBe(403);
      expect((await postTwilio(w.t, path, params, TOKEN, `${PUBLIC_URL}/api${path}/status`)).status).toBe(403);
      expect(await rows()).toEqual({ conversations: 0, messages: 0 });
      w.llm.defaultResponse = { content: 'once' };
      expect((await postTwilio(w.t, path, params, TOKEN)).status).toBe(200);
      expect((await postTwilio(w.t, path, params, TOKEN)).status).toBe(200);
      await w.chat.whatsapp.idle();
      expect(await rows()).toEqual({ conversations: 1, messages: 2 });
      expect(w.twilio.sent).toHaveLength(1);
    });

    it('messages arriving together land in one conversation, and a retried one is stored once', async () => {
      const sender = (await w.t.ctx.repos.whatsappSenders.getById(senderId))!;
      const form = (i: number) => ({ From: `whatsapp:${CUSTOMER}`, Body: `m${i}`, MessageSid: `SMburst${i}`, ProfileName: 'Jonas' });
      await Promise.all([1, 2, 3, 3].map((i) => w.chat.whatsapp.inbound(sender, form(i))));
      await w.chat.whatsapp.idle();
      const convs = await w.t.ctx.store.db.selectFrom('conversations').select('id').execute();
      expect(convs).toHaveLength(1);
      const texts = (await w.t.ctx.repos.messages.list(convs[0]!.id)).filter((m) => m.role === 'user').map((m) => m.content);
      expect(texts.sort()).toEqual(['m1', 'm2', 'm3']);
    });

    it('an offline sender records the message but sends no AI reply', async () => {
      await w.req(a.key, 'PUT', `/user/whatsapp/senders/${senderId}`, { status: 'offline' });
      expect((await inbound('anyone?')).status).toBe(200);
      await w.chat.whatsapp.idle();
      expect(w.llm.requests).toHaveLength(0);
      expect(w.twilio.sent).toHaveLength(0);
      expect((await status()).body.session_status.is_open).toBe(true);
    });

    it('an AI reply the balance cannot cover is not generated', async () => {
      await w.t.ctx.repos.ledger.setBalance(a.id, 4_000);
      await inbound('hi');
      await w.chat.whatsapp.idle();
      expect(w.llm.requests).toHaveLength(0);
      expect(w.twilio.sent).toHaveLength(0);
      expect(await balanceMicros(w.t, a.id)).toBe(4_000);
    });
  });

  describe('WhatsApp conversations and inactivity', () => {
    const MIN = 60_000;

    it('ends after the timeout with the customer in the event; without retrigger later messages get no AI reply', async () => {
      await w.req(a.key, 'PUT', `/user/assistant/${assistantId}`, { conversation_inactivity_timeout: 10 });
      await inbound('hi');
      await w.chat.whatsapp.idle();
      w.t.clock.advance(11 * MIN);
      expect(await w.chat.sweeper.sweep()).toBe(1);
      const [ended] = (await w.t.ctx.repos.outbox.list(a.id)).filter((r) => r.eventType === 'conversation.ended');
      expect(JSON.parse(ended!.payload).data).toMatchObject({
        type: 'whatsapp',
        reason: 'inactivity',
        customer: { name: 'Jonas', phone: CUSTOMER },
        history: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello from the stand-in.' }],
      });
      const requests = w.llm.requests.length;
      await inbound('me again');
      await w.chat.whatsapp.idle();
      expect(w.llm.requests.length).toBe(requests);
      expect(w.twilio.sent).toHaveLength(1);
      // The customer wrote, so a human may still answer within the window.
      expect((await freeform({ sender_id: senderId, recipient_phone: CUSTOMER, message: 'a human' })).status).toBe(200);
    });

    it('with retrigger a customer message reopens the conversation and the AI answers', async () => {
      await w.req(a.key, 'PUT', `/user/assistant/${assistantId}`, { conversation_inactivity_timeout: 10, conversation_ended_retrigger: true });
      await inbound('hi');
      await w.chat.whatsapp.idle();
      w.t.clock.advance(11 * MIN);
      expect(await w.chat.sweeper.sweep()).toBe(1);
      w.llm.enqueue({ content: 'Welcome back!' });
      await inbound('me again');
      await w.chat.whatsapp.idle();
      expect(w.twilio.sent.at(-1)!.Body).toBe('Welcome back!');
      const conv = (await status()).body.conversation_id as number;
      expect((await w.t.ctx.repos.conversations.getById(conv))!.status).toBe('active');
    });
  });
});
