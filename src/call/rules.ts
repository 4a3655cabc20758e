/**
 * Call rules as one pure state machine on the session clock: silence re-engagement, initial
 * silence, maximum duration and outbound ringing time. The owner reports what happened (with
 * times) and calls `tick(now)` at `wakeAtMs`; the core returns the actions due. One machine
 * rather than four timers, so the rules cannot race each other (e.g. a re-engagement starting
 * after the goodbye) and a 20-minute call is tested in microseconds.
 *
 * Boundaries are inclusive: a rule due at T fires on a tick at exactly T, never at T - 1.
 */

export interface CallRulesOptions {
  /** max_duration: from answer to the goodbye. Spec default 600 s. */
  maxDurationMs?: number;
  /** max_silence_duration: silence before a re-engagement. Spec default 40 s. */
  maxSilenceMs?: number;
  /** reengagement_interval: silence between repeated re-engagements. Spec default 30 s. */
  reengagementIntervalMs?: number;
  reengagementPrompt?: string;
  /** max_initial_silence_duration: only enforced when set. */
  maxInitialSilenceMs?: number;
  /** ringing_time for outbound calls. Spec default 30 s. */
  ringingTimeMs?: number;
  /** After the goodbye starts, hang up at the latest this much later (the goodbye may stall). */
  goodbyeGraceMs?: number;
}

/** The assistant's call-behaviour fields in the spec's units (seconds) → options in ms. */
export interface CallBehaviorSeconds {
  max_duration?: number;
  max_silence_duration?: number;
  reengagement_interval?: number;
  reengagement_prompt?: string | null;
  max_initial_silence_duration?: number | null;
  ringing_time?: number;
}

export function callRulesOptions(b: CallBehaviorSeconds): CallRulesOptions {
  const o: CallRulesOptions = {
    maxDurationMs: (b.max_duration ?? 600) * 1000,
    maxSilenceMs: (b.max_silence_duration ?? 40) * 1000,
    reengagementIntervalMs: (b.reengagement_interval ?? 30) * 1000,
    ringingTimeMs: (b.ringing_time ?? 30) * 1000,
  };
  if (b.reengagement_prompt) o.reengagementPrompt = b.reengagement_prompt;
  if (b.max_initial_silence_duration) o.maxInitialSilenceMs = b.max_initial_silence_duration * 1000;
  return o;
}

export type CallRuleAction =
  | { type: 'reengage'; atMs: number; prompt: string | undefined; count: number }
  | { type: 'end-call'; atMs: number; reason: 'initial-silence' }
  | { type: 'say-goodbye'; atMs: number; reason: 'max-duration'; hangUpByMs: number }
  | { type: 'hang-up'; atMs: number; reason: 'max-duration' }
  | { type: 'no-answer'; atMs: number };

export interface CallRulesStep {
  actions: CallRuleAction[];
  /** Next time `tick` must run; absent when no rule is pending (not answered, or ended). */
  wakeAtMs?: number;
}

type Phase = 'idle' | 'ringing' | 'answered' | 'goodbye' | 'ended';

export class CallRules {
  readonly maxDurationMs: number;
  readonly maxSilenceMs: number;
  readonly reengagementIntervalMs: number;
  readonly reengagementPrompt: string | undefined;
  readonly maxInitialSilenceMs: number | undefined;
  readonly ringingTimeMs: number;
  readonly goodbyeGraceMs: number;

  private phase: Phase = 'idle';
  private ringingAtMs = 0;
  private answeredAtMs = 0;
  private goodbyeDeadlineMs = 0;
  private callerSpoke = false;
  private callerSpeaking = false;
  private assistantSpeaking = false;
  /** Later of answer, caller speech end, assistant audio end and the last re-engagement. */
  private silenceFromMs = 0;
  /** Re-engagements since the caller last spoke (1 after the first). */
  private reengagements = 0;

  constructor(options: CallRulesOptions = {}) {
    this.maxDurationMs = options.maxDurationMs ?? 600_000;
    this.maxSilenceMs = options.maxSilenceMs ?? 40_000;
    this.reengagementIntervalMs = options.reengagementIntervalMs ?? 30_000;
    this.reengagementPrompt = options.reengagementPrompt;
    this.maxInitialSilenceMs = options.maxInitialSilenceMs;
    this.ringingTimeMs = options.ringingTimeMs ?? 30_000;
    this.goodbyeGraceMs = options.goodbyeGraceMs ?? 10_000;
  }

  get ended(): boolean {
    return this.phase === 'ended';
  }

