/** Dualplex calls: the model listens and writes; our TTS speaks, sentence by sentence. */
import { describe, expect, it } from 'vitest';
import { runRealtimeCall, say } from './harness.ts';

type Json = Record<string, unknown>;

describe('dualplex call', () => {
  it('greets at once through our TTS and tells the model it was said', async () => {
    const run = await runRealtimeCall({ mode: 'dualplex', script: { items: [], hangUpAtMs: 4000 } });
    const conn = run.standIn.connections[0]!;
    const session = conn.session as { output_modalities: string[]; audio: { output: Json } };
    expect(session.output_modalities).toEqual(['text']);
    // Our voice speaks: the model's own voice is never set.
    expect(session.audio.output.voice).toBe('alloy');
    expect(conn.responses).toHaveLength(0);
    const seeded = run.standIn.eventsOf('conversation.item.create', conn).map((e) => e.item as { role: string; content: { text: string }[] });
    expect(seeded).toEqual([expect.objectContaining({ role: 'assistant', content: [expect.objectContaining({ text: 'Hello, thanks for calling Luigi.' })] })]);
    const start = run.events('assistant-audio-start')[0]!;
    expect(start).toMatchObject({ kind: 'greeting' });
    expect(start.atMs).toBeLessThanOrEqual(40);
    expect(run.result.transcript[0]).toMatchObject({ speaker: 'assistant', kind: 'greeting', text: 'Hello, thanks for calling Luigi.' });
    // The first TTS frame is on the line in the first slots (Flite's own lead-in silence aside).
    expect(run.media.played.find((p) => p.samples !== undefined)!.atMs).toBeLessThanOrEqual(40);
  });

  it("speaks the model's text answer through our TTS, with the model's transcripts", async () => {
    const run = await runRealtimeCall({
      mode: 'dualplex',
      script: { items: [say('utt-opening-hours', 3000)], hangUpAtMs: 12_000 },
      standIn: { script: [{ say: 'We are open from nine to five. On Saturdays we open at ten.' }], userTranscripts: ['What are your opening hours?'] },
    });
    expect(run.result.transcript.map((e) => [e.speaker, e.text])).toEqual([
      ['assistant', 'Hello, thanks for calling Luigi.'],
      ['caller', 'What are your opening hours?'],
      ['assistant', 'We are open from nine to five. On Saturdays we open at ten.'],
    ]);
    const stop = run.events('vad-speech-end')[0]!;
    const reply = run.events('assistant-audio-start').find((e) => e.kind === 'reply')!;
    expect(reply.atMs - stop.atMs).toBeLessThanOrEqual(20);
    // Both sentences were spoken (the reply's audio runs for seconds, not one sentence).
    const replyStop = run.events('assistant-audio-stop').find((e) => e.key === reply.key)!;
    expect(replyStop.interrupted).toBe(false);
    expect(replyStop.atMs - reply.atMs).toBeGreaterThan(2500);
  });

  it('barge-in: our TTS stops within one frame, the answer is cancelled, the transcript keeps what was heard', async () => {
    const long = 'Today we have a special menu. There is fresh pasta and grilled fish. For dessert there is a lemon tart with cream.';
    const run = await runRealtimeCall({
      mode: 'dualplex',
      config: { wait_for_customer: true },
      script: { items: [say('utt-opening-hours', 300), say('utt-book-table', 5000)], hangUpAtMs: 14_000 },
      standIn: { script: [{ say: long }, { say: 'Sure, for how many?' }], userTranscripts: ['What is on the menu?', 'I would like to book a table.'] },
    });
    const cut = run.events('interruption')[0]!;
    expect(cut).toBeDefined();
    const next = run.events('assistant-audio-start').find((e) => e.atMs > cut.atMs)!;
    expect(run.playedMsBetween(cut.atMs + 21, next.atMs - 1)).toBe(0);
    const answer = run.result.transcript.find((e) => e.speaker === 'assistant')!;
    expect(answer.interrupted).toBe(true);
    expect(answer.fullText).toBe(long);
    expect(long.startsWith(answer.text)).toBe(true);
    expect(answer.text.length).toBeLessThan(long.length);
    expect(run.result.transcript.at(-1)).toMatchObject({ speaker: 'assistant', text: 'Sure, for how many?' });
  });
});
