import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postCallWorld, TRANSCRIPT, evaluationAnswer, type PostCallWorld } from './world.ts';
import { finishCall } from '../../../src/call/post-call/index.ts';

let w: PostCallWorld;
beforeEach(async () => {
  w = await postCallWorld(10);
});
afterEach(() => w.close());

const finish = (asst: Parameters<typeof finishCall>[1]['assistant'], call: Parameters<typeof finishCall>[1]['callRecord'], transcript = TRANSCRIPT) =>
  finishCall(w.deps, { callRecord: call, assistant: asst, transcript, recordingPath: undefined });
const stored = async (id: number) => (await w.t.ctx.repos.calls.getById(id))!.evaluation;

describe('post-call evaluation', () => {
  it('one structured call on the transcript with the assistant model; the answer validated and stored', async () => {
    const asst = await w.assistant();
    w.llm.enqueue(evaluationAnswer({ party_size: '4', booked: 'yes', caller_name: 'Ann', mood: 'happy' }));
    const call = await w.call(asst, 40_000);
    const report = await finish(asst, call);
    expect(report).toMatchObject({ evaluated: true, errors: {} });
    expect(await stored(call.id)).toEqual({ party_size: 4, booked: true, caller_name: 'Ann' });

    const [req] = w.llm.requests;
    expect(req!.model).toBe('gpt-4o'); // llm_model_id 2 in the catalog
    expect(req!.temperature).toBe(0);
    expect(req!.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'record_call_evaluation',
          description: expect.any(String),
          parameters: {
            type: 'object',
            properties: {
              party_size: { type: ['number', 'null'], description: 'How many people the booking is for' },
              booked: { type: ['boolean', 'null'], description: 'Whether a table was booked' },
              caller_name: { type: ['string', 'null'], description: 'The name the caller gave' },
            },
            required: ['party_size', 'booked', 'caller_name'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect(req!.messages[0]!.content).toMatch(/party_size \(number\): How many people/);
    expect(req!.messages[1]!.content).toBe(
      'Transcript:\nAssistant: Hello, Bistro Nova, how can I help?\n' +
        'Caller: A table for four tomorrow at eight, please. My name is Ann.\n' +
        'Assistant: Booked: four people tomorrow at eight, under Ann.',
    );
    // Shown by the calls API too.
    const res = await w.t.call(w.account.key, 'GET', `/user/calls/${call.id}`);
    expect(res.body.evaluation).toEqual({ party_size: 4, booked: true, caller_name: 'Ann' });
    expect(res.body.transcript).toHaveLength(3);
  });

  it('accepts a JSON object answered as text; missing fields are null', async () => {
    const asst = await w.assistant();
    w.llm.enqueue({ content: '{"booked": false}' });
    const call = await w.call(asst, 5_000);
    await finish(asst, call);
    expect(await stored(call.id)).toEqual({ party_size: null, booked: false, caller_name: null });
  });

  it('a realtime assistant evaluates with its chat_llm_fallback_id model', async () => {
    const asst = await w.assistant({ mode: 'multimodal', multimodal_model_id: 1, voice_id: 101, llm_model_id: null, chat_llm_fallback_id: 3 });
    w.llm.enqueue(evaluationAnswer({ party_size: 2, booked: true, caller_name: null }));
    const call = await w.call(asst, 5_000);
    await finish(asst, call);
    expect(w.llm.requests[0]!.model).toBe('gpt-4.1');
  });

  it('a model failure is stored as {error} and the webhook still goes out with it', async () => {
    const asst = await w.assistant();
    w.llm.enqueue({ status: 400 });
    const call = await w.call(asst, 5_000);
    const report = await finish(asst, call);
    expect(report.errors).toEqual({});
    expect(await stored(call.id)).toEqual({ error: expect.stringMatching(/400/) });
    expect(report.webhook).toMatchObject({ sent: true });
    const [row] = await w.t.ctx.repos.outbox.list(w.account.id);
    expect(JSON.parse(row!.payload).data.evaluation).toEqual({ error: expect.stringMatching(/400/) });
  });

  it('an answer without any JSON is an {error}', async () => {
    const asst = await w.assistant();
    w.llm.enqueue({ content: 'I cannot tell.' });
    const call = await w.call(asst, 5_000);
    await finish(asst, call);
    expect(await stored(call.id)).toEqual({ error: 'the model returned no evaluation' });
  });

  it('off, or an empty schema: no model call, evaluation stays null', async () => {
    const off = await w.assistant({ post_call_evaluation: false });
    const empty = await w.assistant({ post_call_schema: [] });
    for (const asst of [off, empty]) {
      const call = await w.call(asst, 5_000);
      expect((await finish(asst, call)).evaluated).toBe(false);
      expect(await stored(call.id)).toBeNull();
    }
    expect(w.llm.requests).toHaveLength(0);
  });

  it('unanswered calls are not evaluated; answered calls where nothing was said get nulls without a model call', async () => {
    const asst = await w.assistant({ send_webhook_only_on_completed: false });
    const unanswered = await w.call(asst, null);
    await finish(asst, unanswered, { turns: [] });
    expect(await stored(unanswered.id)).toBeNull();
    const silent = await w.call(asst, 8_000);
    await finish(asst, silent, { turns: [{ speaker: 'caller', text: ' ', startMs: 0, endMs: 10 }] });
    expect(await stored(silent.id)).toEqual({ party_size: null, booked: null, caller_name: null });
    expect(w.llm.requests).toHaveLength(0);
  });
});
