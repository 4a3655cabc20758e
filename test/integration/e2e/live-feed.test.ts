/**
 * The live call feed and hang-up over the API, on a real call: a test phone calls over loopback
 * SIP/RTP into the real engine while an HTTP client reads GET /api/user/calls/events with the
 * account's key. It sees the call start, the greeting and the caller's words as transcript lines,
 * the engine's VAD and end-of-turn events, then hangs the call up with
 * POST /api/user/calls/{id}/hangup: the phone gets a BYE, the feed the ended record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseParser } from '../../../console/src/live/sse.ts';
import { MAX_STREAMS_PER_ACCOUNT } from '../../../src/api/routes/calls-live.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { fixture8k, speak, startWorld, waitUntil, type World } from './world.ts';

let w: World;
let phone: TestPhone;

beforeAll(async () => {
  w = await startWorld({ deepgram: { script: ['What are your opening hours?'] } });
  w.chat.defaultResponse = { content: 'We are open from nine to five.' };
  phone = await TestPhone.create();
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await w?.close();
});

interface Stream {
  status: number;
  events: { event: string; data: any }[];
  close(): void;
}

async function openStream(key: string | undefined, query = ''): Promise<Stream> {
  const ctl = new AbortController();
  const res = await fetch(`${w.engine.httpUrl}/api/user/calls/events${query}`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
    signal: ctl.signal,
  });
  const stream: Stream = { status: res.status, events: [], close: () => ctl.abort() };
  if (res.ok) {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    void (async () => {
      try {
        for await (const chunk of res.body!) {
          for (const e of parser.push(decoder.decode(chunk as Uint8Array, { stream: true }))) stream.events.push({ event: e.event, data: JSON.parse(e.data) });
        }
      } catch {
        // aborted by close()
      }
    })();
  } else {
    await res.text();
  }
  return stream;
}

describe('GET /user/calls/events and POST /user/calls/{id}/hangup', () => {
  it('streams a live call’s record, transcript and timeline, and hangs it up', async () => {
    await w.assistant({});
    const feed = await openStream(w.account.key);
    expect(feed.status).toBe(200);
    const other = await w.engine.ctx.repos.accounts.create('someone else');
    const otherKey = await w.engine.ctx.repos.accounts.createKey(other.id);
    const otherFeed = await openStream(otherKey);

    const call = await phone.dial(w.target());
    expect((await call.outcome).status).toBe(200);
    await waitUntil(() => feed.events.some((e) => e.event === 'call' && e.data.status === 'in-progress'), 5000, 'call answered on the feed');
    const callId = feed.events.find((e) => e.event === 'call')!.data.id as number;

    // The greeting arrives as a transcript line in the record's own shape.
    await waitUntil(() => feed.events.some((e) => e.event === 'transcript' && e.data.entry.kind === 'greeting'), 8000, 'greeting line');
    const greeting = feed.events.find((e) => e.event === 'transcript')!.data;
    expect(greeting).toMatchObject({ call_id: callId, entry: { speaker: 'assistant', kind: 'greeting' } });
    expect(typeof greeting.entry.start_ms).toBe('number');

    // A feed opened now for this call only starts from a snapshot of it.
    const late = await openStream(w.account.key, `?call_id=${callId}`);
    await waitUntil(() => late.events.some((e) => e.event === 'call'), 3000, 'snapshot');
    expect(late.events[0]).toMatchObject({ event: 'call', data: { id: callId, status: 'in-progress' } });

    // The caller speaks: VAD and end-of-turn events, then the caller's words.
    await speak(call, fixture8k('utt-opening-hours'));
    await waitUntil(() => feed.events.some((e) => e.event === 'transcript' && e.data.entry.speaker === 'caller'), 8000, 'caller line');
    const types = feed.events.filter((e) => e.event === 'timeline').map((e) => e.data.event.type);
    expect(types).toContain('vad-speech-start');
    expect(types).toContain('end-of-turn');
    expect(feed.events.find((e) => e.event === 'transcript' && e.data.entry.speaker === 'caller')!.data.entry.text).toBe('What are your opening hours?');
    expect(late.events.some((e) => e.event === 'timeline')).toBe(true);

    // Another account's key: no 404 leak through hang-up, nothing on its feed.
    expect((await fetch(`${w.engine.httpUrl}/api/user/calls/${callId}/hangup`, { method: 'POST', headers: { authorization: `Bearer ${otherKey}` } })).status).toBe(404);
    expect(otherFeed.events).toEqual([]);

    const hung = await w.api('POST', `/user/calls/${callId}/hangup`);
    expect(hung.status).toBe(200);
    expect(hung.body).toMatchObject({ data: { id: callId } });
    expect(await Promise.race([call.ended, new Promise((r) => setTimeout(() => r('still up'), 5000))])).toBe('remote-bye');
    await waitUntil(() => feed.events.some((e) => e.event === 'call' && e.data.id === callId && e.data.ended_at !== null), 5000, 'ended record on the feed');
    const rec = await w.waitCall(callId, (c) => c.ended_at !== null);
    expect(rec.end_cause).toBe('local-hangup');

    // Not in progress any more.
    const again = await w.api('POST', `/user/calls/${callId}/hangup`);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: 'The call is not in progress.' });
    feed.close();
    late.close();
    otherFeed.close();
  }, 60_000);

  it('needs the key, and caps open streams per account', async () => {
    expect((await openStream(undefined)).status).toBe(401);
    const streams: Stream[] = [];
    // Closed streams free their slot once the server sees the close; count from a fresh account.
    const acct = await w.engine.ctx.repos.accounts.create('stream cap');
    const key = await w.engine.ctx.repos.accounts.createKey(acct.id);
    for (let i = 0; i < MAX_STREAMS_PER_ACCOUNT; i++) streams.push(await openStream(key));
    expect(streams.every((s) => s.status === 200)).toBe(true);
    const over = await openStream(key);
    expect(over.status).toBe(429);
    streams.pop()!.close();
    await waitUntil(() => w.engine.ctx.liveFeed!.subscribers(acct.id) < MAX_STREAMS_PER_ACCOUNT, 3000, 'slot freed');
    const again = await openStream(key);
    expect(again.status).toBe(200);
    for (const s of [...streams, again]) s.close();
  }, 30_000);

  it('an open stream does not hold up shutdown', async () => {
    const open = await openStream(w.account.key);
    expect(open.status).toBe(200);
    const t0 = performance.now();
    await w.close();
    expect(performance.now() - t0).toBeLessThan(5000);
    open.close();
  }, 20_000);
});
