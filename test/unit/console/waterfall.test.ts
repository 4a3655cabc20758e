import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildWaterfall } from '../../../console/src/calls/draw/waterfall.ts';
import type { CallView } from '../../../console/src/calls/types.ts';

const call = JSON.parse(readFileSync(new URL('../../../fixtures/console/call.json', import.meta.url), 'utf8')) as CallView;

describe('buildWaterfall on a recorded call', () => {
  const model = buildWaterfall(call.transcript, 33.8);

  it('gives one turn per reply with latency, starting where the caller stopped speaking', () => {
    const replies = call.transcript.filter((l) => l.latency);
    expect(model.turns).toHaveLength(replies.length);
    const first = model.turns[0]!;
    expect(first.caller).toBe('What are your opening hours?');
    expect(first.atMs).toBeCloseTo(replies[0]!.start_ms - replies[0]!.latency!.total_ms! + 33.8, 5);
    // The end of speech is near the end of the caller's line.
    const callerEnd = call.transcript[1]!.end_ms + 33.8;
    expect(Math.abs(first.atMs - callerEnd)).toBeLessThan(100);
    expect(first.missing).toEqual([]);
  });

  it('chains the bars: endpointing, then LLM, TTS ending at the first frame out, the total spanning all', () => {
    const l = call.transcript.find((x) => x.latency)!.latency!;
    const bars = Object.fromEntries(model.turns[0]!.bars.map((b) => [b.key, b]));
    expect(bars.endpointing).toMatchObject({ startMs: 0, endMs: l.endpointing_ms });
    expect(bars.stt).toMatchObject({ startMs: 0, endMs: l.stt_final_ms });
    expect(bars.llm).toMatchObject({ startMs: l.endpointing_ms, endMs: l.endpointing_ms! + l.llm_first_token_ms! });
    expect(bars['first-frame']).toMatchObject({ startMs: l.endpointing_ms, endMs: l.endpointing_ms! + l.first_frame_out_ms! });
    expect(bars.tts!.endMs).toBe(bars['first-frame']!.endMs);
    expect(bars.tts!.approximate).toBe(true);
    expect(bars.tts!.startMs).toBeGreaterThanOrEqual(bars.llm!.endMs);
    expect(bars.total).toMatchObject({ startMs: 0, endMs: l.total_ms });
    expect(model.maxMs).toBe(Math.max(...model.turns.flatMap((t) => t.bars.map((b) => b.endMs))));
  });

  it('says which parts a turn did not record, and skips replies without latency', () => {
    const m = buildWaterfall([
      { speaker: 'assistant', text: 'Hi', start_ms: 0, end_ms: 500, kind: 'greeting' },
      { speaker: 'caller', text: 'Hello', start_ms: 1000, end_ms: 2000 },
      { speaker: 'assistant', text: 'Yes?', start_ms: 3000, end_ms: 3500, latency: { endpointing_ms: 600, llm_first_token_ms: 200 } },
    ]);
    expect(m.turns).toHaveLength(1);
    expect(m.turns[0]).toMatchObject({ atMs: 2000, missing: ['stt', 'tts', 'first-frame', 'total'] });
    expect(m.turns[0]!.bars.map((b) => b.key)).toEqual(['endpointing', 'llm']);
  });
});
