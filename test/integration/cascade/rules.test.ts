/**
 * Call rules on the call clock: re-engagement, initial silence, max duration, the end_call tool.
 */
import { describe, expect, it } from 'vitest';
import { spokenLine } from '../../../src/call/spoken-lines.ts';
import { runCall, say } from './harness.ts';

const DEFAULT_GOODBYE = spokenLine('goodbye', 'en-US');
const DEFAULT_REENGAGEMENT_PHRASE = spokenLine('reengagement', 'en-US');

describe('cascade: silence', () => {
  it('re-engages at max_silence_duration, then every reengagement_interval', async () => {
    const { events, tts } = await runCall({
      config: { max_silence_duration: 5, reengagement_interval: 7 },
      script: { items: [], hangUpAtMs: 24_000 },
    });
    const greetingEnd = events('assistant-audio-stop')[0]!.atMs;
    const re = events('reengagement');
    expect(re.map((e) => e.count)).toEqual([1, 2]);
    expect(re[0]!.atMs).toBe(greetingEnd + 5000);
    // The interval counts from the end of the re-engagement's own audio.
    const firstReStop = events('assistant-audio-stop').find((e) => e.kind === 'reengagement')!;
    expect(firstReStop.atMs).toBe(re[0]!.atMs + tts.durationMs(DEFAULT_REENGAGEMENT_PHRASE));
    expect(re[1]!.atMs).toBe(firstReStop.atMs + 7000);
    expect(tts.spoken.filter((t) => t === DEFAULT_REENGAGEMENT_PHRASE)).toHaveLength(2);
  });

  it('a reengagement_prompt guides an LLM turn, with variables filled', async () => {
    const { llm, events, result } = await runCall({
      config: { max_silence_duration: 3, reengagement_prompt: 'Ask {{name}} if they are still there.', variables: { name: 'Ada' } },
      llm: (l) => l.queue.push({ content: 'Ada, are you still with me?' }),
      script: { items: [], hangUpAtMs: 9000 },
    });
    expect(events('reengagement')).toHaveLength(1);
    expect(llm.requests[0]!.at(-1)!.content).toContain('Ask Ada if they are still there.');
    expect(result.transcript.find((e) => e.kind === 'reengagement')!.text).toBe('Ada, are you still with me?');
  });

  it('caller speech resets the silence count', async () => {
    const { events } = await runCall({
      config: { max_silence_duration: 5, reengagement_interval: 7 },
      script: { items: [say('utt-yes', 6000)], hangUpAtMs: 17_000 },
    });
    const replyEnd = events('assistant-audio-stop').find((e) => e.kind === 'reply')!.atMs;
    const re = events('reengagement');
    expect(re).toHaveLength(1);
    expect(re[0]!.atMs).toBe(replyEnd + 5000);
    expect(re[0]!.count).toBe(1);
  });

  it('hangs up when the caller never speaks within max_initial_silence_duration', async () => {
    const { media, events, result } = await runCall({
      config: { max_initial_silence_duration: 6 },
      script: { items: [], hangUpAtMs: 60_000 },
    });
    expect(events('hang-up')).toEqual([{ type: 'hang-up', atMs: 6000, reason: 'initial-silence' }]);
    expect(media.closedAtMs).toBe(6000);
    expect(media.closedCause).toBe('local-hangup');
    expect(result.endedBy).toBe('initial-silence');
  });
});

describe('cascade: the engine’s own lines follow the assistant’s language', () => {
  it('a German assistant re-engages and says goodbye in German', async () => {
    const { tts } = await runCall({
      config: { max_silence_duration: 5, max_duration: 12 },
      script: { items: [], hangUpAtMs: 40_000 },
      deps: { language: 'de-DE' },
    });
    expect(tts.spoken).toContain('Sind Sie noch da?');
    expect(tts.spoken.join(' ')).toContain('Es tut mir leid, die maximale Dauer dieses Anrufs ist erreicht.');
    expect(tts.spoken.join(' ')).not.toContain(DEFAULT_GOODBYE.slice(0, 20));
  });

  it('a language without lines of its own falls back to English', () => {
    expect(spokenLine('goodbye', 'ja-JP')).toBe(DEFAULT_GOODBYE);
    expect(spokenLine('reengagement', 'es')).toBe('¿Sigue ahí?');
    expect(spokenLine('apology', 'FR_ca')).toMatch(/^Je suis désolé/);
  });
});

describe('cascade: max_duration', () => {
  it('says goodbye at max_duration, then hangs up when it has been heard', async () => {
    const { media, events, tts, result } = await runCall({
      config: { max_duration: 20, max_silence_duration: 60 },
      script: { items: [say('utt-opening-hours', 4000)], hangUpAtMs: 60_000 },
    });
    const goodbye = events('turn-start').find((e) => e.kind === 'goodbye')!;
    expect(goodbye.atMs).toBe(20_000);
    const stop = events('assistant-audio-stop').find((e) => e.kind === 'goodbye')!;
    expect(stop.atMs).toBe(20_000 + tts.durationMs("I'm sorry, we've reached the time limit for this call.") + tts.durationMs('Thank you for calling, goodbye.'));
    expect(tts.spoken.join(' ')).toContain(DEFAULT_GOODBYE);
    expect(media.closedAtMs).toBe(stop.atMs);
    expect(media.closedCause).toBe('max-duration');
    expect(result.endedBy).toBe('max-duration');
    // The goodbye was heard right up to the hang-up.
    const last = media.audibleRuns().at(-1)!;
    expect(last.startMs).toBeLessThanOrEqual(20_020);
    expect(last.endMs).toBeGreaterThanOrEqual(stop.atMs);
  });
});

describe('cascade: end_call tool', () => {
  it('finishes the sentence, then hangs up', async () => {
    const { media, events, result, llm } = await runCall({
      config: { tools: [{ type: 'end_call', data: { description: null } }] },
      llm: (l) => l.queue.push({ content: 'Thanks for calling, goodbye!', toolCalls: [{ name: 'end_call' }] }, { content: '' }),
      script: { items: [say('utt-no', 4000)], hangUpAtMs: 30_000 },
    });
    expect(llm.requests).toHaveLength(2);
    const stop = events('assistant-audio-stop').find((e) => e.kind === 'reply')!;
    expect(stop.interrupted).toBe(false);
    expect(media.closedAtMs).toBe(stop.atMs);
    expect(result.endedBy).toBe('end-call-tool');
    expect(result.transcript.at(-1)).toMatchObject({ text: 'Thanks for calling, goodbye!', functionCalls: [expect.objectContaining({ name: 'end_call' })] });
  });
});
