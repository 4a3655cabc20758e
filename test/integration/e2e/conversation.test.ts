/**
 * A whole call as a caller lives it, over loopback SIP and real RTP into the real engine:
 * greeting → question → spoken answer → barge-in → hang-up, then the record (status, transcript
 * with latency parts, one minute charged), /metrics and the signed post-call webhook.
 *
 * Timing is judged where the caller is: packet arrival at the phone. The barge-in bound compares
 * the last audible packet with the moment the engine decided the interruption (its
 * interruptions counter, stamped on the same performance.now() clock, same process).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../../src/webhooks/signing.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { fixture8k, firstAudible, lastAudible, listen, speak, startWorld, waitQuiet, waitUntil, AUDIBLE_RMS, type World } from './world.ts';

const ANSWER =
  'We are open from nine in the morning to five in the evening, Monday to Friday. ' +
  'On Saturdays we open at ten and close at four. On Sundays we are closed, but you can book online at any time.';

/** Frame time plus one frame for the packet already on the wire when the decision fell. */
const BARGE_IN_BOUND_MS = 40;

let w: World;
let phone: TestPhone;
const decisions: number[] = [];

beforeAll(async () => {
  w = await startWorld({ deepgram: { script: ['What are your opening hours?', 'Actually, can I book a table for two tomorrow?'] } });
  w.chat.defaultResponse = { content: ANSWER };
  phone = await TestPhone.create();
  const counter = w.engine.calls.engineContext.metrics!.interruptions;
  const inc = counter.inc.bind(counter);
  counter.inc = ((labels?: { taken?: string }) => {
    if (labels?.taken === 'true') decisions.push(performance.now());
    return inc(labels as never);
  }) as typeof counter.inc;
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await w?.close();
});

describe('a pipeline call end to end over SIP/RTP', () => {
  it('greets, answers a question, stops at barge-in, and finishes the call record', async () => {
    const secretRow = await w.engine.ctx.repos.accounts.get(w.account.id);
    await w.assistant({ is_webhook_active: true, webhook_url: `${w.sink.url}/hooks/calls`, send_webhook_only_on_completed: true });

    const call = await phone.dial(w.target());
    const heard = listen(call);
    expect((await call.outcome).status).toBe(200);
    const answeredAt = performance.now();

    // Greeting: audible within a bound of the answer (TTS stand-in first byte + one pacing lead).
    await waitUntil(() => firstAudible(heard, answeredAt) !== undefined, 4000, 'greeting');
    const greetingAt = firstAudible(heard, answeredAt)!.at;
    expect(greetingAt - answeredAt).toBeLessThan(2500);
    await waitQuiet(heard, answeredAt, 800, 15_000);

    // Question → answer: the LLM stand-in's reply, spoken by the TTS stand-in.
    await speak(call, fixture8k('utt-opening-hours'));
    const askedAt = performance.now();
    await waitUntil(() => firstAudible(heard, askedAt) !== undefined, 6000, 'answer');
    const answerAt = firstAudible(heard, askedAt)!.at;
    const asked = w.chat.requests.at(-1)!;
    expect(asked.messages.at(-1), JSON.stringify(w.chat.requests.map((r) => r.messages.at(-1)))).toMatchObject({
      role: 'user',
      content: 'What are your opening hours?',
    });

    // Barge-in 1.5 s into the answer (it runs about 10 s).
    await waitUntil(() => performance.now() - answerAt > 1500, 3000, 'answer playing');
    const bargeStarted = performance.now();
    const barge = speak(call, fixture8k('utt-book-table'));
    await waitUntil(() => decisions.length > 0, 4000, 'interruption decision');
    const decidedAt = decisions[0]!;
    expect(decidedAt).toBeGreaterThan(bargeStarted);
    await new Promise((r) => setTimeout(r, 1000));
    const lastBeforeCut = lastAudible(heard.filter((a) => a.at <= decidedAt + 1000), bargeStarted);
    const stopMs = lastBeforeCut ? lastBeforeCut.at - decidedAt : 0;
    expect(stopMs).toBeLessThanOrEqual(BARGE_IN_BOUND_MS);
    const after = heard.filter((a) => a.at > decidedAt + BARGE_IN_BOUND_MS && a.at <= decidedAt + 1000);
    expect(after.length).toBeGreaterThan(30); // media keeps flowing (silence), it is not a dead leg
    expect(after.every((a) => a.rms < AUDIBLE_RMS)).toBe(true);
    await barge;
    // The caller's new turn gets its own reply before they hang up.
    const bargeEnded = performance.now();
    await waitUntil(() => firstAudible(heard, bargeEnded) !== undefined, 6000, 'reply to the barge-in');
    await new Promise((r) => setTimeout(r, 500));
    await call.hangup();

    const list = await w.api('GET', '/user/calls?limit=1');
    const id = list.body[0].id as number;
    const rec = await w.waitCall(id, (c) => c.status === 'completed' && c.cost > 0 && (c.transcript?.length ?? 0) > 0);
    expect(rec).toMatchObject({ direction: 'inbound', status: 'completed', cost: 0.1, end_cause: 'remote-hangup' });
    const transcript = rec.transcript as Record<string, any>[];
    expect(new Set(transcript.map((t) => t.speaker))).toEqual(new Set(['assistant', 'caller']));
    expect(transcript[0]).toMatchObject({ speaker: 'assistant', kind: 'greeting', text: 'Hello, thanks for calling Luigi. How can I help?' });
    expect(transcript.find((t) => t.speaker === 'caller')).toMatchObject({ text: 'What are your opening hours?' });
    const cut = transcript.find((t) => t.interrupted);
    expect(cut).toMatchObject({ speaker: 'assistant', kind: 'reply', full_text: ANSWER });
    expect(ANSWER.startsWith(cut!.text.replace(/…$/, '').trim().slice(0, 10))).toBe(true);
    const reply = transcript.find((t) => t.kind === 'reply')!;
    expect(reply.latency).toMatchObject({
      endpointing_ms: expect.any(Number),
      llm_first_token_ms: expect.any(Number),
      tts_first_audio_ms: expect.any(Number),
      first_frame_out_ms: expect.any(Number),
      total_ms: expect.any(Number),
    });

    // The per-turn histograms are on the API's /metrics.
    const metrics = await (await fetch(`${w.engine.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/switchboard_turn_latency_seconds_count\{part="first_frame_out"\} [1-9]/);
    expect(metrics).toMatch(/switchboard_interruptions_total\{taken="true"\} [1-9]/);

    // The signed post-call webhook.
    await waitUntil(() => w.sink.received.some((d) => d.path === '/hooks/calls'), 10_000, 'webhook');
    const hook = w.sink.received.find((d) => d.path === '/hooks/calls')!;
    const headers = Object.fromEntries(Object.entries(hook.headers).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
    expect(verify(secretRow!.webhookSecret, headers, hook.body, Math.floor(Date.now() / 1000))).toBe(true);
    const body = JSON.parse(hook.body);
    expect(body).toMatchObject({ type: 'call.completed', data: { call: { id, status: 'completed', billed_minutes: 1 } } });
    expect(body.data.transcript.length).toBe(transcript.length);
    // Marked finished, so the sweeper will not take it again.
    const stored = await w.engine.ctx.repos.calls.getById(id);
    expect(stored?.details?.post_call).toMatchObject({ attempts: 1, finished_at: expect.any(String) });
  }, 90_000);
});
