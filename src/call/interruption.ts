/**
 * Barge-in policy: does caller speech over the assistant interrupt it? A pure core fed VAD
 * events, transcripts and ticks with their times; it returns actions and `wakeAtMs`.
 *
 * "Pause first, then commit": at the first speech over the assistant the owner may duck or pause
 * the assistant's audio at once (so a real interruption is not talked over while we gather
 * evidence), the interruption commits when enough speech — and, with `min_interrupt_words`,
 * enough non-backchannel words — has accumulated, and if that never happens (a cough, a door,
 * "mm-hmm") the assistant resumes instead of going silent.
 */
import { interpolateKnots } from './turn-taking.ts';

/**
 * interrupt_sensitivity (0–5) → accumulated caller speech (ms) that counts as an interruption.
 * Higher sensitivity = less speech needed. Piecewise linear, clamped, non-finite → 0.5.
 */
export const INTERRUPT_SPEECH_KNOTS: readonly (readonly [number, number])[] = [
  [0, 600],
  [0.5, 300],
  [1, 250],
  [2, 180],
  [3, 130],
  [4, 100],
  [5, 80],
];

export function interruptSpeechMs(sensitivity: number): number {
  return interpolateKnots(INTERRUPT_SPEECH_KNOTS, Number.isFinite(sensitivity) ? sensitivity : 0.5);
}

/** Whole utterances that acknowledge rather than take the turn (lower case, no punctuation). */
export const BACKCHANNEL_WORDS: ReadonlySet<string> = new Set(
  (
    'mm mmm mhm hmm hm uh-huh uhhuh uh huh mm-hmm mmhmm mm-hm um-hum yeah yea yep yup yes ok okay ' +
    'right sure alright aha ah oh i see got it cool nice great good fine true exactly indeed ' +
    'sí si vale claro ajá oui ouais d’accord daccord ja jawohl genau stimmt okey'
  ).split(' '),
);

/** Words in `text`, or 0 when every word is a backchannel ("yeah okay", "mm-hmm"). */
export function countInterruptWords(text: string): number {
  const words = splitWords(text);
  if (words.every((w) => BACKCHANNEL_WORDS.has(w))) return 0;
  return words.length;
}

export function isBackchannel(text: string): boolean {
  const words = splitWords(text);
  return words.length > 0 && words.every((w) => BACKCHANNEL_WORDS.has(w));
}

function splitWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter((w) => w.length > 0);
}

export type DuckMode = 'none' | 'duck' | 'pause';

export interface InterruptionOptions {
  allowInterruptions?: boolean;
  /** 0–5, see INTERRUPT_SPEECH_KNOTS. Default 0.5. */
  interruptSensitivity?: number;
  /** Unset, or 0: speech duration alone decides. 1–10: that many non-backchannel words too. */
  minInterruptWords?: number;
  /** What the assistant's audio does while an overlap is undecided. Default 'duck'. */
  onSpeechOverlap?: DuckMode;
  /**
   * After the caller's speech ends uncommitted, how long to wait for a late STT final before
   * resuming. Finals typically trail the VAD's speech end by 100–400 ms.
   */
  resumeGraceMs?: number;
  /** An overlap undecided this long after it began resumes anyway (steady noise). */
  maxPendingMs?: number;
}

export type IgnoreReason = 'backchannel' | 'too-short' | 'noise' | 'not-allowed';

export type InterruptionAction =
  | { action: 'duck' | 'pause'; atMs: number }
  | { action: 'interrupt'; atMs: number; speechMs: number; words: number; transcript: string }
  | { action: 'ignore'; atMs: number; reason: IgnoreReason; transcript: string }
  | { action: 'resume'; atMs: number };

export interface InterruptionStep {
  actions: InterruptionAction[];
  wakeAtMs?: number;
}

