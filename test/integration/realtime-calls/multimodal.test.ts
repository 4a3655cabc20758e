/** Multimodal calls: the model speaks in its own voice; we pace, cut and truncate its audio. */
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { TurnInput, TurnResult } from '../../../src/agent/types.ts';
import { createCascadeMetrics } from '../../../src/call/cascade/metrics.ts';
import { durationMs, runRealtimeCall, say } from './harness.ts';

type Json = Record<string, unknown>;
const GREETING = 'Hello, thanks for calling Luigi.';

describe('multimodal call', () => {
  it('speaks the greeting first, verbatim through the model, with the session built from the assistant', async () => {
    const run = await runRealtimeCall({
      mode: 'multimodal',
      config: { turn_detection_threshold: 0.7, llm_temperature: 0.3 },
      script: { items: [], hangUpAtMs: 4000 },
      standIn: { script: [{ say: GREETING }] },
    });
    const conn = run.standIn.connections[0]!;
    const session = conn.session as { instructions: string; audio: { input: Json; output: Json }; output_modalities: string[] };
    expect(session.instructions).toContain('You are the front desk of Luigi.');
    expect(session.audio.output.voice).toBe('marin');
    expect(session.output_modalities).toEqual(['audio']);
    expect(session.audio.input.turn_detection).toMatchObject({ type: 'server_vad', threshold: 0.7, create_response: true, interrupt_response: false });
    expect(session.audio.input.format).toEqual({ type: 'audio/pcm', rate: 24000 });
    // The greeting is the first thing asked for, filled in, verbatim.
    expect(conn.responses[0]!.instructions).toContain('"Hello, thanks for calling Luigi."');
    const start = run.events('assistant-audio-start')[0]!;
    expect(start.kind).toBe('greeting');
    expect(start.atMs).toBeLessThanOrEqual(40);
    expect(run.result.transcript[0]).toMatchObject({ speaker: 'assistant', kind: 'greeting', text: GREETING });
    expect(run.result.transcript[0]!.interrupted).toBeUndefined();
    // Every frame the model sent was played.
    const sent = conn.audioSentMs.get(run.events('truncate')[0]?.itemId ?? [...conn.audioSentMs.keys()][0]!)!;
    expect(Math.abs(run.playedMsBetween(0, 4000) - sent)).toBeLessThanOrEqual(20);
    expect(run.result.endedBy).toBe('caller-hangup');
  });

  it('answers a question after the caller stops speaking, transcribed by the model', async () => {
    const run = await runRealtimeCall({
      mode: 'multimodal',
      script: { items: [say('utt-opening-hours', 3000)], hangUpAtMs: 9000 },
      standIn: { script: [{ say: GREETING }, { say: 'We are open from nine to five.' }], userTranscripts: ['What are your opening hours?'] },
    });
    const t = run.result.transcript;
    expect(t.map((e) => [e.speaker, e.text])).toEqual([
      ['assistant', GREETING],
      ['caller', 'What are your opening hours?'],
      ['assistant', 'We are open from nine to five.'],
    ]);
    const stop = run.events('vad-speech-end')[0]!;
    const reply = run.events('assistant-audio-start').find((e) => e.kind === 'reply')!;
    // The model's answer arrives with its end-of-turn; the engine adds at most one frame.
    expect(reply.atMs).toBeGreaterThanOrEqual(stop.atMs);
    expect(reply.atMs - stop.atMs).toBeLessThanOrEqual(20);
    expect(t[1]!.startMs).toBeGreaterThanOrEqual(2500);
    expect(t[1]!.endMs).toBeLessThanOrEqual(3000 + durationMs('utt-opening-hours'));
    expect(run.result.history.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
  });

  it('barge-in: audio stops within one frame and the truncation carries the played position; counted in switchboard_interruptions_total{taken="true"}', async () => {
    const long = 'Hello, thanks for calling Luigi. Today we have a special menu with fresh pasta, grilled fish and a lemon tart for dessert.';
    // The engine's /metrics registry, with the counters the pipeline increments too.
    const registry = new client.Registry();
    const run = await runRealtimeCall({
      mode: 'multimodal',
      deps: { metrics: createCascadeMetrics(registry) },
      script: { items: [say('utt-book-table', 2000)], hangUpAtMs: 9000 },
      standIn: { script: [{ say: long }, { say: 'Sure, for how many?' }], userTranscripts: ['I would like to book a table.'] },
    });
    const cut = run.events('interruption')[0]!;
    expect(cut).toBeDefined();
    const conn = run.standIn.connections[0]!;
    const truncation = conn.truncations[0]!;
    // The position told to the model is exactly what went out on the media before the cut.
    const played = run.playedMsBetween(0, cut.atMs);
    expect(truncation.audioEndMs).toBe(played);
    expect(cut.sentMs).toBe(played);
    expect(truncation.audioEndMs).toBeLessThan(conn.audioSentMs.get(truncation.itemId)!);
    // Nothing of the greeting plays after the cut (one 20 ms slot of grace).
    const reply = run.events('assistant-audio-start').find((e) => e.atMs > cut.atMs)!;
    expect(run.playedMsBetween(cut.atMs + 21, reply.atMs - 1)).toBe(0);
    // The transcript keeps only what was heard.
    const greeting = run.result.transcript[0]!;
    expect(greeting.interrupted).toBe(true);
    expect(greeting.fullText).toBe(long);
    expect(long.startsWith(greeting.text)).toBe(true);
    expect(greeting.text.length).toBeLessThan(long.length);
    expect(run.result.history[0]).toEqual({ role: 'assistant', content: greeting.text });
    expect(run.result.counters.interruptions).toBe(1);
    // The scrape says so, as it does for a pipeline call: one barge-in, taken.
    const scrape = await registry.metrics();
    expect(scrape).toContain('switchboard_interruptions_total{taken="true"} 1');
    expect(scrape).not.toContain('switchboard_interruptions_total{taken="false"}');
    expect(run.result.transcript.at(-1)).toMatchObject({ speaker: 'assistant', text: 'Sure, for how many?' });
  });
});

describe('multimodal tools and resilience', () => {
  it('runs a function call and sends its result back, then speaks the answer', async () => {
    const calls: Record<string, unknown>[] = [];
    const checkTable = {
      spec: { name: 'check_table', description: 'Is a table free?', parameters: { type: 'object', properties: { party: { type: 'number' } } } },
      run: async (args: Record<string, unknown>) => {
        calls.push(args);
        return { free: true, time: '19:30' };
      },
    };
    const run = await runRealtimeCall({
      mode: 'multimodal',
      config: { wait_for_customer: true },
      script: { items: [say('utt-book-table', 500)], hangUpAtMs: 12_000 },
      deps: { tools: { extraTools: [checkTable] } },
      standIn: {
        script: [{ say: 'Let me check.', calls: [{ name: 'check_table', arguments: { party: 2 }, callId: 'call_1' }] }, { say: 'Yes, a table is free at half past seven.' }],
        userTranscripts: ['I would like to book a table for two.'],
      },
    });
    const conn = run.standIn.connections[0]!;
    expect((conn.session as { tools: Json[] }).tools.map((t) => t.name)).toEqual(['check_table']);
    expect(calls).toEqual([{ party: 2 }]);
    expect(conn.functionOutputs).toEqual([{ callId: 'call_1', output: JSON.stringify({ free: true, time: '19:30' }) }]);
    // wait_for_customer: no greeting; the reply to the results came from a response.create.
    expect(conn.responses).toHaveLength(2);
    const replies = run.result.transcript.filter((e) => e.speaker === 'assistant');
    expect(replies.map((e) => e.text)).toEqual(['Let me check.', 'Yes, a table is free at half past seven.']);
    expect(replies[1]!.functionCalls).toEqual([{ name: 'check_table', arguments: { party: 2 }, result: { free: true, time: '19:30' } }]);
    expect(run.events('function-call')[0]).toMatchObject({ name: 'check_table', ok: true, via: 'engine' });
  });

  it('answers a tool-heavy turn through the chat_llm_fallback_id text model', async () => {
    const inputs: TurnInput[] = [];
    const fallbackAgent = {
      runTurn: async (input: TurnInput): Promise<TurnResult> => {
        inputs.push(input);
        return { reply: 'We have tables at seven and at nine.', functionCalls: [{ name: 'check_table', arguments: { at: 7 }, result: { free: true } }], ended: false };
      },
    };
    const run = await runRealtimeCall({
      mode: 'multimodal',
      config: { wait_for_customer: true, chat_llm_fallback_id: 3 },
      script: { items: [say('utt-book-table', 500)], hangUpAtMs: 12_000 },
      deps: { fallbackAgent },
      standIn: {
        script: [
          { calls: [{ name: 'check_table', arguments: { at: 7 }, callId: 'c7' }, { name: 'check_table', arguments: { at: 9 }, callId: 'c9' }] },
          { say: 'We have tables at seven and at nine.' },
        ],
        userTranscripts: ['I would like to book a table for two.'],
      },
    });
    expect(inputs).toHaveLength(1);
    expect(inputs[0]!.assistant.config.llm_model_id).toBe(3);
    expect(inputs[0]!.history.at(-1)).toEqual({ role: 'user', content: 'I would like to book a table for two.' });
    const conn = run.standIn.connections[0]!;
    expect(conn.functionOutputs.map((o) => o.callId)).toEqual(['c7', 'c9']);
    expect(JSON.parse(conn.functionOutputs[0]!.output)).toEqual({ answer: 'We have tables at seven and at nine.', answered_by: 'fallback_model' });
    expect(conn.responses[1]!.instructions).toContain('"We have tables at seven and at nine."');
    expect(run.events('function-call').map((e) => e.via)).toEqual(['fallback-llm', 'fallback-llm']);
    expect(run.result.transcript.at(-1)).toMatchObject({ text: 'We have tables at seven and at nine.', functionCalls: [{ name: 'check_table', arguments: { at: 7 }, result: { free: true } }] });
  });

  it('hangs up after end_call once the goodbye has played', async () => {
    const run = await runRealtimeCall({
      mode: 'multimodal',
      config: { wait_for_customer: true, tools: [{ type: 'end_call', data: { description: 'when the caller is done' } }] },
      script: { items: [say('utt-no', 500)] },
      standIn: { script: [{ say: 'Goodbye then.', calls: [{ name: 'end_call', arguments: {} }] }] },
    });
    expect(run.result.endedBy).toBe('end-call-tool');
    const bye = run.events('assistant-audio-stop').at(-1)!;
    expect(run.media.closedAtMs).toBeGreaterThanOrEqual(bye.atMs);
    expect(run.media.closedAtMs! - bye.atMs).toBeLessThanOrEqual(20);
  });

  it('reconnects a dropped model connection with the conversation so far', async () => {
    const run = await runRealtimeCall({
      mode: 'multimodal',
      script: { items: [say('utt-opening-hours', 3000)], hangUpAtMs: 12_000 },
      standIn: {
        script: [{ say: GREETING }, { say: 'We are open from nine to five, Monday to Friday.', dropAfterDeltas: 3 }, { say: 'As I was saying, nine to five.' }],
        userTranscripts: ['What are your opening hours?'],
      },
    });
    expect(run.standIn.connections).toHaveLength(2);
    expect(run.events('model-lost')[0]).toMatchObject({ retryable: true });
    expect(run.result.counters.reconnects).toBe(1);
    const second = run.standIn.connections[1]!;
    const seeded = run.standIn.eventsOf('conversation.item.create', second).map((e) => e.item as { id?: string; role: string; content: { text: string }[] });
    expect(seeded.slice(0, 2).map((i) => [i.role, i.content[0]!.text])).toEqual([
      ['assistant', GREETING],
      ['user', 'What are your opening hours?'],
    ]);
    // The answer the drop cut short still plays out what had arrived: it goes in as it will be
    // heard, under our id (so a barge-in could still cut it down).
    const partial = seeded[2]!;
    expect(seeded).toHaveLength(3);
    expect(partial.role).toBe('assistant');
    expect(partial.id).toMatch(/^sb_seed_/);
    expect('We are open from nine to five, Monday to Friday.'.startsWith(partial.content[0]!.text)).toBe(true);
    // The answer in flight when the socket dropped is asked for again on the new connection.
    expect(second.responses).toHaveLength(1);
    expect(run.result.transcript.at(-1)).toMatchObject({ speaker: 'assistant', text: 'As I was saying, nine to five.' });
  });

  it('apologises in the offline voice and hangs up when the model cannot be reached', async () => {
    const run = await runRealtimeCall({ mode: 'multimodal', refuse: true, script: { items: [] }, maxMs: 30_000 });
    expect(run.result.endedBy).toBe('model-failure');
    expect(run.media.closedCause).toBe('error');
    expect(run.result.transcript[0]).toMatchObject({ kind: 'apology' });
    expect(run.media.audibleRuns().length).toBeGreaterThan(0);
    expect(run.media.closedAtMs!).toBeLessThan(15_000);
  });

  it('counts and logs model errors and exhausted rate limits', async () => {
    const warnings: object[] = [];
    const logger = { info: () => {}, warn: (o: object) => void warnings.push(o), error: () => {} };
    const run = await runRealtimeCall({
      mode: 'multimodal',
      script: { items: [], hangUpAtMs: 3000 },
      deps: { logger },
      standIn: {
        script: [{ say: GREETING, before: [{ type: 'error', error: { type: 'server_error', code: 'server_error', message: 'boom' } }, { type: 'rate_limits.updated', rate_limits: [{ name: 'tokens', limit: 100, remaining: 0, reset_seconds: 2 }] }] }],
      },
    });
    expect(run.result.counters.modelErrors).toBe(1);
    expect(run.result.counters.rateLimited).toBe(1);
    expect(run.result.counters.rateLimitUpdates).toBeGreaterThanOrEqual(2);
    expect(run.events('model-error')[0]).toMatchObject({ code: 'server_error' });
    expect(warnings.length).toBeGreaterThan(0);
  });
});
