/**
 * The model's responses in flight and the audio items they produce. A response cancelled by a
 * barge-in keeps its entry until `response.done`, so late deltas of it are recognised and dropped
 * rather than mistaken for a new answer.
 */
import type { AssistantTurnKind } from '../transcript.ts';
import type { Utterance } from './conversation.ts';
import type { PendingCall } from './function-calls.ts';

export interface ResponseState {
  kind: AssistantTurnKind;
  calls: PendingCall[];
  cancelled: boolean;
  /** It answers tool results (their records go on its transcript entry). */
  afterTools: boolean;
  /** Dualplex: our TTS speaking its text. */
  tts?: Utterance;
  /** Edits of the model's conversation that wait for this response to be done (dualplex barge-in). */
  afterDone: (() => void)[];
}

export class ResponseBook {
  private readonly map = new Map<string, ResponseState>();

  /** `utterances`: the call's open utterances, shared with its TTS lines. */
  constructor(private readonly utterances: Map<string, Utterance>) {}

  start(id: string, kind: AssistantTurnKind, afterTools: boolean): void {
    this.map.set(id, { kind, calls: [], cancelled: false, afterTools, afterDone: [] });
  }

  /** A live (not cancelled) response. */
  live(id: string): ResponseState | undefined {
    const r = this.map.get(id);
    return r && !r.cancelled ? r : undefined;
  }

  /** A response not yet done, cancelled or not. */
  pending(id: string): ResponseState | undefined {
    return this.map.get(id);
  }

  /** `response.done`: forget it and hand back what it left (function calls, TTS). */
  take(id: string): ResponseState | undefined {
    const r = this.map.get(id);
    this.map.delete(id);
    return r;
  }

  cancelAll(): void {
    for (const r of this.map.values()) r.cancelled = true;
  }

  /** The utterance of a model audio item, created on its first audio or transcript. */
  item(responseId: string, itemId: string, contentIndex: number): Utterance | undefined {
    const existing = this.utterances.get(itemId);
    if (existing) return existing.finished ? undefined : existing;
    const resp = this.live(responseId);
    if (!resp) return undefined;
    const u: Utterance = { key: itemId, kind: resp.kind, responseId, itemId, contentIndex, text: '', frames: 0, finished: false, afterTools: resp.afterTools };
    this.utterances.set(itemId, u);
    return u;
  }
}
