/**
 * Endpointing: when has the caller finished their turn? A pure core: it is fed VAD events,
 * transcripts and the assistant's speaking state, each with its time, and returns decisions plus
 * `wakeAtMs` (when the owner must call `tick` next). It owns no timer, so a replay on a virtual
 * clock takes exactly the same decisions as a live call.
 *
 * Silence is measured from the VAD's `endMs` (the first silent frame), not from when the VAD
 * noticed: the detector already spent its own `minSilenceMs` confirming the silence, and counting
 * from detection would add that on top of every turn.
 */
import { heuristicEndOfTurn, type TurnHint } from './end-of-turn-heuristic.ts';

export type { TurnHint } from './end-of-turn-heuristic.ts';
export { heuristicEndOfTurn } from './end-of-turn-heuristic.ts';

export type EndpointType = 'vad' | 'ai';

/**
 * endpoint_sensitivity (0–5) → silence that ends a turn. Piecewise linear between these knots,
 * monotonic decreasing, clamped to [0, 5]; a non-finite value means the default 0.5. Most of the
 * range sits near the default because people notice 100 ms there; the top end is for fast
 * question-and-answer bots that accept cutting a slow talker off.
 */
export const ENDPOINT_SILENCE_KNOTS: readonly (readonly [number, number])[] = [
  [0, 1200],
  [0.5, 700],
  [1, 600],
  [2, 450],
  [3, 330],
  [4, 250],
  [5, 200],
];

export function endpointSilenceMs(sensitivity: number): number {
  return interpolateKnots(ENDPOINT_SILENCE_KNOTS, Number.isFinite(sensitivity) ? sensitivity : 0.5);
}

/** Linear interpolation over ascending knots, clamped at both ends. Rounded to whole ms. */
export function interpolateKnots(knots: readonly (readonly [number, number])[], x: number): number {
  const first = knots[0]!;
  const last = knots[knots.length - 1]!;
  if (x <= first[0]) return first[1];
  if (x >= last[0]) return last[1];
  for (let i = 1; i < knots.length; i++) {
    const [x1, y1] = knots[i]!;
    const [x0, y0] = knots[i - 1]!;
    if (x <= x1) return Math.round(y0 + ((x - x0) / (x1 - x0)) * (y1 - y0));
  }
  return last[1];
}

/**
 * A semantic end-of-turn model (a small LLM prompt, a text classifier). The owner runs it with a
 * deadline and an AbortSignal (see `classifyWithDeadline`); the core never awaits it.
 */
export interface EndOfTurnClassifier {
  readonly label: string;
  /** Probability (0..1) that the caller has finished their turn after saying `transcript`. */
  classify(transcript: string, signal: AbortSignal): Promise<number>;
}

export interface TurnTakingOptions {
  endpointType?: EndpointType;
  /** 0–5, see ENDPOINT_SILENCE_KNOTS. Default 0.5. */
  endpointSensitivity?: number;
  /** 'ai' only: a turn never waits longer than this after the silence began. Default 3000. */
  ceilingMs?: number;
  /** 'ai' only: whether the owner runs an external classifier (the core then asks for it). */
  useClassifier?: boolean;
  /** 'ai' only: how long a classification may take before the heuristic decides alone. */
  classifierDeadlineMs?: number;
}

export type EndOfTurnReason = 'silence' | 'heuristic' | 'classifier' | 'ceiling';

export interface EndOfTurnDecision {
  type: 'end-of-turn';
  atMs: number;
  /** From the start of the caller's silence to the decision: the endpointing part of latency. */
  waitedMs: number;
  reason: EndOfTurnReason;
  transcript: string;
  /** 'ai' only: the end-of-turn probability used and the heuristic's reading of the transcript. */
  probability?: number;
  hint?: TurnHint;
}

/** Ask the owner to run the classifier; answer with `classification(id, p, atMs)`. */
export interface ClassifyRequest {
  type: 'classify';
  id: number;
  transcript: string;
  deadlineAtMs: number;
}

export interface TurnStep {
  decision?: EndOfTurnDecision;
  classify?: ClassifyRequest;
  /** Call `tick` at this time unless another event comes first. Absent: nothing is pending. */
  wakeAtMs?: number;
}