  /** Outbound: the INVITE went out and the far end is ringing (or not yet answering). */
  dialing(atMs: number): CallRulesStep {
    if (this.phase !== 'idle') return this.step(atMs);
    this.phase = 'ringing';
    this.ringingAtMs = atMs;
    return this.step(atMs);
  }

  /** The call is up (inbound answer or outbound 200 OK): every in-call rule counts from here. */
  answered(atMs: number): CallRulesStep {
    if (this.phase !== 'idle' && this.phase !== 'ringing') return this.step(atMs);
    this.phase = 'answered';
    this.answeredAtMs = atMs;
    this.silenceFromMs = atMs;
    return this.step(atMs);
  }

  callerSpeechStart(atMs: number): CallRulesStep {
    this.callerSpoke = true;
    this.callerSpeaking = true;
    this.reengagements = 0;
    return this.step(atMs);
  }

  callerSpeechEnd(atMs: number): CallRulesStep {
    this.callerSpeaking = false;
    this.silenceFromMs = Math.max(this.silenceFromMs, atMs);
    return this.step(atMs);
  }

  assistantAudioStart(atMs: number): CallRulesStep {
    this.assistantSpeaking = true;
    return this.step(atMs);
  }

  assistantAudioEnd(atMs: number): CallRulesStep {
    this.assistantSpeaking = false;
    this.silenceFromMs = Math.max(this.silenceFromMs, atMs);
    return this.step(atMs);
  }

  /** The goodbye finished playing: hang up now instead of waiting for the deadline. */
  goodbyeFinished(atMs: number): CallRulesStep {
    if (this.phase !== 'goodbye') return this.step(atMs);
    this.phase = 'ended';
    return { actions: [{ type: 'hang-up', atMs, reason: 'max-duration' }] };
  }

  /** The call ended for any other reason (BYE, end_call tool, error): nothing more fires. */
  end(): void {
    this.phase = 'ended';
  }

  tick(nowMs: number): CallRulesStep {
    return this.step(nowMs);
  }

  private step(nowMs: number): CallRulesStep {
    const actions: CallRuleAction[] = [];
    switch (this.phase) {
      case 'idle':
      case 'ended':
        return { actions };
      case 'ringing': {
        const dueMs = this.ringingAtMs + this.ringingTimeMs;
        if (nowMs < dueMs) return { actions, wakeAtMs: dueMs };
        this.phase = 'ended';
        return { actions: [{ type: 'no-answer', atMs: nowMs }] };
      }
      case 'goodbye':
        if (nowMs < this.goodbyeDeadlineMs) return { actions, wakeAtMs: this.goodbyeDeadlineMs };
        this.phase = 'ended';
        return { actions: [{ type: 'hang-up', atMs: nowMs, reason: 'max-duration' }] };
      case 'answered':
        break;
    }

    const durationDueMs = this.answeredAtMs + this.maxDurationMs;
    if (nowMs >= durationDueMs) {
      this.phase = 'goodbye';
      this.goodbyeDeadlineMs = nowMs + this.goodbyeGraceMs;
      actions.push({ type: 'say-goodbye', atMs: nowMs, reason: 'max-duration', hangUpByMs: this.goodbyeDeadlineMs });
      return { actions, wakeAtMs: this.goodbyeDeadlineMs };
    }

    let wakeAtMs = durationDueMs;
    if (this.maxInitialSilenceMs !== undefined && !this.callerSpoke) {
      const dueMs = this.answeredAtMs + this.maxInitialSilenceMs;
      if (nowMs >= dueMs) {
        this.phase = 'ended';
        return { actions: [{ type: 'end-call', atMs: nowMs, reason: 'initial-silence' }] };
      }
      wakeAtMs = Math.min(wakeAtMs, dueMs);
    }

    // Silence only runs while neither side is speaking; either one speaking pauses it.
    if (!this.callerSpeaking && !this.assistantSpeaking) {
      const limitMs = this.reengagements === 0 ? this.maxSilenceMs : this.reengagementIntervalMs;
      const dueMs = this.silenceFromMs + limitMs;
      if (nowMs >= dueMs) {
        this.reengagements++;
        // The next interval counts from here even if the owner never reports the prompt's audio.
        this.silenceFromMs = nowMs;
        actions.push({ type: 'reengage', atMs: nowMs, prompt: this.reengagementPrompt, count: this.reengagements });
        wakeAtMs = Math.min(wakeAtMs, nowMs + this.reengagementIntervalMs);
      } else {
        wakeAtMs = Math.min(wakeAtMs, dueMs);
      }
    }
    return { actions, wakeAtMs };
  }
}
