/**
 * Bookkeeping of finished turns: the history the agent sees (an interrupted reply only as far as
 * the caller heard it), the transcript with times, and the latency parts of each reply.
 */
import type { TurnMessage } from '../../agent/types.ts';
import type { AssistantTurnKind, Transcript, TranscriptEntry, TurnLatency } from '../transcript.ts';
import type { CascadeMetrics } from './metrics.ts';
import type { SpokenTurn } from './spoken-turn.ts';

interface LatencyBase {
  decisionAtMs: number;
  speechEndMs: number;
  latency: TurnLatency;
}

interface TurnMeta {
  kind: AssistantTurnKind;
  audioStartMs?: number;
  base?: LatencyBase;
  finished: boolean;
}

export class TurnBook {
  private readonly meta = new Map<number, TurnMeta>();
  private lastCaller: { entry: TranscriptEntry; message: TurnMessage } | undefined;

  constructor(
    private readonly transcript: Transcript,
    private readonly history: TurnMessage[],
    private readonly metrics?: CascadeMetrics,
  ) {}

  started(id: number, kind: AssistantTurnKind): void {
    this.meta.set(id, { kind, finished: false });
  }

  kindOf(id: number): AssistantTurnKind | undefined {
    return this.meta.get(id)?.kind;
  }

  callerTurn(text: string, startMs: number, endMs: number): void {
    const message: TurnMessage = { role: 'user', content: text };
    this.history.push(message);
    const entry = this.transcript.add({ speaker: 'caller', text, startMs, endMs });
    this.lastCaller = { entry, message };
  }

  /**
   * The caller went on before the reply to their last words was audible: that reply is dropped
   * and both parts become one turn. Returns the merged text, or undefined if nothing to merge.
   */
  mergeCallerTurn(text: string): { text: string; startMs: number } | undefined {
    const last = this.lastCaller;
    if (!last || this.history[this.history.length - 1] !== last.message) return undefined;
    this.history.pop();
    const entries = this.transcript.entries as TranscriptEntry[];
    const i = entries.indexOf(last.entry);
    if (i >= 0) entries.splice(i, 1);
    this.lastCaller = undefined;
    return { text: `${last.message.content} ${text}`, startMs: last.entry.startMs };
  }

  setLatencyBase(id: number, base: LatencyBase): void {
    const m = this.meta.get(id);
    if (m) m.base = base;
  }

  audioStarted(id: number, atMs: number): void {
    const m = this.meta.get(id);
    if (m) m.audioStartMs ??= atMs;
  }

  /** Record the finished turn once; false when it was already recorded. */
  finish(turn: SpokenTurn, endMs: number, interrupted: boolean, playedMs: number): boolean {
    const m = this.meta.get(turn.id) ?? { kind: turn.kind, finished: false };
    if (m.finished) return false;
    m.finished = true;
    this.meta.set(turn.id, m);
    const spoken = turn.segments
      .filter((s) => !s.filler && s.frames > 0)
      .map((s) => s.text)
      .join(' ');
    const text = interrupted ? turn.heard(playedMs).text : spoken;
    if (text) this.history.push({ role: 'assistant', content: text });
    if (!text && turn.fillers.length === 0 && m.audioStartMs === undefined) return true;
    const entry: TranscriptEntry = { speaker: 'assistant', text, startMs: m.audioStartMs ?? endMs, endMs, kind: turn.kind };
    if (interrupted) {
      entry.interrupted = true;
      entry.fullText = turn.segments.filter((s) => !s.filler).map((s) => s.text).join(' ') || turn.reply;
    }
    if (turn.fillers.length > 0) entry.fillers = [...turn.fillers];
    if (turn.functionCalls.length > 0) entry.functionCalls = turn.functionCalls;
    if (m.base) {
      const latency: TurnLatency = { ...m.base.latency };
      if (turn.firstTokenAtMs !== undefined) latency.llmFirstTokenMs = turn.firstTokenAtMs - m.base.decisionAtMs;
      if (turn.ttsFirstAudioMs !== undefined) latency.ttsFirstAudioMs = turn.ttsFirstAudioMs;
      if (turn.firstFrameAtMs !== undefined) {
        latency.firstFrameOutMs = turn.firstFrameAtMs - m.base.decisionAtMs;
        latency.totalMs = turn.firstFrameAtMs - m.base.speechEndMs;
      }
      entry.latency = latency;
      this.metrics?.observe(latency);
    }
    this.transcript.add(entry);
    return true;
  }
}