/**
 * Probability → wait after the silence began ('ai'). At p = 0.5 the wait is the sensitivity's
 * plain VAD silence; a confident "finished" (p → 1) halves it, a confident "not finished"
 * (p → 0) stretches it to the ceiling. Linear on each side, so both the classifier and the
 * heuristic map through the same documented curve.
 */
export function aiWaitMs(probability: number, baseMs: number, ceilingMs: number): number {
  const p = Math.min(1, Math.max(0, Number.isFinite(probability) ? probability : 0.5));
  if (p >= 0.5) return Math.round(baseMs * (1 - (p - 0.5)));
  return Math.round(Math.min(ceilingMs, baseMs + (0.5 - p) * 2 * (ceilingMs - baseMs)));
}

interface Pending {
  silenceFromMs: number;
  /** Classifier result, once it came back in time. */
  classifierP?: number;
  classifyId?: number;
  classifyDeadlineMs?: number;
}

export class TurnTaking {
  readonly type: EndpointType;
  readonly baseSilenceMs: number;
  readonly ceilingMs: number;
  private readonly useClassifier: boolean;
  private readonly classifierDeadlineMs: number;
  private finals: string[] = [];
  private interim = '';
  private callerSpeaking = false;
  private assistantSpeaking = false;
  /** The current segment began over the assistant and is not (yet) the caller's turn. */
  private overlapped = false;
  private pending: Pending | undefined;
  private lastSpeechEndMs: number | undefined;
  private nextClassifyId = 1;

  constructor(options: TurnTakingOptions = {}) {
    this.type = options.endpointType ?? 'vad';
    this.baseSilenceMs = endpointSilenceMs(options.endpointSensitivity ?? 0.5);
    this.ceilingMs = Math.max(this.baseSilenceMs, options.ceilingMs ?? 3000);
    this.useClassifier = this.type === 'ai' && (options.useClassifier ?? false);
    this.classifierDeadlineMs = options.classifierDeadlineMs ?? 300;
  }

  /** Finals plus the latest interim: what the caller has said in this turn so far. */
  get transcript(): string {
    return [...this.finals, this.interim].filter((s) => s.length > 0).join(' ').trim();
  }

  /** Speech resuming before the decision cancels it: the caller only paused. */
  speechStart(_atMs: number): TurnStep {
    this.callerSpeaking = true;
    this.pending = undefined;
    if (this.assistantSpeaking) this.overlapped = true;
    return {};
  }

  /** `endMs`: first silent frame (SpeechEndEvent.endMs); `atMs`: now (its detectedAtMs). */
  speechEnd(endMs: number, atMs: number): TurnStep {
    this.callerSpeaking = false;
    this.lastSpeechEndMs = Math.min(endMs, atMs);
    // Speech over the assistant that was never taken as an interruption is a backchannel or
    // noise, not a turn; the interruption policy decides, and `assistantStopped` re-admits it.
    if (this.overlapped && this.assistantSpeaking) return {};
    this.pending = { silenceFromMs: Math.min(endMs, atMs) };
    return this.evaluate(atMs, true);
  }

  transcriptUpdate(text: string, isFinal: boolean, atMs: number): TurnStep {
    if (isFinal) {
      if (text.trim()) this.finals.push(text.trim());
      this.interim = '';
    } else {
      this.interim = text.trim();
    }
    // A new final changes the semantic reading; ask the classifier again.
    return this.pending ? this.evaluate(atMs, isFinal) : {};
  }

  assistantStarted(_atMs: number): TurnStep {
    this.assistantSpeaking = true;
    if (this.callerSpeaking) this.overlapped = true;
    return {};
  }

  /**
   * `interrupted`: the interruption policy committed, so the overlapping speech is the caller's
   * turn. Otherwise the assistant finished: a caller still talking is taking a turn; an
   * overlap already over was a backchannel and is dropped.
   */
  assistantStopped(atMs: number, interrupted: boolean): TurnStep {
    this.assistantSpeaking = false;
    if (!this.overlapped) return {};
    this.overlapped = false;
    if (interrupted || this.callerSpeaking) {
      if (!this.callerSpeaking) {
        this.pending = { silenceFromMs: this.lastSpeechEndMs ?? atMs };
        return this.evaluate(atMs, true);
      }
      return {};
    }
    this.reset();
    return {};
  }

