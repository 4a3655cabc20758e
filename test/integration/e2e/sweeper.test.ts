/**
 * The post-call sweeper on a store as a crashed or busy engine leaves it: records still open
 * from a previous run are closed (at their last heartbeat, else billed the minimum), ended calls without the finished marker
 * are billed and their webhook enqueued exactly once, refused INVITEs and calls the runner owns
 * are left alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { postCallDeps } from '../../../src/call/post-call/index.ts';
import { ORPHAN_END_CAUSE, PostCallSweeper } from '../../../src/call/wiring/sweeper.ts';
import { createLlmRegistry } from '../../../src/providers/llm/registry.ts';
import { testApp, type TestApp } from '../../support/app.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function world(busy: (uuid: string) => boolean = () => false) {
  t = await testApp();
  const account = await t.account(10);
  const events: { url: string; type: string; data: Record<string, any> }[] = [];
  const publisher = { publish: async (_a: number, url: string, type: string, data: Record<string, unknown>) => (events.push({ url, type, data: data as Record<string, any> }), events.length) };
  const postCall = postCallDeps(t.ctx, createLlmRegistry(t.ctx.config), publisher);
  const sweeper = new PostCallSweeper({ store: t.ctx.store, assistants: t.ctx.repos.assistants, postCall, logger: t.ctx.logger, busy });
  const assistant = await t.ctx.repos.assistants.create(account.id, {
    name: 'swept', type: 'outbound', mode: 'pipeline', voice_id: 121, language_id: 1, timezone: 'UTC',
    system_prompt: 'x', llm_model_id: 1, is_webhook_active: true, webhook_url: 'https://hooks.example/calls',
  } as never);
  return { t, account, events, sweeper, assistant };
}

describe('post-call sweeper', () => {
  it('closes records a previous run left open and finishes them once', async () => {
    const { t, account, events, sweeper, assistant } = await world();
    const calls = t.ctx.repos.calls;
    const live = await calls.create({ accountId: account.id, direction: 'outbound', fromNumber: '+1', toNumber: '+2', assistantId: assistant.id, status: 'in-progress' });
    await calls.update(live.id, { answerAt: t.clock.now() + 1000 });
    const ringing = await calls.create({ accountId: account.id, direction: 'outbound', fromNumber: '+1', toNumber: '+3', assistantId: assistant.id, status: 'ringing' });
    const refused = await calls.create({ accountId: account.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', assistantId: assistant.id, status: 'failed', endCause: 'insufficient-balance', endAt: t.clock.now() });
    t.clock.advance(60_000);

    expect(await sweeper.closeOrphans(t.clock.now())).toBe(2);
    expect(await calls.getById(live.id)).toMatchObject({ status: 'completed', endCause: ORPHAN_END_CAUSE });
    expect(await calls.getById(ringing.id)).toMatchObject({ status: 'failed', endCause: ORPHAN_END_CAUSE });
    // Their end is set in the past (answer or INVITE time), so the first sweep takes them.
    expect(await sweeper.sweep()).toBe(2);
    expect(await sweeper.sweep()).toBe(0); // marked: never again
    expect((await calls.getById(live.id))?.costMicros).toBe(100_000); // one minute: the end is unknown
    expect((await calls.getById(ringing.id))?.costMicros).toBe(0);
    expect(events.map((e) => e.data.call.id).sort()).toEqual([live.id, ringing.id].sort());
    expect((await calls.getById(refused.id))?.details?.post_call).toBeUndefined();
    expect(await t.ctx.repos.ledger.balance(account.id)).toBe(10_000_000 - 100_000);
  });

  it('closes a record cut by a crash at its last heartbeat and bills that length, not one minute', async () => {
    const { t, account, events, sweeper, assistant } = await world();
    const calls = t.ctx.repos.calls;
    const live = await calls.create({ accountId: account.id, direction: 'inbound', fromNumber: '+1', toNumber: '+2', assistantId: assistant.id, status: 'in-progress' });
    const answerAt = t.clock.now() + 1_000;
    await calls.update(live.id, { answerAt });
    // Stamped alive 150 s into the call, then the process died.
    t.clock.advance(151_000);
    expect(await calls.markAlive([live.id], t.clock.now())).toBe(1);
    t.clock.advance(600_000);

    expect(await sweeper.closeOrphans(t.clock.now())).toBe(1);
    expect(await calls.getById(live.id)).toMatchObject({ status: 'completed', endCause: ORPHAN_END_CAUSE, endAt: answerAt + 150_000 });
    expect(await sweeper.sweep()).toBe(1);
    expect((await calls.getById(live.id))?.costMicros).toBe(300_000); // 2.5 min: three started minutes
    expect(await t.ctx.repos.ledger.balance(account.id)).toBe(10_000_000 - 300_000);
    expect(events[0]?.data.call).toMatchObject({ duration_s: 150, billed_minutes: 3 });
  });

  it('leaves calls the runner is still finishing to it', async () => {
    const owned = new Set<string>();
    const { t, account, sweeper, assistant } = await world((uuid) => owned.has(uuid));
    const calls = t.ctx.repos.calls;
    const c = await calls.create({ accountId: account.id, direction: 'outbound', fromNumber: '+1', toNumber: '+2', assistantId: assistant.id, status: 'no-answer', endCause: 'no-answer', endAt: t.clock.now() });
    owned.add(c.uuid);
    t.clock.advance(10_000);
    expect(await sweeper.sweep()).toBe(0);
    owned.delete(c.uuid);
    expect(await sweeper.sweep()).toBe(1);
    expect((await calls.getById(c.id))?.details?.post_call).toMatchObject({ attempts: 1, finished_at: expect.any(String) });
  });

  it('finishes a call a provider failure ended (end cause `<kind>: <provider> <reason>`): free before the assistant spoke, charged after', async () => {
    const { t, account, events, sweeper, assistant } = await world();
    const calls = t.ctx.repos.calls;
    const apology = { speaker: 'assistant', kind: 'apology', text: 'Sorry, goodbye.', start_ms: 100, end_ms: 2_000 };
    const greeting = { speaker: 'assistant', kind: 'greeting', text: 'Hello.', start_ms: 0, end_ms: 1_500 };
    const at = t.clock.now();
    const common = { accountId: account.id, direction: 'inbound' as const, fromNumber: '+1', toNumber: '+2', assistantId: assistant.id, status: 'failed', answerAt: at, endAt: at + 5_000 };
    const early = await calls.create({ ...common, endCause: 'stt-unavailable: deepgram 401', transcript: [apology] });
    const late = await calls.create({ ...common, endCause: 'realtime-dropped: openai-realtime 1011', transcript: [greeting, apology] });
    t.clock.advance(60_000);
    expect(await sweeper.sweep()).toBe(2);
    expect(await sweeper.sweep()).toBe(0);
    expect((await calls.getById(early.id))?.costMicros).toBe(0);
    expect((await calls.getById(late.id))?.costMicros).toBe(100_000);
    expect(await t.ctx.repos.ledger.balance(account.id)).toBe(10_000_000 - 100_000);
    expect(events.find((e) => e.data.call.id === early.id)?.data.call).toMatchObject({ status: 'failed', end_cause: 'stt-unavailable: deepgram 401', billed_minutes: 0 });
  });
});
