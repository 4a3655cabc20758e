/**
 * The turn timeline's model: a call's transcript and tape → lanes of spans and marks, every time
 * in ms from answer (the recording's zero). No DOM: the page draws it as SVG.
 *
 * Lanes: the caller's speech (transcript), what the VAD heard (tape timeline), the engine's
 * decisions (end of turn with its reason, interruptions taken or ignored, DTMF, tools and
 * transfers, provider errors, hang-up) and the assistant's audio (with fillers). A tape written
 * before it kept the engine's timeline still gives the transcript's lanes and the tape's DTMF.
 */
import type { TapeEventView, TapeView, TranscriptLine } from '../types.ts';
import { transcriptZeroMs } from '../types.ts';

export type LaneId = 'caller' | 'vad' | 'decisions' | 'assistant';

export type SpanTone = 'caller' | 'vad' | 'assistant' | 'interrupted';
export type MarkTone =
  | 'end-of-turn'
  | 'end-of-turn-skipped'
  | 'interruption'
  | 'interruption-ignored'
  | 'filler'
  | 'dtmf'
  | 'transfer'
  | 'tool'
  | 'error'
  | 'hangup';

export interface TimelineSpan {
  kind: 'span';
  startMs: number;
  endMs: number;
  /** Short text drawn in the span when it fits. */
  label: string;
  /** The full description (tooltip and accessible text). */
  title: string;
  tone: SpanTone;
}

export interface TimelineMark {
  kind: 'mark';
  atMs: number;
  label: string;
  title: string;
  tone: MarkTone;
}

export type TimelineItem = TimelineSpan | TimelineMark;

export interface TimelineLane {
  id: LaneId;
  label: string;
  items: TimelineItem[];
}

export interface TimelineModel {
  durationMs: number;
  lanes: TimelineLane[];
  /** False when the tape has no engine timeline (VAD and end-of-turn lanes then say so). */
  hasEngineTimeline: boolean;
}

export interface TimelineInput {
  transcript: readonly TranscriptLine[];
  tape: TapeView | null;
  /** The call's length (answer to end) when known, in ms. */
  durationMs?: number | null;
}

const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const quote = (text: unknown): string => (typeof text === 'string' && text ? `“${text}”` : '');
const short = (text: string, max = 40): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Pairs start/stop events into spans; one left open ends at `endMs`. */
function pairs(events: readonly TapeEventView[], start: string, stop: string, key: (e: TapeEventView) => unknown, endMs: number) {
  const open = new Map<unknown, TapeEventView>();
  const out: Array<{ start: TapeEventView; stop: TapeEventView | undefined; endMs: number }> = [];
  for (const e of events) {
    if (e.type === start) open.set(key(e), e);
    else if (e.type === stop) {
      const began = open.get(key(e));
      if (!began) continue;
      open.delete(key(e));
      out.push({ start: began, stop: e, endMs: e.atMs });
    }
  }
  for (const began of open.values()) out.push({ start: began, stop: undefined, endMs: Math.max(began.atMs, endMs) });
  return out.sort((a, b) => a.start.atMs - b.start.atMs);
}

/** The assistant line of the transcript playing at `atMs` (answer time), if any. */
function lineAt(lines: readonly TranscriptLine[], zeroMs: number, atMs: number, speaker: TranscriptLine['speaker']): TranscriptLine | undefined {
  let best: TranscriptLine | undefined;
  let bestDistance = Infinity;
  for (const l of lines) {
    if (l.speaker !== speaker) continue;
    const d = Math.abs(l.start_ms + zeroMs - atMs);
    if (d < bestDistance) {
      bestDistance = d;
      best = l;
    }
  }
  return bestDistance <= 1000 ? best : undefined;
}

