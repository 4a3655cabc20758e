/** Assistant fields → realtime session and call-rule options. */
import { describe, expect, it } from 'vitest';
import { audioFormatFor, realtimeSettings, sessionConfig, turnDetectionFor, verbatimInstructions } from '../../../src/call/realtime/settings.ts';
import { isToolHeavy, runFunctionCall } from '../../../src/call/realtime/function-calls.ts';
import { Conversation } from '../../../src/call/realtime/conversation.ts';

const base = { id: 1, accountId: 1, config: { system_prompt: 'Front desk of {{place}}.', initial_message: 'Hi from {{place}}!', variables: { place: 'Luigi' } } };

describe('realtime settings', () => {
  it('maps turn_detection_threshold to server VAD; unset stays automatic; the engine cancels itself', () => {
    expect(turnDetectionFor(0.8)).toEqual({ type: 'server_vad', threshold: 0.8, createResponse: true, interruptResponse: false });
    expect(turnDetectionFor(null)).toEqual({ type: 'server_vad', createResponse: true, interruptResponse: false });
    expect(turnDetectionFor(3)).toMatchObject({ threshold: 1 });
  });

  it('fills variables and uses the pipeline rule mapping', () => {
    const s = realtimeSettings({ ...base, mode: 'multimodal', config: { ...base.config, max_duration: 30, max_initial_silence_duration: 5 } }, { place: 'Mario' });
    expect(s.initialMessage).toBe('Hi from Mario!');
    expect(s.instructions).toContain('Front desk of Mario.');
    expect(s.rules).toMatchObject({ maxDurationMs: 30_000, maxInitialSilenceMs: 5000, maxSilenceMs: 40_000 });
  });

  it('multimodal speaks audio in the catalog voice; dualplex asks for text and never sets a voice', () => {
    const mm = sessionConfig(realtimeSettings({ ...base, mode: 'multimodal', config: { ...base.config, llm_temperature: 0.4 } }), { voice: 'marin', tools: [] });
    expect(mm).toMatchObject({ outputModalities: 'audio', voice: 'marin', inputFormat: 'pcm24k', outputFormat: 'pcm24k', temperature: 0.4 });
    const dp = sessionConfig(realtimeSettings({ ...base, mode: 'dualplex' }), { voice: 'marin', tools: [] });
    expect(dp.outputModalities).toBe('text');
    expect(dp.voice).toBeUndefined();
    expect(() => realtimeSettings({ ...base, mode: 'pipeline' })).toThrow(RangeError);
    expect(verbatimInstructions('Hi.')).toContain('"Hi."');
  });
});

describe('realtime function calls', () => {
  const tools = new Map([
    ['ok', { spec: { name: 'ok', description: '', parameters: {} }, run: async (a: Record<string, unknown>) => ({ echo: a }) }],
    ['boom', { spec: { name: 'boom', description: '', parameters: {} }, run: async () => { throw new Error('down'); } }],
  ]);
  const signal = new AbortController().signal;

  it('turns unknown functions, bad JSON and thrown errors into results the model can read', async () => {
    expect((await runFunctionCall(tools, { callId: '1', name: 'ok', arguments: { ok: true, value: { a: 1 } } }, signal)).record.result).toEqual({ echo: { a: 1 } });
    expect((await runFunctionCall(tools, { callId: '2', name: 'nope', arguments: { ok: true, value: {} } }, signal)).record.result).toEqual({ error: 'Unknown function nope' });
    expect((await runFunctionCall(tools, { callId: '3', name: 'ok', arguments: { ok: false, error: 'bad', raw: '{' } }, signal)).record.result.error).toMatch(/Invalid arguments/);
    expect((await runFunctionCall(tools, { callId: '4', name: 'boom', arguments: { ok: true, value: {} } }, signal)).record.result).toEqual({ error: 'down' });
  });

  it('tool-heavy: two calls at once, or another round after results', () => {
    expect(isToolHeavy(1, 0)).toBe(false);
    expect(isToolHeavy(2, 0)).toBe(true);
    expect(isToolHeavy(1, 1)).toBe(true);
  });
});