  /** The owner's answer to a ClassifyRequest; stale or late answers are ignored. */
  classification(id: number, probability: number, atMs: number): TurnStep {
    const p = this.pending;
    if (!p || p.classifyId !== id || p.classifyDeadlineMs === undefined || atMs > p.classifyDeadlineMs) {
      return this.pending ? this.evaluate(atMs, false) : {};
    }
    p.classifierP = probability;
    p.classifyDeadlineMs = undefined;
    return this.evaluate(atMs, false);
  }

  tick(nowMs: number): TurnStep {
    return this.pending ? this.evaluate(nowMs, false) : {};
  }

  /** Forget the turn (call end, or the owner took the turn some other way). */
  reset(): void {
    this.finals = [];
    this.interim = '';
    this.pending = undefined;
    this.overlapped = false;
  }

  private evaluate(nowMs: number, askClassifier: boolean): TurnStep {
    const p = this.pending!;
    const step: TurnStep = {};
    const transcript = this.transcript;
    if (this.type === 'vad') {
      const dueMs = p.silenceFromMs + this.baseSilenceMs;
      if (nowMs >= dueMs) return this.decide(nowMs, 'silence', transcript);
      return { wakeAtMs: dueMs };
    }
    const ceilingAtMs = p.silenceFromMs + this.ceilingMs;
    if (askClassifier && this.useClassifier && transcript) {
      p.classifyId = this.nextClassifyId++;
      p.classifierP = undefined;
      p.classifyDeadlineMs = nowMs + this.classifierDeadlineMs;
      step.classify = { type: 'classify', id: p.classifyId, transcript, deadlineAtMs: p.classifyDeadlineMs };
    }
    const h = heuristicEndOfTurn(transcript);
    if (p.classifyDeadlineMs !== undefined && nowMs >= p.classifyDeadlineMs) p.classifyDeadlineMs = undefined;
    const waiting = p.classifyDeadlineMs !== undefined;
    const probability = p.classifierP ?? h.probability;
    const reason: EndOfTurnReason = p.classifierP !== undefined ? 'classifier' : 'heuristic';
    let dueMs = Math.min(ceilingAtMs, p.silenceFromMs + aiWaitMs(probability, this.baseSilenceMs, this.ceilingMs));
    // An answer in flight may still say "wait": hold the decision until it lands or times out,
    // but never past the ceiling.
    if (waiting) dueMs = Math.min(ceilingAtMs, Math.max(dueMs, p.classifyDeadlineMs!));
    if (nowMs >= ceilingAtMs) {
      return { ...step, decision: this.decide(nowMs, 'ceiling', transcript, probability, h.hint).decision };
    }
    if (nowMs >= dueMs && !waiting) {
      return { ...step, decision: this.decide(nowMs, reason, transcript, probability, h.hint).decision };
    }
    return { ...step, wakeAtMs: dueMs };
  }

  private decide(
    atMs: number,
    reason: EndOfTurnReason,
    transcript: string,
    probability?: number,
    hint?: TurnHint,
  ): TurnStep {
    const waitedMs = atMs - this.pending!.silenceFromMs;
    const decision: EndOfTurnDecision = { type: 'end-of-turn', atMs, waitedMs, reason, transcript };
    if (probability !== undefined) decision.probability = probability;
    if (hint !== undefined) decision.hint = hint;
    this.reset();
    return { decision };
  }
}

/**
 * The thin adapter around a ClassifyRequest: runs the classifier, aborts it at the deadline and
 * resolves to undefined then (the core falls back to its heuristic). Errors resolve to undefined
 * too: a failing classifier must never stall a turn.
 */
export async function classifyWithDeadline(
  classifier: EndOfTurnClassifier,
  transcript: string,
  timeoutMs: number,
  setTimer: (fn: () => void, ms: number) => { cancel(): void },
  parent?: AbortSignal,
): Promise<number | undefined> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort();
  parent?.addEventListener('abort', onAbort, { once: true });
  let timer: { cancel(): void } | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimer(() => {
      controller.abort();
      resolve(undefined);
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      classifier.classify(transcript, controller.signal).then(
        (p) => (Number.isFinite(p) ? Math.min(1, Math.max(0, p)) : undefined),
        () => undefined,
      ),
      timeout,
    ]);
  } finally {
    timer?.cancel();
    parent?.removeEventListener('abort', onAbort);
  }
}
