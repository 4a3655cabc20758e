/**
 * Chat, generate-reply and WhatsApp failures name the provider and the cause inside each
 * endpoint's error shape, and never carry a key: no key configured (refused before any request),
 * a stand-in model answering 401 or 500, a refused connection, Twilio answering 401. Real HTTP.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { httpApp, type HttpApp } from '../../support/http-app.ts';
import { OpenAiStandIn } from '../../support/openai-stand-in.ts';
import { TwilioStandIn } from '../../support/twilio-stand-in.ts';
import { freePort } from '../../support/engine-process.ts';
import { chatServices } from '../../../src/chat/services.ts';
import { twilioSignature } from '../../../src/chat/twilio.ts';
import { createLogger } from '../../../src/util/logger.ts';

const OPENAI_KEY = 'sk-test-SECRETSECRET0123456789';
const TWILIO_TOKEN = 'twilio-token-SECRET-42';
const PUBLIC_URL = 'https://switchboard.example.test';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function world(env: Record<string, string>): Promise<{ t: HttpApp; key: string; assistantId: number; uuid: string; logs: string[] }> {
  const t = await httpApp({ SWITCHBOARD_PUBLIC_URL: PUBLIC_URL, ...env });
  cleanups.push(() => t.close());
  cleanups.push(() => chatServices(t.ctx).stop());
  const logs: string[] = [];
  t.ctx.logger = createLogger('info', new Writable({ write: (c: Buffer, _e, done) => (logs.push(c.toString()), done()) }));
  const a = await t.account(5);
  const res = await t.http(a.key, 'POST', '/user/assistant', {
    name: 'Chat',
    voice_id: 121,
    language_id: 1,
    type: 'inbound',
    mode: 'pipeline',
    timezone: 'Europe/Paris',
    initial_message: 'Hi!',
    system_prompt: 'Help.',
    llm_model_id: 1,
  });
  expect(res.status, res.text).toBe(201);
  const rec = await t.ctx.repos.assistants.getById(res.body.data.id);
  return { t, key: a.key, assistantId: rec!.id, uuid: rec!.uuid, logs };
}

async function chatMessage(w: Awaited<ReturnType<typeof world>>) {
  const conv = await w.t.http(w.key, 'POST', '/conversations', { assistant_id: w.uuid, type: 'test' });
  expect(conv.status, conv.text).toBe(200);
  return w.t.http(w.key, 'POST', `/conversations/${conv.body.conversation_id}/messages`, { message: 'Hello?' });
}

const generate = (w: Awaited<ReturnType<typeof world>>) =>
  w.t.http(w.key, 'POST', '/user/ai/generate-reply', { assistant_id: w.assistantId, customer_identifier: 'cust-1', message: 'Hello?' });

describe('chat and generate-reply', () => {
  it('no OpenAI key: refused before any request, naming the variable', async () => {
    const w = await world({});
    const chat = await chatMessage(w);
    expect(chat.status).toBe(400);
    expect(chat.body).toEqual({ status: false, error: 'Failed to process message: OpenAI: no API key configured (OPENAI_API_KEY)' });
    const gen = await generate(w);
    expect(gen.status).toBe(503);
    expect(gen.body).toEqual({ success: false, error: 'Failed to generate reply: OpenAI: no API key configured (OPENAI_API_KEY)', error_code: 'PROVIDER_NOT_CONFIGURED' });
  });

  it('the model answers 401: "OpenAI: 401 invalid API key", no key or vendor text in the body', async () => {
    const llm = await OpenAiStandIn.start();
    cleanups.push(() => llm.close());
    const w = await world({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl });
    llm.responder = () => ({ status: 401 });
    const chat = await chatMessage(w);
    expect(chat.status).toBe(400);
    expect(chat.body).toEqual({ status: false, error: 'Failed to process message: OpenAI: 401 invalid API key' });
    const gen = await generate(w);
    expect(gen.status).toBe(502);
    expect(gen.body).toEqual({ success: false, error: 'Failed to generate reply: OpenAI: 401 invalid API key', error_code: 'PROVIDER_FAILED' });
    // The key did go out to the provider (it is the one refusing it), never back to the client.
    expect(llm.requests[0]?.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    for (const text of [chat.text, gen.text, ...w.logs]) expect(text).not.toContain(OPENAI_KEY);
  });

  it('the model answers 500: status and the provider’s message', async () => {
    const llm = await OpenAiStandIn.start();
    cleanups.push(() => llm.close());
    const w = await world({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl });
    llm.responder = () => ({ status: 500 });
    const chat = await chatMessage(w);
    expect(chat.body).toEqual({ status: false, error: 'Failed to process message: OpenAI: 500 server error: scripted failure 500' });
    const gen = await generate(w);
    expect(gen.body).toMatchObject({ success: false, error: 'Failed to generate reply: OpenAI: 500 server error: scripted failure 500' });
  });

  it('nothing listens at OPENAI_BASE_URL: "connection refused" with the origin only (no path, no query)', async () => {
    const port = await freePort();
    const w = await world({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: `http://127.0.0.1:${port}/private/v1` });
    const chat = await chatMessage(w);
    expect(chat.body).toEqual({ status: false, error: `Failed to process message: OpenAI: connection refused (http://127.0.0.1:${port})` });
    const gen = await generate(w);
    expect(gen.body).toMatchObject({ error: `Failed to generate reply: OpenAI: connection refused (http://127.0.0.1:${port})` });
  });
});

describe('what a chat caller is told', () => {
  const LEAKY = 'Model gone, see https://admin:hunter2@llm.internal.example:8443/v1/models?token=qtok123 for org-AbCdEf123 proj_XyZ789 (Bearer tok-987654)';

  it('a keyless widget user gets a generic line; the cause is logged with the conversation id', async () => {
    const llm = await OpenAiStandIn.start();
    cleanups.push(() => llm.close());
    const w = await world({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl });
    llm.responder = (req) => ({ status: 500, errorMessage: `${LEAKY} ${req.authorization}` });
    const conv = await w.t.http(undefined, 'POST', '/conversations', { assistant_id: w.uuid });
    expect(conv.status, conv.text).toBe(200);
    const uuid = conv.body.conversation_id as string;
    const res = await w.t.http(undefined, 'POST', `/conversations/${uuid}/messages`, { message: 'Hello?' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: false, error: 'Failed to process message: the assistant could not answer right now' });
    const logged = w.logs.map((l) => JSON.parse(l) as { msg: string; conversationUuid?: string }).filter((l) => l.msg.startsWith('chat reply failed'));
    expect(logged).toHaveLength(1);
    expect(logged[0]!.conversationUuid).toBe(uuid);
    expect(logged[0]!.msg).toContain('OpenAI: 500 server error: Model gone');
    for (const text of [res.text, ...w.logs]) for (const secret of [OPENAI_KEY, 'hunter2', 'qtok123', 'org-AbCdEf123', 'proj_XyZ789', 'tok-987654']) expect(text).not.toContain(secret);
  });

  it('a keyless widget user is not told the internal endpoint of a refused connection', async () => {
    const port = await freePort();
    const w = await world({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: `http://127.0.0.1:${port}/private/v1` });
    const conv = await w.t.http(undefined, 'POST', '/conversations', { assistant_id: w.uuid });
    const res = await w.t.http(undefined, 'POST', `/conversations/${conv.body.conversation_id}/messages`, { message: 'Hello?' });
    expect(res.body).toEqual({ status: false, error: 'Failed to process message: the assistant could not answer right now' });
  });

  it('an authenticated caller keeps the named cause, with URLs cut to their origin and ids and tokens blanked', async () => {
    const llm = await OpenAiStandIn.start();
    cleanups.push(() => llm.close());
    const w = await world({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl });
    llm.responder = () => ({ status: 400, errorMessage: LEAKY });
    const chat = await chatMessage(w);
    expect(chat.body).toEqual({
      status: false,
      error: 'Failed to process message: OpenAI: 400 bad request: Model gone, see https://llm.internal.example:8443 for [redacted] [redacted] (Bearer [redacted]',
    });
    const gen = await generate(w);
    expect(gen.body.error).toBe('Failed to generate reply: OpenAI: 400 bad request: Model gone, see https://llm.internal.example:8443 for [redacted] [redacted] (Bearer [redacted]');
  });
});

describe('WhatsApp', () => {
  async function whatsapp(env: Record<string, string>) {
    const twilio = await TwilioStandIn.start();
    cleanups.push(() => twilio.close());
    const w = await world({ TWILIO_BASE_URL: twilio.baseUrl, ...env });
    const sender = await w.t.http(w.key, 'POST', '/user/whatsapp/senders', {
      name: 'Shop', phone: '+14155550100', assistant_id: w.assistantId, account_sid: 'AC1', auth_token: TWILIO_TOKEN,
    });
    expect(sender.status, sender.text).toBe(201);
    const senderId = sender.body.data.id as number;
    const inbound = async (body: string) => {
      const params = { From: 'whatsapp:+491701234567', To: 'whatsapp:+14155550100', Body: body, MessageSid: `SM${Math.random().toString(16).slice(2)}` };
      const path = `/api/webhooks/whatsapp/${senderId}`;
      const res = await w.t.http(undefined, 'POST', path, new URLSearchParams(params).toString(), {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilioSignature(TWILIO_TOKEN, `${PUBLIC_URL}${path}`, params),
      });
      expect(res.status, res.text).toBe(200);
      await chatServices(w.t.ctx).whatsapp.idle();
    };
    return { ...w, twilio, senderId, inbound };
  }
  const failures = (logs: string[]) => logs.map((l) => JSON.parse(l) as { msg: string }).filter((l) => l.msg.startsWith('whatsapp AI reply failed'));

  it('an AI reply without an OpenAI key: the log line names the provider and the variable; nothing is sent', async () => {
    const w = await whatsapp({});
    await w.inbound('Hallo');
    expect(failures(w.logs).map((l) => l.msg)).toEqual(['whatsapp AI reply failed: OpenAI: no API key configured (OPENAI_API_KEY)']);
    expect(w.twilio.sent).toHaveLength(0);
  });

  it('an AI reply the model refuses with 500: logged as "OpenAI: 500 server error"', async () => {
    const llm = await OpenAiStandIn.start();
    cleanups.push(() => llm.close());
    const w = await whatsapp({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl });
    llm.responder = () => ({ status: 500 });
    await w.inbound('Hallo');
    expect(failures(w.logs).map((l) => l.msg)).toEqual(['whatsapp AI reply failed: OpenAI: 500 server error: scripted failure 500']);
  });

  it('send-freeform Twilio answers 401: names Twilio and the sender credentials, never the token', async () => {
    const llm = await OpenAiStandIn.start();
    cleanups.push(() => llm.close());
    const w = await whatsapp({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl });
    llm.responder = () => ({ content: '' });
    await w.inbound('Hallo'); // opens the 24-hour window
    w.twilio.failNext = 1;
    w.twilio.failStatus = 401;
    const res = await w.t.http(w.key, 'POST', '/user/whatsapp/send-freeform', { sender_id: w.senderId, recipient_phone: '+491701234567', message: 'Hi' });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      success: false,
      error: "Failed to send the WhatsApp message: Twilio: 401 authentication failed (check the WhatsApp sender's account_sid and auth_token)",
      error_code: 'PROVIDER_FAILED',
    });
    for (const text of [res.text, ...w.logs]) expect(text).not.toContain(TWILIO_TOKEN);
  });

  it('send-freeform Twilio answers 500: status and Twilio’s message', async () => {
    const llm = await OpenAiStandIn.start();
    cleanups.push(() => llm.close());
    const w = await whatsapp({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: llm.baseUrl });
    llm.responder = () => ({ content: '' });
    await w.inbound('Hallo');
    w.twilio.failNext = 1;
    const res = await w.t.http(w.key, 'POST', '/user/whatsapp/send-freeform', { sender_id: w.senderId, recipient_phone: '+491701234567', message: 'Hi' });
    expect(res.body).toEqual({ success: false, error: 'Failed to send the WhatsApp message: Twilio: 500 server error: scripted failure', error_code: 'PROVIDER_FAILED' });
  });
});
