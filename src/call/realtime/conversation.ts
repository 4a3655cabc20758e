/**
 * The realtime call's record of the conversation: the transcript (times in ms from answer), the
 * history in the pipeline's shape (for the call result and post-call work), and the text history
 * a reconnected model is re-seeded with. An interrupted utterance is kept only as far as the
 * caller heard it, everywhere: transcript, history and re-seed alike.
 */
import type { FunctionCallRecord, TurnMessage } from '../../agent/types.ts';
import type { RealtimeHistoryItem } from '../../providers/realtime/realtime.ts';
import { heardText } from '../interruption.ts';
import { Transcript, type AssistantTurnKind, type TranscriptEntry } from '../transcript.ts';
import type { TtsUtterance } from './tts-utterance.ts';

/** One thing the assistant says: a model audio item (multimodal) or a TTS utterance (dualplex). */
export interface Utterance {
  key: string;
  kind: AssistantTurnKind;
  responseId: string | undefined;
  /** Multimodal: the model's item, truncated on barge-in. */
  itemId?: string;
  contentIndex: number;
  /** Multimodal: the model's transcript of its audio. */
  text: string;
  /** Multimodal: 20 ms frames received from the model. */
  frames: number;
  /** Dualplex and fixed lines in dualplex: our TTS speaking it. */
  tts?: TtsUtterance;
  startMs?: number;
  finished: boolean;
  /** The answer to tool results: the tool calls run since the last such answer belong to it. */
  afterTools?: boolean;
}

interface CallerTurn {
  startMs: number;
  endMs?: number;
}

export interface FinishedUtterance {
  entry: TranscriptEntry | undefined;
  heard: string;
  full: string;
}

export class Conversation {
  readonly transcript = new Transcript();
  readonly history: TurnMessage[] = [];
  private readonly callerTurns = new Map<string, CallerTurn>();
  /** Tool calls run since the last answer to tool results: they belong to the next one. */
  private functionCalls: FunctionCallRecord[] = [];

  callerStarted(itemId: string, startMs: number): void {
    this.callerTurns.set(itemId, { startMs });
  }

  callerStopped(itemId: string, endMs: number): void {
    const t = this.callerTurns.get(itemId);
    if (t) t.endMs = endMs;
    else this.callerTurns.set(itemId, { startMs: endMs, endMs });
  }

  /** The model's transcript of a caller turn (it may arrive after the reply has started). */
  callerSaid(itemId: string, text: string, nowMs: number): void {
    const clean = text.trim();
    if (!clean) return;
    const t = this.callerTurns.get(itemId);
    const startMs = t?.startMs ?? nowMs;
    this.transcript.add({ speaker: 'caller', text: clean, startMs, endMs: Math.max(startMs, t?.endMs ?? nowMs) });
    this.history.push({ role: 'user', content: clean });
  }

  functionCalled(record: FunctionCallRecord): void {
    this.functionCalls.push(record);
  }

  /**
   * The utterance is over for the caller. `playedMs` only matters when `interrupted`: the words
   * kept are those whose audio had been sent by then (`heardText`).
   */
  finish(u: Utterance, endMs: number, interrupted: boolean, playedMs: number): FinishedUtterance | undefined {
    if (u.finished) return undefined;
    u.finished = true;
    const full = (u.tts ? u.tts.text : u.text).trim();
    let heard = full;
    if (interrupted) {
      heard = u.tts
        ? u.tts.heard(playedMs).text
        : heardText([{ text: full, durationMs: u.frames * 20 }], playedMs).text;
    }
    if (!full) return { entry: undefined, heard, full };
    const entry: TranscriptEntry = { speaker: 'assistant', text: heard, startMs: u.startMs ?? endMs, endMs, kind: u.kind };
    if (interrupted && heard !== full) {
      entry.interrupted = true;
      entry.fullText = full;
    }
    if (this.functionCalls.length > 0 && u.afterTools) {
      entry.functionCalls = this.functionCalls;
      this.functionCalls = [];
    }
    this.transcript.add(entry);
    if (heard) this.history.push({ role: 'assistant', content: heard });
    return { entry, heard, full };
  }

  /** Text turns for a reconnected model: exactly what was said and heard so far. */
  reseed(): RealtimeHistoryItem[] {
    return this.history.map((m) => ({ role: m.role, text: m.content }));
  }
}
