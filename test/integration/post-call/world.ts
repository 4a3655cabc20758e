import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { testApp, type TestApp } from '../../support/app.ts';
import { OpenAiStandIn } from '../../support/openai-stand-in.ts';
import { HttpSink } from '../../support/http-sink.ts';
import { createLlmRegistry } from '../../../src/providers/llm/registry.ts';
import { DeliveryWorker } from '../../../src/webhooks/delivery.ts';
import { outboundOf } from '../../../src/net/outbound/index.ts';
import { EventPublisher } from '../../../src/webhooks/events.ts';
import { postCallDeps, type PostCallDeps, type PostCallTranscript } from '../../../src/call/post-call/index.ts';
import type { AssistantRecord } from '../../../src/store/repos/assistants.ts';
import type { Call, NewCall } from '../../../src/store/repos/calls.ts';

export const PUBLIC_URL = 'https://switchboard.example.test';

export interface PostCallWorld {
  t: TestApp;
  llm: OpenAiStandIn;
  sink: HttpSink;
  delivery: DeliveryWorker;
  deps: PostCallDeps;
  dataDir: string;
  account: { id: number; key: string };
  assistant(over?: Record<string, unknown>): Promise<AssistantRecord>;
  /** A finished call: answered at invite + 2 s unless `answeredForMs` is null (never answered). */
  call(assistant: AssistantRecord | null, answeredForMs: number | null, over?: Partial<NewCall>): Promise<Call>;
  /** Writes a WAV where the recorder would. */
  recording(call: Call): string;
  close(): Promise<void>;
}

export const TRANSCRIPT: PostCallTranscript = {
  turns: [
    { speaker: 'assistant', text: 'Hello, Bistro Nova, how can I help?', startMs: 0, endMs: 2_000 },
    { speaker: 'caller', text: 'A table for four tomorrow at eight, please. My name is Ann.', startMs: 2_500, endMs: 6_000 },
    { speaker: 'assistant', text: 'Booked: four people tomorrow at eight, under Ann.', startMs: 6_400, endMs: 9_000 },
  ],
};

export const SCHEMA = [
  { name: 'party_size', type: 'number', description: 'How many people the booking is for' },
  { name: 'booked', type: 'bool', description: 'Whether a table was booked' },
  { name: 'caller_name', type: 'string', description: 'The name the caller gave' },
];

export async function postCallWorld(balanceDollars = 10): Promise<PostCallWorld> {
  const [llm, sink] = await Promise.all([OpenAiStandIn.start(), HttpSink.start()]);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'post-call-it-'));
  const t = await testApp({
    OPENAI_BASE_URL: llm.baseUrl,
    OPENAI_API_KEY: 'sk-stand-in',
    SWITCHBOARD_PUBLIC_URL: PUBLIC_URL,
    SWITCHBOARD_DATA_DIR: dataDir,
  });
  const delivery = new DeliveryWorker({
    outbox: t.ctx.repos.outbox,
    secretFor: async (id) => (await t.ctx.repos.accounts.get(id))?.webhookSecret,
    clock: t.clock,
    logger: t.ctx.logger,
    fetch: outboundOf(t.ctx).fetch,
  });
  const events = new EventPublisher(t.ctx.repos.outbox, t.clock);
  const deps = postCallDeps(t.ctx, createLlmRegistry(t.ctx.config), events);
  const account = await t.account(balanceDollars);
  return {
    t,
    llm,
    sink,
    delivery,
    deps,
    dataDir,
    account,
    async assistant(over = {}) {
      t.clock.advance(600); // stays under the REST rate limit
      const res = await t.call(account.key, 'POST', '/user/assistant', {
        name: 'Bistro Nova',
        voice_id: 121,
        language_id: 1,
        type: 'inbound',
        mode: 'pipeline',
        timezone: 'Europe/Paris',
        initial_message: 'Hello, Bistro Nova, how can I help?',
        system_prompt: 'You take table bookings.',
        llm_model_id: 2,
        is_webhook_active: true,
        webhook_url: `${sink.url}/calls`,
        post_call_schema: SCHEMA,
        ...over,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return (await t.ctx.repos.assistants.getById(res.body.data.id as number))!;
    },
    async call(assistant, answeredForMs, over = {}) {
      const invite = t.clock.now();
      const answered = answeredForMs !== null;
      return t.ctx.repos.calls.create({
        accountId: account.id,
        assistantId: assistant?.id ?? null,
        direction: 'inbound',
        fromNumber: '+15550001111',
        toNumber: '+15550002222',
        status: answered ? 'completed' : 'no-answer',
        endCause: answered ? 'remote-hangup' : 'no-answer',
        inviteAt: invite,
        answerAt: answered ? invite + 2_000 : null,
        endAt: answered ? invite + 2_000 + answeredForMs : invite + 30_000,
        ...over,
      });
    },
    recording(call) {
      const file = path.join(dataDir, 'recordings', `${call.uuid}.wav`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, Buffer.from('RIFF....WAVE'));
      return file;
    },
    async close() {
      await delivery.stop();
      await t.close();
      await Promise.all([llm.close(), sink.close()]);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The ledger rows booked for calls. */
export function callCharges(t: TestApp, accountId: number): { amount_micros: number; reference: string }[] {
  return t.ctx.store.sqlite
    .prepare("SELECT amount_micros, reference FROM ledger WHERE account_id = ? AND reason = 'call' ORDER BY id")
    .all(accountId) as { amount_micros: number; reference: string }[];
}

/** The evaluation tool call a well-behaved model makes. */
export function evaluationAnswer(args: Record<string, unknown> | string) {
  return { toolCalls: [{ name: 'record_call_evaluation', arguments: args }] };
}