interface Overlap {
  firstSpeechMs: number;
  /** Speech accumulated in closed segments of this overlap. */
  closedSpeechMs: number;
  /** Start of the segment in progress, if the caller is speaking now. */
  segmentStartMs: number | undefined;
  lastSpeechEndMs: number | undefined;
  finals: string[];
  interim: string;
  ducked: boolean;
}

export class InterruptionPolicy {
  readonly requiredSpeechMs: number;
  readonly minWords: number;
  private readonly allow: boolean;
  private readonly mode: DuckMode;
  private readonly resumeGraceMs: number;
  private readonly maxPendingMs: number;
  private assistantSpeaking = false;
  private overlap: Overlap | undefined;
  /** The current overlap was settled (ignored); new evidence needs a new speech start. */
  private settled = false;

  constructor(options: InterruptionOptions = {}) {
    this.allow = options.allowInterruptions ?? true;
    this.requiredSpeechMs = interruptSpeechMs(options.interruptSensitivity ?? 0.5);
    this.minWords = Math.max(0, Math.floor(options.minInterruptWords ?? 0));
    this.mode = options.onSpeechOverlap ?? 'duck';
    this.resumeGraceMs = options.resumeGraceMs ?? 500;
    this.maxPendingMs = options.maxPendingMs ?? 2500;
  }

  assistantStarted(_atMs: number): InterruptionStep {
    this.assistantSpeaking = true;
    this.overlap = undefined;
    this.settled = false;
    return { actions: [] };
  }

  /** The assistant finished or was cut off: any undecided overlap no longer matters. */
  assistantStopped(_atMs: number): InterruptionStep {
    this.assistantSpeaking = false;
    this.overlap = undefined;
    return { actions: [] };
  }

  /** `startMs`: the speech onset (SpeechStartEvent.startMs); `atMs`: now. */
  speechStart(startMs: number, atMs: number): InterruptionStep {
    if (!this.assistantSpeaking) return { actions: [] };
    const onsetMs = Math.min(startMs, atMs);
    if (!this.allow) {
      return { actions: [{ action: 'ignore', atMs, reason: 'not-allowed', transcript: '' }] };
    }
    const actions: InterruptionAction[] = [];
    if (!this.overlap || this.settled) {
      this.settled = false;
      this.overlap = {
        firstSpeechMs: onsetMs,
        closedSpeechMs: 0,
        segmentStartMs: onsetMs,
        lastSpeechEndMs: undefined,
        finals: [],
        interim: '',
        ducked: this.mode !== 'none',
      };
      if (this.mode !== 'none') actions.push({ action: this.mode, atMs });
    } else {
      this.overlap.segmentStartMs = onsetMs;
    }
    return this.evaluate(atMs, actions);
  }

  /** `endMs`: first silent frame (SpeechEndEvent.endMs); `atMs`: now. */
  speechEnd(endMs: number, atMs: number): InterruptionStep {
    const o = this.overlap;
    if (!o || this.settled || o.segmentStartMs === undefined) return { actions: [] };
    const end = Math.min(endMs, atMs);
    o.closedSpeechMs += Math.max(0, end - o.segmentStartMs);
    o.segmentStartMs = undefined;
    o.lastSpeechEndMs = end;
    return this.evaluate(atMs, []);
  }

  transcriptUpdate(text: string, isFinal: boolean, atMs: number): InterruptionStep {
    const o = this.overlap;
    if (!o || this.settled) return { actions: [] };
    if (isFinal) {
      if (text.trim()) o.finals.push(text.trim());
      o.interim = '';
    } else {
      o.interim = text.trim();
    }
    return this.evaluate(atMs, []);
  }

  tick(nowMs: number): InterruptionStep {
    if (!this.overlap || this.settled) return { actions: [] };
    return this.evaluate(nowMs, []);
  }

  private transcriptOf(o: Overlap): string {
    return [...o.finals, o.interim].filter((s) => s).join(' ');
  }

