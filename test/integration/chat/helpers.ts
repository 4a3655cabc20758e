import { expect } from 'vitest';
import { testApp, testAppOn, type TestApp } from '../../support/app.ts';
import type { SqliteStore, Store } from '../../../src/store/db.ts';
import type { StoreBackend } from '../../support/postgres.ts';
import { OpenAiStandIn } from '../../support/openai-stand-in.ts';
import { TwilioStandIn } from '../../support/twilio-stand-in.ts';
import { HttpSink } from '../../support/http-sink.ts';
import { chatServices, type ChatServices } from '../../../src/chat/services.ts';
import { twilioSignature } from '../../../src/chat/twilio.ts';
import type { Outbound } from '../../../src/net/outbound/index.ts';

export const PUBLIC_URL = 'https://switchboard.example.test';

export interface ChatWorld<S extends Store = SqliteStore> {
  t: TestApp<S>;
  llm: OpenAiStandIn;
  twilio: TwilioStandIn;
  sink: HttpSink;
  chat: ChatServices;
  /** t.call after moving the clock 600 ms, so long sequences stay under 20 requests per 10 s. */
  req: TestApp['call'];
  assistant(key: string, over?: Record<string, unknown>): Promise<{ id: number; uuid: string }>;
  close(): Promise<void>;
}

/**
 * `outbound`: the engine's guard for customer URLs instead of testApp's (loopback opened).
 * `backend`: the store to run on (default an in-memory SQLite store).
 */
export async function chatWorld(opts?: { outbound?: Outbound }): Promise<ChatWorld>;
export async function chatWorld(opts: { outbound?: Outbound; backend: StoreBackend }): Promise<ChatWorld<Store>>;
export async function chatWorld(opts: { outbound?: Outbound; backend?: StoreBackend } = {}): Promise<ChatWorld<Store>> {
  const [llm, twilio, sink] = await Promise.all([OpenAiStandIn.start(), TwilioStandIn.start(), HttpSink.start()]);
  const env = {
    OPENAI_BASE_URL: llm.baseUrl,
    OPENAI_API_KEY: 'sk-stand-in',
    TWILIO_BASE_URL: twilio.baseUrl,
    SWITCHBOARD_PUBLIC_URL: PUBLIC_URL,
  };
  const t: TestApp<Store> = opts.backend ? await testAppOn(opts.backend, env, opts) : await testApp(env, opts);
  const chat = chatServices(t.ctx);
  const req: TestApp<Store>['call'] = (key, method, url, body) => {
    t.clock.advance(600);
    return t.call(key, method, url, body);
  };
  return {
    t,
    llm,
    twilio,
    sink,
    chat,
    req,
    async assistant(key, over = {}) {
      const res = await req(key, 'POST', '/user/assistant', {
        name: 'Chat helper',
        voice_id: 121,
        language_id: 1,
        type: 'inbound',
        mode: 'pipeline',
        timezone: 'Europe/Paris',
        initial_message: 'Hi {{customer_name}}, how can I help?',
        system_prompt: 'You help customers of {{company}}.',
        llm_model_id: 1,
        ...over,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const id = res.body.data.id as number;
      const rec = await t.ctx.repos.assistants.getById(id);
      return { id, uuid: rec!.uuid };
    },
    async close() {
      await chat.stop();
      await t.close();
      await Promise.all([llm.close(), twilio.close(), sink.close()]);
    },
  };
}

/** Posts a Twilio-style form to our webhook, signed with `token` unless told otherwise. */
export async function postTwilio(
  t: TestApp<Store>,
  path: string,
  params: Record<string, string>,
  token: string | null,
  signUrl = `${PUBLIC_URL}/api${path}`,
): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (token !== null) headers['x-twilio-signature'] = twilioSignature(token, signUrl, params);
  const res = await t.app.inject({ method: 'POST', url: `/api${path}`, headers, payload: new URLSearchParams(params).toString() });
  return { status: res.statusCode, body: res.body };
}

export async function balanceMicros(t: TestApp<Store>, accountId: number): Promise<number> {
  return await t.ctx.repos.ledger.balance(accountId);
}
