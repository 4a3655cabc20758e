import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildTimeline, type TimelineMark, type TimelineSpan } from '../../../console/src/calls/draw/timeline.ts';
import type { CallView, TapeView } from '../../../console/src/calls/types.ts';

/** A real call (fixtures/console: made by scripts/fixtures/record-console-call.ts). */
const call = JSON.parse(readFileSync(new URL('../../../fixtures/console/call.json', import.meta.url), 'utf8')) as CallView;
const tape = JSON.parse(readFileSync(new URL('../../../fixtures/console/call.tape.json', import.meta.url), 'utf8')) as TapeView;
const zero = tape.events.find((e) => e.type === 'engine-run')!.atMs;

const lane = (m: ReturnType<typeof buildTimeline>, id: string) => m.lanes.find((l) => l.id === id)!.items;

describe('buildTimeline on a recorded call', () => {
  const model = buildTimeline({ transcript: call.transcript, tape, durationMs: (call.duration_seconds ?? 0) * 1000 });

  it('puts the caller, VAD, decisions and assistant on four lanes, in ms from answer', () => {
    expect(model.lanes.map((l) => l.id)).toEqual(['caller', 'vad', 'decisions', 'assistant']);
    expect(model.hasEngineTimeline).toBe(true);
    expect(model.durationMs).toBeGreaterThanOrEqual(tape.endedAtMs!);
    const caller = lane(model, 'caller') as TimelineSpan[];
    const callerLines = call.transcript.filter((l) => l.speaker === 'caller');
    expect(caller.map((s) => s.startMs)).toEqual(callerLines.map((l) => l.start_ms + zero));
    expect(caller[0]!.title).toContain(callerLines[0]!.text);
    // Every item sits inside the call.
    for (const l of model.lanes) for (const it of l.items) {
      const at = it.kind === 'span' ? it.startMs : it.atMs;
      expect(at).toBeGreaterThanOrEqual(0);
      expect(at).toBeLessThanOrEqual(model.durationMs);
      if (it.kind === 'span') expect(it.endMs).toBeGreaterThanOrEqual(it.startMs);
    }
  });

  it('pairs VAD starts and ends into spans that cover what the caller said', () => {
    const vad = lane(model, 'vad') as TimelineSpan[];
    const starts = tape.timeline!.filter((e) => e.type === 'vad-speech-start');
    expect(vad).toHaveLength(starts.length);
    expect(vad[0]!.startMs).toBe(starts[0]!.atMs);
    expect(vad[0]!.title).toMatch(/detected \d+ ms after onset/);
    const firstCaller = (lane(model, 'caller') as TimelineSpan[])[0]!;
    expect(Math.abs(vad[0]!.startMs - firstCaller.startMs)).toBeLessThan(100);
  });

  it('marks each end-of-turn decision with its reason, the interruption taken, the DTMF and the hang-up', () => {
    const marks = lane(model, 'decisions') as TimelineMark[];
    const eots = marks.filter((m) => m.tone === 'end-of-turn');
    expect(eots).toHaveLength(tape.timeline!.filter((e) => e.type === 'end-of-turn').length);
    expect(eots[0]!.title).toMatch(/^End of turn at \d+\.\d\d s: silence, waited \d+ ms; heard “What are your opening hours\?”$/);
    const cut = marks.find((m) => m.tone === 'interruption')!;
    expect(cut.title).toMatch(/Interruption taken at .* after \d word\(s\): “Actually/);
    expect(marks.find((m) => m.tone === 'dtmf')).toMatchObject({ label: 'DTMF 5', atMs: tape.events.find((e) => e.type === 'dtmf')!.atMs });
    expect(marks.at(-1)).toMatchObject({ tone: 'hangup', title: expect.stringContaining('remote-hangup') });
    // Times are in order.
    expect(marks.map((m) => m.atMs)).toEqual([...marks.map((m) => m.atMs)].sort((a, b) => a - b));
  });

  it('draws the assistant audio from the engine, the interrupted reply as such, and closes audio still playing at hang-up', () => {
    const spans = lane(model, 'assistant').filter((i): i is TimelineSpan => i.kind === 'span');
    expect(spans).toHaveLength(3);
    expect(spans[0]).toMatchObject({ tone: 'assistant', label: expect.stringMatching(/^Hello, thanks/) });
    expect(spans[1]!.tone).toBe('interrupted');
    const interruption = (lane(model, 'decisions') as TimelineMark[]).find((m) => m.tone === 'interruption')!;
    expect(Math.abs(spans[1]!.endMs - interruption.atMs)).toBeLessThan(50);
    expect(spans[2]!.endMs).toBe(model.durationMs);
  });
});

describe('buildTimeline without the engine timeline', () => {
  it('falls back to the transcript for the assistant and the interruptions, and leaves the VAD lane empty', () => {
    const { timeline: _, ...old } = tape;
    const model = buildTimeline({ transcript: call.transcript, tape: old, durationMs: null });
    expect(model.hasEngineTimeline).toBe(false);
    expect(lane(model, 'vad')).toEqual([]);
    expect(lane(model, 'assistant').filter((i) => i.kind === 'span')).toHaveLength(3);
    expect((lane(model, 'decisions') as TimelineMark[]).filter((m) => m.tone === 'interruption')).toHaveLength(2);
    expect((lane(model, 'decisions') as TimelineMark[]).some((m) => m.tone === 'dtmf')).toBe(true);
  });

  it('marks transfer and tool calls from the transcript and ignored interruptions with their reason', () => {
    const model = buildTimeline({
      transcript: [{ speaker: 'assistant', text: 'Putting you through.', start_ms: 1000, end_ms: 2000, function_calls: [{ name: 'transfer_call' }, { name: 'lookup_order' }] }],
      tape: { startedAtMs: 0, endedAtMs: 3000, truncated: false, events: [], timeline: [{ type: 'interruption', atMs: 1500, taken: false, reason: 'backchannel', transcript: 'uh-huh' }] },
    });
    const marks = lane(model, 'decisions') as TimelineMark[];
    expect(marks.map((m) => m.tone)).toEqual(['transfer', 'tool', 'interruption-ignored']);
    expect(marks[2]!.title).toBe('Interruption ignored at 1.50 s: backchannel (“uh-huh”)');
  });
});
