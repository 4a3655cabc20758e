import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callCharges, postCallWorld, TRANSCRIPT, evaluationAnswer, type PostCallWorld } from './world.ts';
import { finishCall } from '../../../src/call/post-call/index.ts';
import { CALL_PRICE_PER_MINUTE_MICROS as PRICE } from '../../../src/billing/prices.ts';
import { admit } from '../../../src/call/inbound-router.ts';
import { dollarsToMicros } from '../../../src/util/money.ts';

let w: PostCallWorld;
beforeEach(async () => {
  w = await postCallWorld(10);
});
afterEach(() => w.close());

const START = dollarsToMicros(10);

describe('call billing per started minute', () => {
  it.each([
    ['unanswered (0 s)', null, 0],
    ['1 s', 1_000, 1],
    ['60 s', 60_000, 1],
    ['61 s', 61_000, 2],
  ])('%s → %i minute(s), booked in the ledger and on the record', async (_n, answeredFor, minutes) => {
    const asst = await w.assistant({ post_call_evaluation: false, is_webhook_active: false });
    const call = await w.call(asst, answeredFor);
    const report = await finishCall(w.deps, { callRecord: call, assistant: asst, transcript: null, recordingPath: undefined });
    expect(report.errors).toEqual({});
    expect(report.billing).toEqual({ minutes, costMicros: minutes * PRICE, charged: minutes > 0 });
    expect((await w.t.ctx.repos.calls.getById(call.id))!.costMicros).toBe(minutes * PRICE);
    expect(await w.t.ctx.repos.ledger.balance(w.account.id)).toBe(START - minutes * PRICE);
    expect(callCharges(w.t, w.account.id)).toEqual(minutes > 0 ? [{ amount_micros: -minutes * PRICE, reference: `call:${call.uuid}` }] : []);
  });

  it('the cost shows on GET /user/calls/{id} in dollars', async () => {
    const call = await w.call(null, 125_000); // 3 started minutes, no assistant (diagnostics)
    await finishCall(w.deps, { callRecord: call, assistant: null, transcript: null, recordingPath: undefined });
    const res = await w.t.call(w.account.key, 'GET', `/user/calls/${call.id}`);
    expect(res.body).toMatchObject({ cost: 0.3, duration_seconds: 125 });
  });
});

describe('finishing twice', () => {
  it('sequentially: one charge, one evaluation, one event', async () => {
    const asst = await w.assistant();
    w.llm.enqueue(evaluationAnswer({ party_size: 4, booked: true, caller_name: 'Ann' }));
    const call = await w.call(asst, 90_000);
    const input = { callRecord: call, assistant: asst, transcript: TRANSCRIPT, recordingPath: undefined };
    const first = await finishCall(w.deps, input);
    const second = await finishCall(w.deps, input);
    expect(first).toMatchObject({ billing: { charged: true, minutes: 2 }, evaluated: true, webhook: { sent: true } });
    expect(second).toMatchObject({ billing: { charged: false, costMicros: 2 * PRICE }, evaluated: false, webhook: { sent: false, reason: 'already enqueued' } });
    expect(callCharges(w.t, w.account.id)).toHaveLength(1);
    expect(await w.t.ctx.repos.ledger.balance(w.account.id)).toBe(START - 2 * PRICE);
    expect(w.llm.requests).toHaveLength(1);
    expect(await w.t.ctx.repos.outbox.list(w.account.id)).toHaveLength(1);
  });

  it('concurrently: the two calls share one run', async () => {
    const asst = await w.assistant();
    w.llm.enqueue({ ...evaluationAnswer({ party_size: 4, booked: true, caller_name: 'Ann' }), delayMs: 50 });
    const call = await w.call(asst, 30_000);
    const input = { callRecord: call, assistant: asst, transcript: TRANSCRIPT, recordingPath: undefined };
    const [a, b] = await Promise.all([finishCall(w.deps, input), finishCall(w.deps, input)]);
    expect(a).toBe(b);
    expect(callCharges(w.t, w.account.id)).toHaveLength(1);
    expect(w.llm.requests).toHaveLength(1);
    expect(await w.t.ctx.repos.outbox.list(w.account.id)).toHaveLength(1);
  });

  it('a second engine instance (fresh deps, as after a restart) does not charge again', async () => {
    const asst = await w.assistant({ post_call_evaluation: false });
    const call = await w.call(asst, 10_000);
    await finishCall(w.deps, { callRecord: call, assistant: asst, transcript: null, recordingPath: undefined });
    const again = await finishCall({ ...w.deps }, { callRecord: call, assistant: asst, transcript: null, recordingPath: undefined });
    expect(again.billing).toEqual({ minutes: 1, costMicros: PRICE, charged: false });
    expect(callCharges(w.t, w.account.id)).toHaveLength(1);
    expect(await w.t.ctx.repos.outbox.list(w.account.id)).toHaveLength(1);
  });

  it('repairs cost_micros from the ledger when an earlier finish stopped after charging', async () => {
    const call = await w.call(null, 10_000);
    await w.t.ctx.repos.ledger.adjust(w.account.id, -PRICE, 'call', `call:${call.uuid}`);
    const report = await finishCall(w.deps, { callRecord: call, assistant: null, transcript: null, recordingPath: undefined });
    expect(report.billing).toMatchObject({ charged: false, costMicros: PRICE });
    expect((await w.t.ctx.repos.calls.getById(call.id))!.costMicros).toBe(PRICE);
    expect(callCharges(w.t, w.account.id)).toHaveLength(1);
  });
});

