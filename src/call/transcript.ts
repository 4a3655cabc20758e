/**
 * The call's transcript: one entry per caller turn and per assistant utterance, with times in ms
 * from the call's answer and, for replies, the latency split into the parts a slow answer can be
 * blamed on. Post-call evaluation, webhooks and the call record read it as plain JSON.
 */

export type Speaker = 'caller' | 'assistant';

export type AssistantTurnKind = 'greeting' | 'reply' | 'reengagement' | 'goodbye' | 'apology';

/**
 * Latency parts of one reply, each in ms:
 * - endpointingMs: from the caller's silence starting to the end-of-turn decision;
 * - sttFinalMs: from the silence starting to the last STT final used for the turn;
 * - llmFirstTokenMs: from the decision to the model's first token;
 * - ttsFirstAudioMs: from the first sentence sent to TTS to its first frame;
 * - firstFrameOutMs: from the decision to the first reply frame written to the outbound media
 *   (a filler does not count: it is there because this number is large);
 * - totalMs: from the silence starting to that frame (what the caller experiences as the gap).
 */
export interface TurnLatency {
  endpointingMs?: number;
  sttFinalMs?: number;
  llmFirstTokenMs?: number;
  ttsFirstAudioMs?: number;
  firstFrameOutMs?: number;
  totalMs?: number;
}

export interface TranscriptEntry {
  speaker: Speaker;
  text: string;
  startMs: number;
  endMs: number;
  /** Assistant entries: what produced the utterance. */
  kind?: AssistantTurnKind;
  /** Assistant entries cut off by the caller; `text` is then what the caller heard. */
  interrupted?: boolean;
  /** The full reply when it was interrupted. */
  fullText?: string;
  /** Fillers spoken before the reply (not part of the assistant's history). */
  fillers?: string[];
  latency?: TurnLatency;
  /** Tools the agent ran for this reply. */
  functionCalls?: { name: string; arguments: Record<string, unknown>; result: Record<string, unknown> }[];
}

export class Transcript {
  private readonly list: TranscriptEntry[] = [];
  /** Told of every line as it is added (the live call feed). */
  onAdd: ((entry: TranscriptEntry) => void) | undefined;

  add(entry: TranscriptEntry): TranscriptEntry {
    this.list.push(entry);
    this.onAdd?.(entry);
    return entry;
  }

  get entries(): readonly TranscriptEntry[] {
    return this.list;
  }

  /** Entries ordered by start time (a caller turn is added after the reply it overlaps began). */
  toJSON(): TranscriptEntry[] {
    return [...this.list].sort((a, b) => a.startMs - b.startMs);
  }
}
