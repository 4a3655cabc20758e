/**
 * Built-in voice tools through the real engine (startEngine from src/main.ts): calls run under
 * call control (the Conductor), so a pipeline assistant's dtmf_input and end_call tools reach the
 * call. The LLM stand-in answers the caller's question by pressing keys, then says goodbye and
 * calls end_call: the phone receives the RFC 4733 digits, hears the goodbye, then gets a BYE.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPhone } from '../../support/test-phone.ts';
import { fixture8k, firstAudible, listen, speak, startWorld, waitQuiet, waitUntil, type World } from './world.ts';

let w: World;
let phone: TestPhone;

beforeAll(async () => {
  w = await startWorld({ deepgram: { script: ['What are your opening hours?'] } });
  phone = await TestPhone.create();
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await w?.close();
});

describe('voice tools on a real call', () => {
  it('dtmf_input sends RFC 4733 digits; end_call hangs up after the goodbye', async () => {
    const assistantId = await w.assistant({
      initial_message: 'Hello.',
      tools: [
        { type: 'dtmf_input', data: { description: 'Press keys in the phone menu' } },
        { type: 'end_call', data: { description: 'When the caller is done' } },
      ],
    });
    w.chat.enqueue(
      { toolCalls: [{ id: 'call_dtmf', name: 'send_dtmf', arguments: { digits: '1 2#' } }] },
      { content: 'Goodbye then!', toolCalls: [{ id: 'call_end', name: 'end_call', arguments: { reason: 'done' } }] },
      { content: '' },
    );
    const call = await phone.dial(w.target());
    const heard = listen(call);
    expect((await call.outcome).status).toBe(200);
    const t0 = performance.now();
    await waitUntil(() => firstAudible(heard, t0) !== undefined, 4000, 'greeting');
    await waitQuiet(heard, t0, 600, 10_000);

    await speak(call, fixture8k('utt-opening-hours'));
    const t1 = performance.now();
    await waitUntil(() => call.rtp.dtmfHeard.length >= 3, 8000, 'digits');
    expect(call.rtp.dtmfHeard).toEqual(['1', '2', '#']);

    // The goodbye is heard, then the engine hangs up by itself.
    expect(await call.ended).toBe('remote-bye');
    expect(firstAudible(heard, t1)).toBeDefined();
    const offered = w.chat.requests[0]!.tools?.map((t) => t.function.name) ?? [];
    expect(offered).toEqual(expect.arrayContaining(['send_dtmf', 'end_call']));
    const toolReply = w.chat.requests[1]!.messages.find((m) => m.role === 'tool');
    expect(JSON.parse(String(toolReply?.content))).toEqual({ sent: '12#' });

    const id = (await w.api('GET', `/user/calls?limit=1&assistant_id=${assistantId}`)).body[0].id as number;
    const rec = await w.waitCall(id, (c) => c.status === 'completed');
    const text = JSON.stringify(rec.transcript ?? rec);
    expect(text).toContain('Goodbye then!');
    const row = await w.engine.ctx.repos.calls.getById(id);
    expect(row?.endCause).toBe('local-hangup');
    expect((row?.details as Record<string, any>).dtmf_sent[0].digits).toBe('12#');
  }, 60_000);
});