describe('balance too low for the call already made', () => {
  it('books the full cost, the balance goes negative, and the next call is refused at admission', async () => {
    await w.t.ctx.repos.ledger.setBalance(w.account.id, 50_000); // half a minute's worth
    const call = await w.call(null, 150_000); // 3 minutes
    await finishCall(w.deps, { callRecord: call, assistant: null, transcript: null, recordingPath: undefined });
    expect(await w.t.ctx.repos.ledger.balance(w.account.id)).toBe(50_000 - 3 * PRICE);
    const facts = { diagnostic: false, phoneNumberId: 1, assistantId: 1, activeForAccount: 0, activeForTrunk: 0, maxPerAccount: 5, maxPerTrunk: 5 };
    expect(admit({ ...facts, balanceMicros: await w.t.ctx.repos.ledger.balance(w.account.id), minBalanceMicros: PRICE })).toMatchObject({ ok: false, status: 402 });
  });
});

describe('failed calls are charged only when the assistant spoke', () => {
  const apology = { speaker: 'assistant', kind: 'apology', text: "I'm sorry, I'm having technical trouble and have to end this call.", start_ms: 200, end_ms: 4_000 };
  const greeting = { speaker: 'assistant', kind: 'greeting', text: 'Hello, Bistro Nova, how can I help?', start_ms: 0, end_ms: 2_000 };
  const finish = async (call: Awaited<ReturnType<PostCallWorld['call']>>) =>
    finishCall(w.deps, { callRecord: call, assistant: null, transcript: null, recordingPath: undefined });

  it('a provider failure before the assistant spoke (only the apology heard) costs nothing and books nothing', async () => {
    const call = await w.call(null, 5_000, { status: 'failed', endCause: 'stt-unavailable: deepgram 401', transcript: [apology] });
    const report = await finish(call);
    expect(report.billing).toEqual({ minutes: 0, costMicros: 0, charged: false });
    expect((await w.t.ctx.repos.calls.getById(call.id))!.costMicros).toBe(0);
    expect(callCharges(w.t, w.account.id)).toEqual([]);
    expect(await w.t.ctx.repos.ledger.balance(w.account.id)).toBe(START);
  });

  it('a greeting cut before its audio was heard (no time played) does not count as speaking', async () => {
    // As the turn book records a greeting cut at its first frame: its first sentence, no time played.
    const cut = { ...greeting, end_ms: greeting.start_ms, interrupted: true, full_text: greeting.text };
    const call = await w.call(null, 3_000, { status: 'failed', endCause: 'realtime-unavailable: openai 401', transcript: [cut, apology] });
    expect((await finish(call)).billing).toEqual({ minutes: 0, costMicros: 0, charged: false });
  });

  it('a call that failed after the assistant spoke is charged as usual', async () => {
    const call = await w.call(null, 70_000, { status: 'failed', endCause: 'realtime-dropped: openai 1011', transcript: [greeting, apology] });
    expect((await finish(call)).billing).toEqual({ minutes: 2, costMicros: 2 * PRICE, charged: true });
    expect(callCharges(w.t, w.account.id)).toEqual([{ amount_micros: -2 * PRICE, reference: `call:${call.uuid}` }]);
  });

  it('a failed call whose transcript was never stored (the process died with it) keeps its charge', async () => {
    const call = await w.call(null, 10_000, { status: 'failed', endCause: 'engine-restart', transcript: null });
    expect((await finish(call)).billing).toEqual({ minutes: 1, costMicros: PRICE, charged: true });
  });

  it('a completed call with only an apology in it is still charged (the failure did not end it)', async () => {
    const call = await w.call(null, 10_000, { transcript: [apology] });
    expect((await finish(call)).billing).toEqual({ minutes: 1, costMicros: PRICE, charged: true });
  });

  it.each(['no-answer', 'busy', 'declined', 'failed'])('a call never answered (%s) costs nothing', async (status) => {
    const call = await w.call(null, null, { status, endCause: status });
    expect((await finish(call)).billing).toEqual({ minutes: 0, costMicros: 0, charged: false });
    expect(callCharges(w.t, w.account.id)).toEqual([]);
  });
});
