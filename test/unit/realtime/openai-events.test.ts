import { describe, expect, it } from 'vitest';
import { pcmToBytes } from '../../../src/audio/frame.ts';
import { parseArguments, ServerEventTranslator } from '../../../src/providers/realtime/openai-events.ts';
import type { RealtimeCounters, RealtimeEvent } from '../../../src/providers/realtime/realtime.ts';

function counters(): RealtimeCounters {
  return { errors: 0, rateLimitUpdates: 0, lastRateLimits: [], unknownEvents: 0, audioInMs: 0, audioOutMs: 0, eventsIn: 0, eventsOut: 0 };
}
const ids = { response_id: 'resp_1', item_id: 'item_1', output_index: 0, content_index: 0 };
const pcm100ms = pcmToBytes(new Int16Array(2400).fill(1000)).toString('base64');

describe('OpenAI realtime server events', () => {
  for (const [dialect, names] of [
    ['GA', { audio: 'response.output_audio', transcript: 'response.output_audio_transcript', text: 'response.output_text' }],
    ['beta', { audio: 'response.audio', transcript: 'response.audio_transcript', text: 'response.text' }],
  ] as const) {
    it(`maps the ${dialect} event names`, () => {
      const t = new ServerEventTranslator('pcm24k', counters());
      const out: RealtimeEvent[] = [
        ...t.translate({ type: `${names.transcript}.delta`, ...ids, delta: 'Hi' }),
        ...t.translate({ type: `${names.audio}.delta`, ...ids, delta: pcm100ms }),
        ...t.translate({ type: `${names.audio}.done`, ...ids }),
        ...t.translate({ type: `${names.transcript}.done`, ...ids, transcript: 'Hi' }),
        ...t.translate({ type: `${names.text}.delta`, ...ids, delta: 'Yo' }),
      ];
      expect(out.map((e) => e.type)).toEqual(['transcript-delta', 'audio', 'audio', 'audio-done', 'transcript-done', 'text-delta']);
      const frames = out.flatMap((e) => (e.type === 'audio' ? (e.frames ?? []) : []));
      expect(frames.length).toBe(5 + 1); // 100 ms, plus the filter tail flushed at done
      expect(t.receivedMs('item_1')).toBe(100);
    });
  }

  it('maps VAD, transcription, truncation, errors and rate limits', () => {
    const c = counters();
    const t = new ServerEventTranslator('pcmu', c);
    expect(t.translate({ type: 'input_audio_buffer.speech_started', audio_start_ms: 1200, item_id: 'u1' })).toEqual([
      { type: 'speech-started', audioStartMs: 1200, itemId: 'u1' },
    ]);
    expect(t.translate({ type: 'conversation.item.input_audio_transcription.completed', item_id: 'u1', content_index: 0, transcript: 'hello' })).toEqual([
      { type: 'user-transcript', itemId: 'u1', text: 'hello' },
    ]);
    expect(t.translate({ type: 'conversation.item.truncated', item_id: 'a1', content_index: 0, audio_end_ms: 420 })).toEqual([
      { type: 'truncated', itemId: 'a1', audioEndMs: 420 },
    ]);
    expect(t.translate({ type: 'error', error: { type: 'server_error', code: null, message: 'boom' } })[0]).toMatchObject({ retryable: true, code: 'server_error' });
    expect(t.translate({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_value', message: 'bad' } })[0]).toMatchObject({
      retryable: false,
      code: 'invalid_value',
    });
    t.translate({ type: 'rate_limits.updated', rate_limits: [{ name: 'tokens', limit: 10, remaining: 5, reset_seconds: 1 }] });
    expect(c).toMatchObject({ errors: 2, rateLimitUpdates: 1, lastRateLimits: [{ name: 'tokens', limit: 10, remaining: 5, resetSeconds: 1 }] });
  });

  it('ignores unknown and malformed events, counting them', () => {
    const c = counters();
    const t = new ServerEventTranslator('pcm24k', c);
    expect(t.translate({ type: 'response.brand_new_thing', x: 1 })).toEqual([]);
    expect(t.translate({ type: 'response.output_audio.delta', delta: 42 })).toEqual([]);
    expect(t.translate({ type: 'conversation.item.added', item: {} })).toEqual([]);
    expect(c.unknownEvents).toBe(2);
  });

  it('emits each function call once, from arguments.done or else from response.done, with the name from the item', () => {
    const t = new ServerEventTranslator('pcm24k', counters());
    t.translate({ type: 'response.output_item.added', response_id: 'r', output_index: 0, item: { id: 'f1', type: 'function_call', name: 'lookup', call_id: 'c1' } });
    const first = t.translate({ type: 'response.function_call_arguments.done', response_id: 'r', item_id: 'f1', output_index: 0, call_id: 'c1', arguments: '{"id":7}' });
    expect(first).toEqual([{ type: 'function-call', callId: 'c1', name: 'lookup', itemId: 'f1', responseId: 'r', arguments: { ok: true, value: { id: 7 } } }]);
    const done = t.translate({
      type: 'response.done',
      response: {
        id: 'r',
        status: 'completed',
        usage: { total_tokens: 5 },
        output: [
          { id: 'f1', type: 'function_call', name: 'lookup', call_id: 'c1', arguments: '{"id":7}' },
          { id: 'f2', type: 'function_call', name: 'other', call_id: 'c2', arguments: '{oops' },
        ],
      },
    });
    expect(done.map((e) => e.type)).toEqual(['function-call', 'response-done']);
    expect(done[0]).toMatchObject({ callId: 'c2', name: 'other', arguments: { ok: false, raw: '{oops' } });
    expect(done[1]).toEqual({ type: 'response-done', responseId: 'r', status: 'completed', usage: { total_tokens: 5 } });
  });

  it('parses empty arguments as an empty object', () => {
    expect(parseArguments('')).toEqual({ ok: true, value: {} });
  });
});
