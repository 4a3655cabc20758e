/**
 * One conversation per call, whatever the engine, through the real call runner (runner-world.ts):
 * - assistant_transfer: the target continues the same conversation under its own prompt, on a
 *   pipeline target (its agent's history) and on a multimodal target (conversation items the
 *   realtime model gets on connect);
 * - warm_call_transfer on a multimodal call: the supervisor's briefing is written from the
 *   call's transcript (what the realtime model heard and said), as on pipeline calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import type { LlmMessage } from '../../../src/providers/llm/types.ts';
import { runnerWorld, say } from './runner-world.ts';
import { until } from './world.ts';

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

const FRONT_DESK = 'You are the front desk of Luigi.';
const BILLING = 'You are the billing desk of Luigi.';
const HANDOVER = 'Let me pass you to billing.';

const dialogue = (messages: readonly LlmMessage[]) => messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]);
/** Text items the realtime model was given, in order: [role, text]. */
const items = (events: Record<string, any>[]) =>
  events.filter((e) => e.type === 'conversation.item.create' && e.item?.type === 'message').map((e) => [e.item.role, e.item.content?.[0]?.text]);

describe.concurrent('assistant_transfer: the target continues the same conversation', () => {
  it('pipeline → pipeline: the target agent sees the transcript so far under its own prompt', async () => {
    const w = await runnerWorld({ vad, callerWords: ['What are your opening hours?', 'I need to cancel my appointment on Friday.'] });
    try {
      const billing = await w.assistant('pipeline', { initial_message: 'Hi, this is billing.', system_prompt: BILLING });
      await w.assistant(
        'pipeline',
        {
          initial_message: 'Hello.',
          system_prompt: FRONT_DESK,
          tools: [{ type: 'assistant_transfer', data: { assistant_id: billing, message_before_transfer: HANDOVER, speak_transfer_greeting: true } }],
        },
        true,
      );
      w.llm.queue.push({ toolCalls: [{ name: `transfer_to_assistant_${billing}`, arguments: { reason: 'billing question' } }] }, { content: '' });
      w.llm.fallback = { content: 'Sure, which appointment?' };
      const call = await w.call();
      await until(() => w.tts.spoken.includes('Hello.'), 4000, 'front desk greets');
      await say(call, 'utt-opening-hours');
      await until(() => w.tts.spoken.includes('Hi, this is billing.'), 8000, 'billing greets');
      await say(call, 'utt-cancel');
      const asked = () => w.llm.requests.find((r) => String(r[0]?.content).includes(BILLING));
      await until(() => asked() !== undefined, 8000, 'billing agent turn');
      const req = asked()!;
      expect(String(req[0]!.content)).not.toContain(FRONT_DESK);
      expect(dialogue(req)).toEqual([
        ['assistant', 'Hello.'],
        ['user', 'What are your opening hours?'],
        ['assistant', HANDOVER],
        ['assistant', 'Hi, this is billing.'],
        ['user', 'I need to cancel my appointment on Friday.'],
      ]);
      expect((await w.details()).assistant_swaps).toMatchObject([{ to: billing, greeting: true }]);
      await call.hangup();
    } finally {
      await w.close();
    }
  });

  it('pipeline → multimodal: the realtime model gets the transcript so far as conversation items', async () => {
    const w = await runnerWorld({ vad, callerWords: ['What are your opening hours?'], realtime: { script: [{ say: 'Hi, this is billing.' }] } });
    try {
      const billing = await w.assistant('multimodal', { initial_message: 'Hi, this is billing.', system_prompt: BILLING });
      await w.assistant(
        'pipeline',
        {
          initial_message: 'Hello.',
          system_prompt: FRONT_DESK,
          tools: [{ type: 'assistant_transfer', data: { assistant_id: billing, message_before_transfer: HANDOVER, speak_transfer_greeting: true } }],
        },
        true,
      );
      w.llm.queue.push({ toolCalls: [{ name: `transfer_to_assistant_${billing}`, arguments: { reason: 'billing question' } }] }, { content: '' });
      const call = await w.call();
      await until(() => w.tts.spoken.includes('Hello.'), 4000, 'front desk greets');
      await say(call, 'utt-opening-hours');
      await until(() => w.realtime.connections.length === 1, 8000, 'realtime model connected');
      const conn = w.realtime.connections[0]!;
      await until(() => conn.responses.length >= 1, 4000, 'greeting asked');
      const session = conn.session as { instructions: string };
      expect(session.instructions).toContain(BILLING);
      expect(session.instructions).not.toContain(FRONT_DESK);
      expect(items(conn.clientEvents)).toEqual([
        ['assistant', 'Hello.'],
        ['user', 'What are your opening hours?'],
        ['assistant', HANDOVER],
      ]);
      // The items came before the greeting was asked for.
      const firstCreate = conn.clientEvents.findIndex((e) => e.type === 'response.create');
      const lastItem = conn.clientEvents.findLastIndex((e) => e.type === 'conversation.item.create');
      expect(lastItem).toBeLessThan(firstCreate);
      expect(conn.responses[0]!.instructions).toContain('Hi, this is billing.');
      await call.hangup();
    } finally {
      await w.close();
    }
  });
});

describe.concurrent('warm_call_transfer on a multimodal call', () => {
  it("the supervisor's briefing is written from the realtime call's transcript", async () => {
    const w = await runnerWorld({
      vad,
      realtime: {
        script: [{ say: 'Hello, thanks for calling Luigi.' }, { say: 'Let me get my supervisor.', calls: [{ name: 'warm_transfer_call', arguments: { reason: 'refund over the limit' } }] }],
        userTranscripts: ['I want a refund for order 42, it arrived broken.'],
      },
    });
    try {
      const front = await w.assistant('multimodal', { initial_message: 'Hello, thanks for calling Luigi.', system_prompt: FRONT_DESK }, true);
      await w.configure(front, {
        initial_message: 'Hello, thanks for calling Luigi.',
        system_prompt: FRONT_DESK,
        tools: [
          {
            type: 'warm_call_transfer',
            data: { supervisor_phone: '+14155550777', outbound_phone_id: w.trunk.phoneNumberId, description: 'refunds', hold_message: 'Hold.', summary_instructions: 'Say the order number first.' },
          },
        ],
      });
      w.summaryLlm.fallback = { content: 'Order 42 arrived broken; the caller wants a refund over the limit.' };
      const call = await w.call();
      await until(() => w.realtime.connections[0]?.responses.length === 1, 4000, 'greeting');
      await new Promise((r) => setTimeout(r, 1500));
      await say(call, 'utt-cancel');
      await until(() => w.carrier.answered.length === 1, 10_000, 'supervisor dialled');
      await until(() => w.summaryLlm.requests.length === 1, 4000, 'briefing written');
      const [system, user] = w.summaryLlm.requests[0]!;
      expect(system!.content).toContain('Say the order number first.');
      expect(user!.content).toContain('Reason for the transfer: refund over the limit');
      expect(user!.content).toContain('Assistant: Hello, thanks for calling Luigi.\nCaller: I want a refund for order 42, it arrived broken.');
      await until(() => w.tts.spoken.some((t) => t.includes('Order 42 arrived broken')), 4000, 'supervisor briefed');
      await call.hangup();
    } finally {
      await w.close();
    }
  });
});