  private speechMsAt(o: Overlap, nowMs: number): number {
    return o.closedSpeechMs + (o.segmentStartMs === undefined ? 0 : Math.max(0, nowMs - o.segmentStartMs));
  }

  private evaluate(nowMs: number, actions: InterruptionAction[]): InterruptionStep {
    const o = this.overlap!;
    const speechMs = this.speechMsAt(o, nowMs);
    const transcript = this.transcriptOf(o);
    const words = countInterruptWords(transcript);
    const enoughSpeech = speechMs >= this.requiredSpeechMs;
    const enoughWords = this.minWords === 0 || words >= this.minWords;
    if (enoughSpeech && enoughWords) {
      actions.push({ action: 'interrupt', atMs: nowMs, speechMs, words, transcript });
      // Committed: the assistant stops; the endpointer now owns the caller's turn.
      this.overlap = undefined;
      this.assistantSpeaking = false;
      return { actions };
    }

    const speaking = o.segmentStartMs !== undefined;
    const giveUpAtMs = o.firstSpeechMs + this.maxPendingMs;
    const graceEndMs = o.lastSpeechEndMs === undefined ? Infinity : o.lastSpeechEndMs + this.resumeGraceMs;
    const expired = nowMs >= giveUpAtMs || (!speaking && nowMs >= graceEndMs);
    if (expired) {
      actions.push({ action: 'ignore', atMs: nowMs, reason: this.ignoreReason(transcript, words, enoughSpeech), transcript });
      if (o.ducked) actions.push({ action: 'resume', atMs: nowMs });
      this.settled = true;
      return { actions };
    }

    // Next moment something can change without a new event: the speech requirement being met
    // while the caller keeps talking, the grace after their speech ended, or the give-up time.
    let wakeAtMs = giveUpAtMs;
    if (speaking && !enoughSpeech) wakeAtMs = Math.min(wakeAtMs, nowMs + (this.requiredSpeechMs - speechMs));
    if (!speaking) wakeAtMs = Math.min(wakeAtMs, graceEndMs);
    return { actions, wakeAtMs };
  }

  private ignoreReason(transcript: string, words: number, enoughSpeech: boolean): IgnoreReason {
    if (isBackchannel(transcript)) return 'backchannel';
    if (words > 0 || !enoughSpeech) return 'too-short';
    return 'noise';
  }
}

/** One TTS utterance the assistant spoke (or began to): its text and its audio length. */
export interface SpokenSegment {
  text: string;
  durationMs: number;
}

export interface HeardText {
  /** What the caller heard, for the history: whole segments, then a word prefix of the cut one. */
  text: string;
  /** True when every segment was played to the end. */
  complete: boolean;
}

/**
 * What the caller actually heard when the assistant was cut off after `playedMs` of audio.
 * Whole segments up to the cut; within the cut segment, words whose end falls inside the played
 * fraction, with each word weighted by its length in characters (speech time tracks syllables,
 * which tracks letters far better than a flat per-word share).
 */
export function heardText(segments: readonly SpokenSegment[], playedMs: number): HeardText {
  const parts: string[] = [];
  let remaining = Math.max(0, playedMs);
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const text = seg.text.trim();
    if (remaining >= seg.durationMs) {
      if (text) parts.push(text);
      remaining -= seg.durationMs;
      continue;
    }
    const words = text.split(/\s+/).filter((w) => w);
    const weights = words.map((w) => w.length + 1);
    const total = weights.reduce((a, b) => a + b, 0);
    const heardUnits = seg.durationMs > 0 ? (remaining / seg.durationMs) * total : 0;
    let acc = 0;
    let n = 0;
    for (const w of weights) {
      if (acc + w > heardUnits) break;
      acc += w;
      n++;
    }
    if (n > 0) parts.push(words.slice(0, n).join(' '));
    return { text: parts.join(' '), complete: false };
  }
  return { text: parts.join(' '), complete: true };
}
