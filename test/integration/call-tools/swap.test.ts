import { afterEach, describe, expect, it } from 'vitest';
import { until, world, type World } from './world.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

async function setup(speakGreeting: boolean): Promise<{ w: World; target: number }> {
  const wd = await world();
  const target = await wd.h.assistant(null, { initial_message: 'Hi, this is billing.', system_prompt: 'You are billing.' });
  await wd.h.ctx.store.db
    .updateTable('assistants')
    .set({
      config: JSON.stringify({
        initial_message: 'Hello.',
        tools: [{ type: 'assistant_transfer', data: { assistant_id: target, message_before_transfer: 'Let me pass you to billing.', speak_transfer_greeting: speakGreeting } }],
      }),
    })
    .where('id', '!=', target)
    .execute();
  wd.llm.queue.push({ toolCalls: [{ name: `transfer_to_assistant_${target}`, arguments: { reason: 'billing' } }] }, { content: '' }, { content: 'Billing here, what is the order number?' });
  return { w: wd, target };
}

describe('assistant_transfer over SIP', () => {
  for (const greet of [true, false]) {
    it(`the call continues under the target assistant ${greet ? 'with' : 'without'} its greeting`, async () => {
      const s = await setup(greet);
      w = s.w;
      const call = await w.call();
      await until(() => w!.runs.length === 2, 5000, 'second engine run');
      expect(w.runs[1]).toEqual({ assistantId: s.target, greeting: greet ? 'Hi, this is billing.' : '' });
      await until(() => w!.tts.spoken.includes('Billing here, what is the order number?'), 3000, 'target speaks');
      const spoken = w.tts.spoken;
      expect(spoken.indexOf('Let me pass you to billing.')).toBeLessThan(spoken.indexOf('Billing here, what is the order number?'));
      expect(spoken.includes('Hi, this is billing.')).toBe(greet);
      // The target's turn ran with the target's prompt and without the transfer tool.
      const last = w.llm.requests.at(-1)!;
      expect(String(last[0]?.content)).toContain('You are billing.');
      // …in the same conversation: what was said before the swap, the handover line, then its own turn.
      expect(last.slice(1).map((m) => [m.role, m.content])).toEqual([
        ['assistant', 'Hello.'],
        ['user', 'I need help.'],
        ['assistant', 'Let me pass you to billing.'],
        ...(greet ? [['assistant', 'Hi, this is billing.']] : []),
        ['user', 'I need help.'],
      ]);
      expect(call.dialog!.isEnded).toBe(false);
      expect((await w.details()).assistant_swaps).toMatchObject([{ to: s.target, greeting: greet }]);
      await call.hangup();
    });
  }
});
