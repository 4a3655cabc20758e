import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { postCallWorld, TRANSCRIPT, evaluationAnswer, PUBLIC_URL, type PostCallWorld } from './world.ts';
import { finishCall } from '../../../src/call/post-call/index.ts';
import { verify } from '../../../src/webhooks/signing.ts';
import { DeliveryWorker } from '../../../src/webhooks/delivery.ts';
import { outboundOf } from '../../../src/net/outbound/index.ts';
import type { AssistantRecord } from '../../../src/store/repos/assistants.ts';
import type { Call } from '../../../src/store/repos/calls.ts';

let w: PostCallWorld;
beforeEach(async () => {
  w = await postCallWorld(10);
});
afterEach(() => w.close());

const finish = (asst: AssistantRecord, call: Call, recordingPath?: string) =>
  finishCall(w.deps, { callRecord: call, assistant: asst, transcript: TRANSCRIPT, recordingPath });
const events = async () => (await w.t.ctx.repos.outbox.list(w.account.id)).map((r) => ({ ...r, body: JSON.parse(r.payload) }));
const headersOf = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)]));

describe('which calls send the post-call webhook', () => {
  it('nothing when is_webhook_active is off', async () => {
    const asst = await w.assistant({ is_webhook_active: false, post_call_evaluation: false });
    expect((await finish(asst, await w.call(asst, 5_000))).webhook).toEqual({ sent: false, reason: 'webhook not active' });
    expect(await events()).toEqual([]);
  });

  it('send_webhook_only_on_completed (default): completed sent, no-answer/busy/failed/canceled skipped', async () => {
    const asst = await w.assistant({ post_call_evaluation: false });
    await finish(asst, await w.call(asst, 5_000));
    for (const status of ['no-answer', 'busy', 'canceled']) await finish(asst, await w.call(asst, null, { status }));
    await finish(asst, await w.call(asst, 5_000, { status: 'failed', endCause: 'error' }));
    const sent = await events();
    expect(sent.map((e) => e.body.data.call.status)).toEqual(['completed']);
  });

  it('with send_webhook_only_on_completed off every finished call is sent, with its status', async () => {
    const asst = await w.assistant({ post_call_evaluation: false, send_webhook_only_on_completed: false });
    await finish(asst, await w.call(asst, null, { status: 'no-answer' }));
    await finish(asst, await w.call(asst, null, { status: 'busy', endCause: 'busy', direction: 'outbound' }));
    const sent = await events();
    expect(sent.map((e) => [e.eventType, e.body.data.call.status, e.body.data.call.cost])).toEqual([
      ['call.completed', 'no-answer', 0],
      ['call.completed', 'busy', 0],
    ]);
  });

  it('disable-inbound-webhook stops inbound call events', async () => {
    const asst = await w.assistant({ post_call_evaluation: false });
    w.t.clock.advance(600);
    expect((await w.t.call(w.account.key, 'POST', '/user/assistants/disable-inbound-webhook', { assistant_id: asst.id })).status).toBe(200);
    const updated = (await w.t.ctx.repos.assistants.getById(asst.id))!;
    expect((await finish(updated, await w.call(updated, 5_000))).webhook).toEqual({ sent: false, reason: 'inbound webhook disabled' });
  });

  it('recording_url only with include_recording_in_webhook and an existing recording', async () => {
    const withRec = await w.assistant({ post_call_evaluation: false, record: true });
    const noRec = await w.assistant({ post_call_evaluation: false, record: true, include_recording_in_webhook: false });
    const a = await w.call(withRec, 5_000);
    await finish(withRec, a, w.recording(a));
    const b = await w.call(noRec, 5_000);
    await finish(noRec, b, w.recording(b));
    const c = await w.call(withRec, 5_000);
    await finish(withRec, c, `${w.dataDir}/recordings/${c.uuid}.wav`); // never written
    const urls = (await events()).map((e) => e.body.data.recording_url);
    expect(urls).toEqual([`${PUBLIC_URL}/api/user/calls/${a.id}/recording`, null, null]);
    // No tape on these records (the call runner puts its path in details.tape): no tape_url.
    expect((await events()).map((e) => e.body.data.tape_url)).toEqual([null, null, null]);
    // The URL works: the record points at the file, and the route serves it.
    const res = await w.t.app.inject({ method: 'GET', url: `/api/user/calls/${a.id}/recording`, headers: { authorization: `Bearer ${w.account.key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('audio/wav');
    expect((await w.t.ctx.repos.calls.getById(a.id))!.recordingPath).toBe(`recordings/${a.uuid}.wav`);
  });
});

describe('the call.completed event', () => {
  it('carries the record, transcript, evaluation and cost, as documented in docs/WEBHOOKS.md', async () => {
    const asst = await w.assistant({ record: true });
    w.llm.enqueue(evaluationAnswer({ party_size: 4, booked: true, caller_name: 'Ann' }));
    const call = await w.call(asst, 61_000, { variables: { customer_name: 'Ann' } });
    await finish(asst, call, w.recording(call));
    const [event] = await events();
    expect(event!.eventType).toBe('call.completed');
    expect(event!.url).toBe(`${w.sink.url}/calls`);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(event!.body).toEqual({
      type: 'call.completed',
      timestamp: iso(w.t.clock.now()),
      data: {
        call: {
          id: call.id,
          uuid: call.uuid,
          direction: 'inbound',
          from_number: '+15550001111',
          to_number: '+15550002222',
          status: 'completed',
          end_cause: 'remote-hangup',
          started_at: iso(call.inviteAt),
          answered_at: iso(call.answerAt!),
          ended_at: iso(call.endAt!),
          duration_s: 61,
          billed_minutes: 2,
          cost: 0.2,
          cost_micros: 200_000,
          campaign_id: null,
          lead_id: null,
          variables: { customer_name: 'Ann' },
        },
        assistant: { id: asst.id, uuid: asst.uuid, name: 'Bistro Nova' },
        transcript: [
          { speaker: 'assistant', text: 'Hello, Bistro Nova, how can I help?', start_ms: 0, end_ms: 2_000 },
          { speaker: 'caller', text: 'A table for four tomorrow at eight, please. My name is Ann.', start_ms: 2_500, end_ms: 6_000 },
          { speaker: 'assistant', text: 'Booked: four people tomorrow at eight, under Ann.', start_ms: 6_400, end_ms: 9_000 },
        ],
        evaluation: { party_size: 4, booked: true, caller_name: 'Ann' },
        recording_url: `${PUBLIC_URL}/api/user/calls/${call.id}/recording`,
        tape_url: null,
      },
    });
  });

  it('a failing receiver gets retries with backoff, one webhook-id, and a signature that verifies', async () => {
    const asst = await w.assistant({ post_call_evaluation: false });
    await finish(asst, await w.call(asst, 5_000));
    w.sink.failFirst = 2;
    await w.delivery.runDue();
    const [row] = await w.t.ctx.repos.outbox.list(w.account.id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, lastError: 'HTTP 500', nextAttemptAt: w.t.clock.now() + 5_000 });
    await w.delivery.runDue(); // not due yet
    expect(w.sink.received).toHaveLength(1);
    w.t.clock.advance(5_000);
    await w.delivery.runDue();
    expect(await w.t.ctx.repos.outbox.get(row!.id)).toMatchObject({ status: 'pending', attempts: 2, nextAttemptAt: w.t.clock.now() + 10_000 });
    w.t.clock.advance(10_000);
    await w.delivery.runDue();
    expect(await w.t.ctx.repos.outbox.get(row!.id)).toMatchObject({ status: 'delivered', attempts: 3 });

    expect(w.sink.received.map((d) => d.status)).toEqual([500, 500, 200]);
    expect(new Set(w.sink.received.map((d) => d.headers['webhook-id']))).toEqual(new Set([`msg_${row!.id}`]));
    expect(new Set(w.sink.received.map((d) => d.body)).size).toBe(1); // the same bytes every time
    const last = w.sink.received.at(-1)!;
    expect(last.path).toBe('/calls');
    expect(last.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const secret = (await w.t.ctx.repos.accounts.get(w.account.id))!.webhookSecret;
    const now = Math.floor(w.t.clock.now() / 1000);
    const headers = headersOf(last.headers);
    expect(verify(secret, headers, last.body, now)).toBe(true);
    expect(verify(secret, headers, last.body.replace('completed', 'tampered!'), now)).toBe(false);
    expect(verify(secret, headers, last.body, now + 3_600)).toBe(false); // replayed an hour later
    expect(JSON.parse(last.body).type).toBe('call.completed');
  });

  it('a restart picks up the pending event: a fresh worker on the same store delivers it', async () => {
    const asst = await w.assistant({ post_call_evaluation: false });
    const call = await w.call(asst, 5_000);
    await finish(asst, call);
    w.sink.failFirst = 1;
    await w.delivery.runDue(); // the old process tried once, then went away
    await w.delivery.stop();
    expect((await events())[0]).toMatchObject({ status: 'pending', attempts: 1 });

    const worker = new DeliveryWorker({
      outbox: w.t.ctx.repos.outbox,
      secretFor: async (id) => (await w.t.ctx.repos.accounts.get(id))?.webhookSecret,
      clock: w.t.clock,
      logger: w.t.ctx.logger,
      fetch: outboundOf(w.t.ctx).fetch,
    });
    w.t.clock.advance(5_000); // the retry falls due while nothing runs
    worker.start(); // picks up pending rows on its first tick
    w.t.clock.advance(0);
    await vi.waitFor(() => expect(w.sink.received).toHaveLength(2));
    await worker.stop();
    const [event] = await events();
    expect(event).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(JSON.parse(w.sink.received[1]!.body).data.call.uuid).toBe(call.uuid);
    // Finishing the call again after the restart enqueues nothing new.
    await finishCall({ ...w.deps }, { callRecord: call, assistant: asst, transcript: TRANSCRIPT, recordingPath: undefined });
    expect(await events()).toHaveLength(1);
  });
});

describe('tape_url', () => {
  it('names the call tape with the recording, under include_recording_in_webhook', async () => {
    const withRec = await w.assistant({ post_call_evaluation: false, record: true });
    const noRec = await w.assistant({ post_call_evaluation: false, record: true, include_recording_in_webhook: false });
    const taped = async (asst: AssistantRecord) => {
      const call = await w.call(asst, 5_000);
      await w.t.ctx.repos.calls.update(call.id, { details: { tape: `recordings/${call.uuid}.tape.json` } });
      const fresh = (await w.t.ctx.repos.calls.getById(call.id))!;
      await finish(asst, fresh, w.recording(fresh));
      return fresh;
    };
    const a = await taped(withRec);
    await taped(noRec);
    const tapes = (await events()).map((e) => e.body.data.tape_url);
    expect(tapes).toEqual([`${PUBLIC_URL}/api/user/calls/${a.id}/tape`, null]);
  });
});