export function buildTimeline(input: TimelineInput): TimelineModel {
  const { transcript, tape } = input;
  const zero = transcriptZeroMs(tape);
  const engine = tape?.timeline ?? [];
  const hasEngineTimeline = tape?.timeline !== undefined;
  const lastTranscriptMs = transcript.reduce((m, l) => Math.max(m, l.end_ms + zero), 0);
  const durationMs = Math.max(input.durationMs ?? 0, tape?.endedAtMs ?? 0, lastTranscriptMs, ...engine.map((e) => e.atMs), 1);

  const caller: TimelineItem[] = transcript
    .filter((l) => l.speaker === 'caller')
    .map((l) => ({
      kind: 'span',
      startMs: l.start_ms + zero,
      endMs: Math.max(l.end_ms, l.start_ms) + zero,
      label: short(l.text),
      title: `Caller ${s(l.start_ms + zero)}–${s(l.end_ms + zero)}: ${quote(l.text)}`,
      tone: 'caller',
    }));

  const vad: TimelineItem[] = pairs(engine, 'vad-speech-start', 'vad-speech-end', () => 'vad', durationMs).map((p) => {
    const detected = typeof p.start.detectedAtMs === 'number' ? p.start.detectedAtMs : undefined;
    return {
      kind: 'span',
      startMs: p.start.atMs,
      endMs: p.endMs,
      label: 'speech',
      title:
        `VAD: speech ${s(p.start.atMs)}–${s(p.endMs)}` +
        (detected !== undefined ? `, start detected ${Math.round(detected - p.start.atMs)} ms after onset` : '') +
        (p.stop ? '' : ' (still speaking at the end)'),
      tone: 'vad',
    };
  });

  const decisions: TimelineItem[] = [];
  const assistant: TimelineItem[] = [];
  for (const e of engine) {
    switch (e.type) {
      case 'end-of-turn': {
        const taken = e.taken !== false;
        decisions.push({
          kind: 'mark',
          atMs: e.atMs,
          label: 'end of turn',
          title: `End of turn at ${s(e.atMs)}: ${String(e.reason ?? 'unknown reason')}, waited ${Math.round(Number(e.waitedMs ?? 0))} ms${taken ? '' : ' — no words, no reply'}${e.transcript ? `; heard ${quote(e.transcript)}` : ''}`,
          tone: taken ? 'end-of-turn' : 'end-of-turn-skipped',
        });
        break;
      }
      case 'interruption':
        if (e.taken === true) {
          decisions.push({
            kind: 'mark',
            atMs: e.atMs,
            label: 'interruption',
            title: `Interruption taken at ${s(e.atMs)}${e.words !== undefined ? ` after ${String(e.words)} word(s)` : ''}${e.transcript ? `: ${quote(e.transcript)}` : ''}${typeof e.heard === 'string' ? ` (caller had heard ${quote(e.heard)})` : ''}`,
            tone: 'interruption',
          });
        } else {
          decisions.push({
            kind: 'mark',
            atMs: e.atMs,
            label: 'ignored',
            title: `Interruption ignored at ${s(e.atMs)}: ${String(e.reason ?? 'no reason given')}${e.transcript ? ` (${quote(e.transcript)})` : ''}`,
            tone: 'interruption-ignored',
          });
        }
        break;
      case 'filler':
        assistant.push({ kind: 'mark', atMs: e.atMs, label: 'filler', title: `Filler at ${s(e.atMs)}: ${quote(e.text)}${e.category ? ` (${String(e.category)})` : ''}`, tone: 'filler' });
        break;
      case 'provider-error':
      case 'model-error':
      case 'model-lost':
        decisions.push({ kind: 'mark', atMs: e.atMs, label: 'error', title: `${e.type} at ${s(e.atMs)}: ${String(e.provider ?? '')} ${String(e.message ?? e.reason ?? '')}`.trim(), tone: 'error' });
        break;
      case 'function-call':
        decisions.push(toolMark(String(e.name ?? 'tool'), e.atMs));
        break;
      default:
        if (e.type.includes('transfer')) decisions.push({ kind: 'mark', atMs: e.atMs, label: 'transfer', title: `Transfer at ${s(e.atMs)}`, tone: 'transfer' });
    }
  }

  // Tools the pipeline ran are on the transcript's replies (realtime calls have them on the timeline).
  if (!engine.some((e) => e.type === 'function-call')) {
    for (const l of transcript) for (const f of l.function_calls ?? []) decisions.push(toolMark(f.name, l.start_ms + zero));
  }

  // DTMF and the hang-up as the call's media heard them (the tape's own events).
  for (const e of tape?.events ?? []) {
    if (e.type === 'dtmf') decisions.push({ kind: 'mark', atMs: e.atMs, label: `DTMF ${String(e.digit)}`, title: `Key ${String(e.digit)} pressed at ${s(e.atMs)} for ${Math.round(Number(e.durationMs ?? 0))} ms`, tone: 'dtmf' });
    if (e.type === 'hangup') decisions.push({ kind: 'mark', atMs: e.atMs, label: 'hang-up', title: `Hang-up at ${s(e.atMs)}: ${String(e.cause ?? '')}`, tone: 'hangup' });
  }

  const audio = pairs(engine, 'assistant-audio-start', 'assistant-audio-stop', (e) => e.turn ?? e.key, durationMs);
  if (audio.length > 0) {
    for (const p of audio) {
      const line = lineAt(transcript, zero, p.start.atMs, 'assistant');
      const interrupted = p.stop?.interrupted === true || line?.interrupted === true;
      assistant.push({
        kind: 'span',
        startMs: p.start.atMs,
        endMs: p.endMs,
        label: short(line?.text ?? String(p.start.kind ?? 'speech')),
        title: `Assistant (${String(p.start.kind ?? 'reply')}) ${s(p.start.atMs)}–${s(p.endMs)}${interrupted ? ', interrupted' : ''}${line ? `: ${quote(line.text)}` : ''}`,
        tone: interrupted ? 'interrupted' : 'assistant',
      });
    }
  } else {
    for (const l of transcript.filter((x) => x.speaker === 'assistant')) {
      assistant.push({
        kind: 'span',
        startMs: l.start_ms + zero,
        endMs: Math.max(l.end_ms, l.start_ms) + zero,
        label: short(l.text),
        title: `Assistant (${l.kind ?? 'reply'}) ${s(l.start_ms + zero)}–${s(l.end_ms + zero)}${l.interrupted ? ', interrupted' : ''}: ${quote(l.text)}`,
        tone: l.interrupted ? 'interrupted' : 'assistant',
      });
      if (l.interrupted && !hasEngineTimeline) {
        decisions.push({ kind: 'mark', atMs: l.end_ms + zero, label: 'interruption', title: `Interruption at ${s(l.end_ms + zero)}: the caller cut the reply off`, tone: 'interruption' });
      }
    }
  }
  const byTime = (a: TimelineItem, b: TimelineItem) => start(a) - start(b);
  return {
    durationMs,
    hasEngineTimeline,
    lanes: [
      { id: 'caller', label: 'Caller', items: caller.sort(byTime) },
      { id: 'vad', label: 'VAD', items: vad },
      { id: 'decisions', label: 'Decisions', items: decisions.sort(byTime) },
      { id: 'assistant', label: 'Assistant', items: assistant.sort(byTime) },
    ],
  };
}

function toolMark(name: string, atMs: number): TimelineMark {
  const transfer = /transfer/i.test(name);
  return { kind: 'mark', atMs, label: transfer ? 'transfer' : 'tool', title: `${transfer ? 'Transfer' : 'Tool'} ${name} at ${s(atMs)}`, tone: transfer ? 'transfer' : 'tool' };
}

export function start(item: TimelineItem): number {
  return item.kind === 'span' ? item.startMs : item.atMs;
}

/** x (px) of `ms` on a timeline `width` px wide showing `durationMs`. */
export function xOf(ms: number, durationMs: number, width: number): number {
  return durationMs > 0 ? Math.min(width, Math.max(0, (ms / durationMs) * width)) : 0;
}
