/**
 * The turn loop on recorded caller audio (fixtures/audio) through VirtualMedia on a ManualClock,
 * asserting what the caller heard and when.
 */
import { describe, expect, it } from 'vitest';
import { runCall, say } from './harness.ts';

const LONG_REPLY =
  'Our opening hours are from nine in the morning to five in the evening, Monday to Friday, and on Saturdays we open from ten until two in the afternoon.';

describe('cascade: greeting', () => {
  it('speaks the initial message at answer, with {{variables}} filled', async () => {
    const { result, media, tts, events } = await runCall({
      config: { initial_message: 'Hello {{name}}, thanks for calling. How can I help?' },
      variables: { name: 'Ada' },
      script: { items: [], hangUpAtMs: 5000 },
    });
    expect(tts.spoken.join(' ')).toBe('Hello Ada, thanks for calling. How can I help?');
    const [first] = media.audibleRuns();
    // Heard from the first 20 ms slot, for as long as the greeting's audio lasts.
    expect(first!.startMs).toBeLessThanOrEqual(20);
    const expected = tts.durationMs('Hello Ada, thanks for calling.') + tts.durationMs('How can I help?');
    expect(first!.endMs - first!.startMs).toBe(expected);
    expect(events('assistant-audio-start')[0]).toMatchObject({ atMs: 0, kind: 'greeting' });
    expect(result.transcript[0]).toMatchObject({ speaker: 'assistant', kind: 'greeting', startMs: 0, text: 'Hello Ada, thanks for calling. How can I help?' });
    expect(result.endedBy).toBe('caller-hangup');
  });

  it('says nothing first with wait_for_customer', async () => {
    const { media, events } = await runCall({ config: { wait_for_customer: true }, script: { items: [], hangUpAtMs: 3000 } });
    expect(media.audibleRuns()).toEqual([]);
    expect(events('turn-start')).toEqual([]);
  });
});

describe('cascade: a question answered', () => {
  it('answers after the endpointing silence, and the agent saw the question', async () => {
    const { result, media, llm, events } = await runCall({
      script: { items: [say('utt-opening-hours', 4000)], hangUpAtMs: 12_000 },
    });
    const [end] = events('vad-speech-end');
    const [eot] = events('end-of-turn');
    expect(eot).toMatchObject({ reason: 'silence', waitedMs: 700, taken: true, transcript: 'What are your opening hours?' });
    expect(eot!.atMs).toBe(end!.atMs + 700);
    const user = llm.requests[0]!.filter((m) => m.role === 'user');
    expect(user.map((m) => m.content)).toEqual(['What are your opening hours?']);
    // The reply reaches the caller within one frame of the decision (stand-ins answer at once).
    const runs = media.audibleRuns();
    expect(runs).toHaveLength(2);
    expect(runs[1]!.startMs - eot!.atMs).toBeLessThanOrEqual(20);
    const reply = result.transcript.find((e) => e.kind === 'reply')!;
    expect(reply.text).toBe('We are open from nine to five, Monday to Friday.');
    expect(reply.latency).toMatchObject({ endpointingMs: 700, firstFrameOutMs: 0, totalMs: 700 });
    expect(result.history.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
  });
});

describe('cascade: endpointing', () => {
  it("endpoint_type ai ends a finished question sooner than plain VAD silence", async () => {
    const { events } = await runCall({
      config: { endpoint_type: 'ai' },
      script: { items: [say('utt-opening-hours', 4000)], hangUpAtMs: 12_000 },
    });
    const [eot] = events('end-of-turn');
    expect(eot).toMatchObject({ reason: 'heuristic', taken: true });
    expect(eot!.waitedMs).toBeLessThan(700);
  });
});

describe('cascade: barge-in', () => {
  it('stops the assistant within one frame and keeps only what was heard', async () => {
    const { result, media, llm, events } = await runCall({
      llm: (l) => l.queue.push({ content: LONG_REPLY }, { content: 'Sure, for how many people?' }),
      script: { items: [say('utt-opening-hours', 4000), say('utt-book-table', 9000)], hangUpAtMs: 20_000 },
    });
    const [cut] = events('interruption');
    expect(cut).toMatchObject({ taken: true });
    const stop = events('assistant-audio-stop').find((e) => e.kind === 'reply')!;
    expect(stop).toMatchObject({ interrupted: true, atMs: cut!.atMs });
    // Nothing of the cut reply after the frame that was playing at the decision.
    const nextStart = events('assistant-audio-start').filter((e) => e.atMs > cut!.atMs)[0]!.atMs;
    const after = media.played.filter((s) => s.atMs > cut!.atMs + 20 && s.atMs < nextStart);
    expect(after.length).toBeGreaterThan(10);
    expect(after.every((s) => s.samples === undefined)).toBe(true);
    // History: the heard prefix only, and the agent's next request saw exactly that.
    const cutEntry = result.transcript.find((e) => e.interrupted)!;
    expect(LONG_REPLY.startsWith(cutEntry.text)).toBe(true);
    expect(cutEntry.text.length).toBeGreaterThan(10);
    expect(cutEntry.text.length).toBeLessThan(LONG_REPLY.length / 2);
    expect(llm.requests[1]!.some((m) => m.role === 'assistant' && m.content === cutEntry.text)).toBe(true);
    expect(llm.requests[1]!.at(-1)).toMatchObject({ role: 'user', content: 'I would like to book a table for two people tomorrow evening.' });
  });

  it('a backchannel with min_interrupt_words: 2 does not interrupt, and resumes full volume', async () => {
    const { result, events, llm } = await runCall({
      config: { min_interrupt_words: 2 },
      llm: (l) => l.queue.push({ content: LONG_REPLY }),
      script: { items: [say('utt-opening-hours', 4000), say('bc-mm-hmm', 9000)], hangUpAtMs: 20_000 },
    });
    expect(events('interruption')).toEqual([expect.objectContaining({ taken: false, reason: 'backchannel', transcript: 'mm-hmm' })]);
    expect(events('overlap').map((e) => e.action)).toEqual(['duck', 'resume']);
    const reply = events('assistant-audio-stop').find((e) => e.kind === 'reply')!;
    expect(reply.interrupted).toBe(false);
    expect(result.transcript.find((e) => e.kind === 'reply')!.text).toBe(LONG_REPLY);
    expect(llm.requests).toHaveLength(1);
    expect(events('end-of-turn')).toHaveLength(1);
  });

  it('noise alone triggers no turn', async () => {
    const { events, llm } = await runCall({
      script: { items: [say('noise-babble', 4000), say('noise-street', 10_000)], hangUpAtMs: 17_000 },
    });
    expect(events('vad-speech-start').length).toBeGreaterThan(0); // babble is speech to the VAD...
    expect(events('end-of-turn').every((e) => !e.taken)).toBe(true); // ...but has no words
    expect(events('turn-start').map((e) => e.kind)).toEqual(['greeting']);
    expect(llm.requests).toHaveLength(0);
  });
});