describe('realtime conversation', () => {
  it('keeps only the heard words of an interrupted item, everywhere', () => {
    const c = new Conversation();
    c.callerStarted('u1', 1000);
    c.callerStopped('u1', 2000);
    c.callerSaid('u1', 'Hi there', 2600);
    const u = { key: 'i1', kind: 'reply' as const, responseId: 'r', itemId: 'i1', contentIndex: 0, text: 'one two three four', frames: 100, finished: false, startMs: 2700 };
    const done = c.finish(u, 3700, true, 1000)!;
    expect(done.heard).toBe('one two');
    expect(c.transcript.toJSON()).toEqual([
      { speaker: 'caller', text: 'Hi there', startMs: 1000, endMs: 2000 },
      { speaker: 'assistant', text: 'one two', startMs: 2700, endMs: 3700, kind: 'reply', interrupted: true, fullText: 'one two three four' },
    ]);
    expect(c.reseed()).toEqual([
      { role: 'user', text: 'Hi there' },
      { role: 'assistant', text: 'one two' },
    ]);
    expect(c.finish(u, 4000, false, 0)).toBeUndefined();
  });
});

describe('realtime audio format', () => {
  const mulawOut = { codec: 'PCMU', writeMulaw: () => true };
  it('passes μ-law through only on PCMU media that takes payloads, with a model that speaks μ-law', () => {
    expect(audioFormatFor(mulawOut, ['pcm24k', 'pcmu'])).toBe('pcmu');
    expect(audioFormatFor({ ...mulawOut, codec: 'PCMA' }, ['pcm24k', 'pcmu'])).toBe('pcm24k');
    expect(audioFormatFor({ ...mulawOut, codec: 'G722' }, ['pcm24k', 'pcmu'])).toBe('pcm24k');
    expect(audioFormatFor({ codec: 'PCMU' }, ['pcm24k', 'pcmu'])).toBe('pcm24k');
    expect(audioFormatFor(mulawOut, ['pcm24k'])).toBe('pcm24k');
    expect(audioFormatFor({}, ['pcm24k', 'pcmu'])).toBe('pcm24k');
  });
});

describe('realtime conversation re-seed', () => {
  it("follows the model's order: places taken at first sight, function calls with their outputs, prior history first", () => {
    const c = new Conversation();
    c.history.push({ role: 'assistant', content: 'Earlier assistant said hi.' });
    c.callerStarted('u1', 100);
    const u = { key: 'a1', kind: 'reply' as const, responseId: 'r', itemId: 'a1', contentIndex: 0, text: 'Let me check.', frames: 30, finished: false };
    c.opened(u);
    c.callStarted('call_1', 'check_table', '{"party":2}');
    c.callOutput('call_1', '{"free":true}');
    // Finished after the call ran, and the caller's words transcribed late: both keep their place.
    c.finish(u, 900, false, 0);
    c.callerSaid('u1', 'A table for two?', 1000);
    const playing = { key: 'a2', kind: 'reply' as const, responseId: 'r2', itemId: 'a2', contentIndex: 0, text: 'Yes, at', frames: 5, finished: false };
    c.opened(playing);
    expect(c.reseed(new Map([['a2', { id: 'sb_seed_1', text: 'Yes, at' }]]))).toEqual([
      { role: 'assistant', text: 'Earlier assistant said hi.' },
      { role: 'user', text: 'A table for two?' },
      { role: 'assistant', text: 'Let me check.' },
      { type: 'function_call', callId: 'call_1', name: 'check_table', arguments: '{"party":2}' },
      { type: 'function_call_output', callId: 'call_1', output: '{"free":true}' },
      { role: 'assistant', text: 'Yes, at', id: 'sb_seed_1' },
    ]);
    // Without it playing, an unfinished utterance has no place yet.
    expect(c.reseed()).toHaveLength(5);
  });
});
