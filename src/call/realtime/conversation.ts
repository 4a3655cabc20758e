/**
 * The realtime call's record of the conversation: the transcript (times in ms from answer), the
 * history in the pipeline's shape (for the call result and post-call work), and what a
 * reconnected model is re-seeded with. An interrupted utterance is kept only as far as the
 * caller heard it, everywhere: transcript, history and re-seed alike.
 *
 * The re-seed follows the model's own order, not the order things finished in: a caller turn
 * takes its place when the model hears it start, an utterance when its first audio or text
 * arrives, a function call when it is run and its output when the result is in. Places whose
 * text never came (noise, an answer cut before a word was heard) are left out.
 */
import type { FunctionCallRecord, TurnMessage } from '../../agent/types.ts';
import type { RealtimeConnection, RealtimeHistoryItem } from '../../providers/realtime/realtime.ts';
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
  /**
   * Dualplex: the item in the model's conversation holding the text our TTS speaks (the model's
   * text answer, or the item we created for a fixed line), on `conn`. Replaced by what was heard
   * when the caller cuts in.
   */
  textItemId?: string;
  /** The connection the utterance's item lives on. */
  conn?: RealtimeConnection;
  /** What the model's item holds when that is not the full text (re-seeded while playing). */
  modelText?: string;
  startMs?: number;
  finished: boolean;
  /** The answer to tool results: the tool calls run since the last such answer belong to it. */
  afterTools?: boolean;
}

interface CallerTurn {
  startMs: number;
  endMs?: number;
}

/** A place in the model's conversation: a text turn filled in once known, or a function item. */
type LogEntry = TextPlace | Extract<RealtimeHistoryItem, { type: string }>;

interface TextPlace {
  role: 'user' | 'assistant';
  text: string;
  /** The utterance's key (assistant places). */
  key?: string;
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
  /** The model's conversation as this run made it, in order (see the header). */
  private readonly log: LogEntry[] = [];
  /** Text places by caller item id or utterance key. */
  private readonly places = new Map<string, TextPlace>();
  /** How much of `history` came from before this run (call control seeds it): re-seeded first. */
  private priorCount: number | undefined;

  callerStarted(itemId: string, startMs: number): void {
    this.callerTurns.set(itemId, { startMs });
    this.place(itemId, 'user');
  }

  callerStopped(itemId: string, endMs: number): void {
    const t = this.callerTurns.get(itemId);
    if (t) t.endMs = endMs;
    else this.callerTurns.set(itemId, { startMs: endMs, endMs });
    this.place(itemId, 'user');
  }

  /** The model's transcript of a caller turn (it may arrive after the reply has started). */
  callerSaid(itemId: string, text: string, nowMs: number): void {
    const clean = text.trim();
    if (!clean) return;
    this.own();
    const t = this.callerTurns.get(itemId);
    const startMs = t?.startMs ?? nowMs;
    this.transcript.add({ speaker: 'caller', text: clean, startMs, endMs: Math.max(startMs, t?.endMs ?? nowMs) });
    this.history.push({ role: 'user', content: clean });
    this.place(itemId, 'user').text = clean;
  }

  /** An utterance began (its first audio or text): its place in the model's conversation. */
  opened(u: Utterance): void {
    this.place(u.key, 'assistant');
  }

  /** A function call is being run: it joins the re-seed now, its output when the result is in. */
  callStarted(callId: string, name: string, args: string): void {
    this.own();
    this.log.push({ type: 'function_call', callId, name, arguments: args });
  }

  /** A tool ran (its record goes on the transcript entry of the answer to it). */
  functionCalled(record: FunctionCallRecord): void {
    this.functionCalls.push(record);
  }

  /** What the model was sent as the output of call `callId`. */
  callOutput(callId: string, output: string): void {
    this.own();
    this.log.push({ type: 'function_call_output', callId, output });
  }

  /**
   * The utterance is over for the caller. `playedMs` only matters when `interrupted`: the words
   * kept are those whose audio had been sent by then (`heardText`).
   */
  finish(u: Utterance, endMs: number, interrupted: boolean, playedMs: number): FinishedUtterance | undefined {
    if (u.finished) return undefined;
    u.finished = true;
    const place = this.place(u.key, 'assistant');
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
    place.text = heard;
    return { entry, heard, full };
  }

  /**
   * For a reconnected model: the conversation before this run, then this run's in the model's
   * order: what was said and heard, and every function call run with its output. `playing`:
   * utterances still being played out (audio the old connection already sent): they go in with
   * the text they will be heard with unless cut, under the given ids, so a cut can correct them.
   */
  reseed(playing: ReadonlyMap<string, { id: string; text: string }> = new Map()): RealtimeHistoryItem[] {
    const prior = this.history.slice(0, this.priorCount ?? this.history.length).map((m) => ({ role: m.role, text: m.content }));
    const own: RealtimeHistoryItem[] = [];
    for (const e of this.log) {
      if ('type' in e) own.push(e);
      else if (e.text !== '') own.push({ role: e.role, text: e.text });
      else if (e.key !== undefined && playing.has(e.key)) own.push({ role: 'assistant', ...playing.get(e.key)! });
    }
    return [...prior, ...own];
  }

  /** The place of a text turn, made at its first mention. */
  private place(ref: string, role: 'user' | 'assistant'): TextPlace {
    let p = this.places.get(ref);
    if (!p) {
      this.own();
      p = role === 'assistant' ? { role, text: '', key: ref } : { role, text: '' };
      this.places.set(ref, p);
      this.log.push(p);
    }
    return p;
  }

  /** From the first thing this run records on, `history` grows with this run's turns. */
  private own(): void {
    this.priorCount ??= this.history.length;
  }
}
