/**
 * Answering-machine detection for outbound calls: person, voicemail, IVR or unknown, decided
 * within a hard deadline from what the first seconds of the answer sound like.
 *
 * Pure: every input carries its own time in ms since the answer (VAD events, transcript
 * updates, beep events from BeepDetector started at the answer, `tick(nowMs)`), and every call
 * returns the actions to take. The session feeds it until it reports `done`.
 *
 * Rules, first match wins (evidence names the rule):
 * - `beep`: a beep before any verdict is a voicemail box already recording.
 * - `voicemail-phrase`: the transcript says "leave a message", "not available", "after the tone",
 *   "mailbox"… (checked before IVR phrases: mailboxes also say "press pound when finished").
 * - `ivr-phrase`: "press 1", "for sales press", "main menu"…
 * - `long-greeting`: speech from the answer continuing ≥ 3 s (pauses < 700 ms joined). People
 *   answer with a word or two and wait; recorded greetings run on.
 * - `short-greeting`: ≤ 1.5 s of speech, then ≥ 700 ms of silence: someone said "hello?" and
 *   is waiting for us. 1.5–3 s of speech then 1 s of silence is also a person
 *   (`greeting-then-silence`: "Hello, this is John speaking.").
 * - `deadline` (5 s by default): no rule fired; the verdict is `unknown` and the engine carries on
 *   as with a person (talking to a machine costs less than hanging up on a customer).
 *
 * With STT running (`transcriptWaitMs` > 0) a person verdict from the rhythm waits, at most that
 * long past its silence, for a final transcript of the greeting: a short recorded greeting ("Sam
 * is not available.") followed by a pause sounds exactly like "Hello, Sam speaking." and only its
 * words tell them apart. A final that arrived after the greeting ended, an STT failure
 * (`transcriptUnavailable`) or the deadline end the wait.
 *
 * On `voicemail`: with end_call_on_voicemail (or no voice_mail_message) the action is `hang-up`;
 * otherwise `leave-message` comes at the beep, or when the greeting has been silent for 2.5 s
 * (no beep: some boxes record without one), or 30 s after the answer at the latest.
 */
import type { SpeechEvent } from '../../audio/vad/detector.ts';
import type { BeepEvent } from './beep.ts';

export type Verdict = 'person' | 'voicemail' | 'ivr' | 'unknown';
export type VerdictRule =
  | 'beep'
  | 'voicemail-phrase'
  | 'ivr-phrase'
  | 'long-greeting'
  | 'short-greeting'
  | 'greeting-then-silence'
  | 'deadline';

export interface VoicemailEvidence {
  rule: VerdictRule;
  decidedAtMs: number;
  firstSpeechAtMs: number | null;
  /** Speech heard so far, VAD segments summed. */
  speechMs: number;
  segments: number;
  /** Length of the current greeting (segments joined across short pauses). */
  greetingMs: number;
  phrases: string[];
  beep: { atMs: number; freqHz: number } | null;
  transcript: string;
}

export type VoicemailAction =
  | { type: 'verdict'; verdict: Verdict; evidence: VoicemailEvidence }
  | { type: 'hang-up'; reason: 'voicemail'; atMs: number }
  | { type: 'leave-message'; text: string; atMs: number; after: 'beep' | 'greeting-end' | 'timeout' };

export interface VoicemailClassifierOptions {
  endCallOnVoicemail: boolean;
  voiceMailMessage: string | null | undefined;
  deadlineMs?: number;
  personMaxGreetingMs?: number;
  personSilenceMs?: number;
  /** "Hello, this is John speaking": a longer greeting followed by a longer wait. */
  personLongGreetingMs?: number;
  personLongSilenceMs?: number;
  machineSpeechMs?: number;
  /** Pauses shorter than this join speech into one greeting. */
  joinGapMs?: number;
  greetingEndSilenceMs?: number;
  maxWaitForBeepMs?: number;
  /** STT runs: a person verdict may wait this long for the greeting's final transcript (0: never). */
  transcriptWaitMs?: number;
}

const DEFAULTS = {
  deadlineMs: 5000,
  personMaxGreetingMs: 1500,
  personSilenceMs: 700,
  personLongGreetingMs: 3000,
  personLongSilenceMs: 1000,
  machineSpeechMs: 3000,
  joinGapMs: 700,
  greetingEndSilenceMs: 2500,
  maxWaitForBeepMs: 30_000,
  transcriptWaitMs: 0,
};

const VOICEMAIL_PHRASES: readonly RegExp[] = [
  /\bleave (me |us )?(a |your )?(brief |short )?(message|name|number|voicemail)\b/,
  /\b(is |am |are )?(not|currently not|unable to be) available\b/,
  /\bunavailable\b/,
  /\b(can't|cannot|can not|couldn't) (take|answer|get to|come to) (your call|the phone)\b/,
  /\b(after|at) the (tone|beep)\b/,
  /\bmail ?box\b/,
  /\bvoice ?mail\b/,
  /\brecord your message\b/,
];

const KEY = '(\\d|zero|one|two|three|four|five|six|seven|eight|nine|star|pound|hash)';
const IVR_PHRASES: readonly RegExp[] = [
  new RegExp(`\\bpress (the )?${KEY}\\b`),
  new RegExp(`\\b(dial|enter) ${KEY}\\b`),
  /\bfor (sales|support|billing|customer service|english|spanish)\b.*\bpress\b/,
  /\b(main menu|menu options|your party's extension|para español|please listen carefully)\b/,
];

/** Short greetings people answer with; only supports `short-greeting` when VAD is missing. */
const PERSON_GREETING = /^(hello|hi|hey|yes|yeah|hallo|speaking|good (morning|afternoon|evening))\b/;

interface Segment {
  startMs: number;
  endMs: number | null;
}

export class VoicemailClassifier {
  private readonly o: Required<Omit<VoicemailClassifierOptions, 'voiceMailMessage'>> & { voiceMailMessage: string };
  private readonly segments: Segment[] = [];
  private finals = '';
  private interim = '';
  private transcriptAtMs: number | null = null;
  private lastFinalAtMs: number | null = null;
  private transcriptWaitMs: number;
  private beepSeen: { atMs: number; freqHz: number } | null = null;
  private decided: { verdict: Verdict; evidence: VoicemailEvidence } | undefined;
  private awaitingMessage = false;
  private finished = false;

  constructor(options: VoicemailClassifierOptions) {
    this.o = { ...DEFAULTS, ...options, voiceMailMessage: (options.voiceMailMessage ?? '').trim() };
    this.transcriptWaitMs = this.o.transcriptWaitMs;
  }

  get verdict(): Verdict | undefined {
    return this.decided?.verdict;
  }

  get evidence(): VoicemailEvidence | undefined {
    return this.decided?.evidence;
  }

  /** Nothing more will come: feeding it further is pointless. */
  get done(): boolean {
    return this.finished;
  }

  onSpeech(event: SpeechEvent): VoicemailAction[] {
    if (event.type === 'speech-start') {
      this.segments.push({ startMs: event.startMs, endMs: null });
      return this.evaluate(event.detectedAtMs);
    }
    const open = this.segments.findLast((s) => s.endMs === null);
    if (open) open.endMs = event.endMs;
    else this.segments.push({ startMs: event.startMs, endMs: event.endMs });
    return this.evaluate(event.detectedAtMs);
  }

  /** An STT update: interim text replaces the previous interim, final text is kept. */
  onTranscript(text: string, isFinal: boolean, atMs: number): VoicemailAction[] {
    if (isFinal) {
      this.finals = `${this.finals} ${text}`.trim();
      this.interim = '';
      this.lastFinalAtMs = atMs;
    } else {
      this.interim = text;
    }
    this.transcriptAtMs = atMs;
    return this.evaluate(atMs);
  }

  /** STT failed or is not coming: person verdicts stop waiting for a transcript. */
  transcriptUnavailable(nowMs: number): VoicemailAction[] {
    this.transcriptWaitMs = 0;
    return this.evaluate(nowMs);
  }

  onBeep(beep: BeepEvent): VoicemailAction[] {
    if (this.decided && this.decided.verdict !== 'voicemail') return [];
    this.beepSeen ??= { atMs: beep.beepAtMs, freqHz: beep.freqHz };
    if (!this.decided) return this.decide('voicemail', 'beep', beep.beepAtMs);
    if (this.awaitingMessage) return this.leave(beep.beepAtMs, 'beep');
    return [];
  }

  /** Time passing: deadlines and silences are judged here. Call it every frame or so. */
  tick(nowMs: number): VoicemailAction[] {
    return this.evaluate(nowMs);
  }

  private evaluate(nowMs: number): VoicemailAction[] {
    if (this.finished) return [];
    if (this.decided) return this.awaitingMessage ? this.maybeLeave(nowMs) : [];
    const o = this.o;
    const text = this.text();
    if (VOICEMAIL_PHRASES.some((r) => r.test(text))) return this.decide('voicemail', 'voicemail-phrase', nowMs);
    if (IVR_PHRASES.some((r) => r.test(text))) return this.decide('ivr', 'ivr-phrase', nowMs);
    const g = this.greeting(nowMs);
    if (g && g.lengthMs >= o.machineSpeechMs) return this.decide('voicemail', 'long-greeting', nowMs);
    if (g && g.silentForMs !== null) {
      const rule =
        g.lengthMs <= o.personMaxGreetingMs && g.silentForMs >= o.personSilenceMs
          ? 'short-greeting'
          : g.lengthMs <= o.personLongGreetingMs && g.silentForMs >= o.personLongSilenceMs
            ? 'greeting-then-silence'
            : undefined;
      if (rule && !this.awaitingText(nowMs, rule === 'short-greeting' ? o.personSilenceMs : o.personLongSilenceMs)) {
        return this.decide('person', rule, nowMs);
      }
    }
    // Without VAD (a realtime engine's own turn detection) a short greeting in the transcript,
    // followed by the same wait, stands in for the segments.
    if (!g && this.transcriptAtMs !== null && nowMs - this.transcriptAtMs >= o.personSilenceMs && this.isShortGreetingText(text)) {
      return this.decide('person', 'short-greeting', nowMs);
    }
    if (nowMs >= o.deadlineMs) return this.decide('unknown', 'deadline', nowMs);
    return [];
  }

  /**
   * A person verdict due now still waits for the greeting's words: STT runs, no final came since
   * the last segment ended, and the wait (counted from when the rhythm rule was met) is not over.
   */
  private awaitingText(nowMs: number, silenceMs: number): boolean {
    if (this.transcriptWaitMs <= 0 || nowMs >= this.o.deadlineMs) return false;
    const lastEnd = this.segments.at(-1)?.endMs;
    if (lastEnd === null || lastEnd === undefined) return false;
    if (this.lastFinalAtMs !== null && this.lastFinalAtMs >= lastEnd) return false;
    return nowMs < lastEnd + silenceMs + this.transcriptWaitMs;
  }

  private isShortGreetingText(text: string): boolean {
    return text.split(/\s+/).filter(Boolean).length <= 4 && PERSON_GREETING.test(text);
  }

  private text(): string {
    return `${this.finals} ${this.interim}`.toLowerCase().replace(/[^\p{L}\p{N}' ]+/gu, ' ').replace(/\s+/g, ' ').trim();
  }

  /**
   * The first greeting: segments from the first one on, joined across pauses shorter than
   * joinGapMs. `silentForMs` (since the last segment ended) is null while someone is speaking.
   */
  private greeting(nowMs: number): { lengthMs: number; silentForMs: number | null } | undefined {
    const first = this.segments[0];
    if (!first) return undefined;
    let end = first.endMs;
    for (let i = 1; i < this.segments.length; i++) {
      const s = this.segments[i]!;
      if (end === null || s.startMs - end >= this.o.joinGapMs) break;
      end = s.endMs;
    }
    // A segment after a long pause is a second utterance: the greeting ended before it.
    const lengthMs = (end ?? nowMs) - first.startMs;
    const speakingNow = this.segments.at(-1)?.endMs === null;
    const lastEnd = this.segments.at(-1)?.endMs ?? null;
    return { lengthMs, silentForMs: speakingNow || lastEnd === null ? null : nowMs - lastEnd };
  }

  private decide(verdict: Verdict, rule: VerdictRule, atMs: number): VoicemailAction[] {
    const evidence = this.snapshot(rule, atMs);
    this.decided = { verdict, evidence };
    const out: VoicemailAction[] = [{ type: 'verdict', verdict, evidence }];
    if (verdict !== 'voicemail') {
      this.finished = true;
      return out;
    }
    if (this.o.endCallOnVoicemail || this.o.voiceMailMessage === '') {
      this.finished = true;
      out.push({ type: 'hang-up', reason: 'voicemail', atMs });
      return out;
    }
    this.awaitingMessage = true;
    if (this.beepSeen) return [...out, ...this.leave(Math.max(atMs, this.beepSeen.atMs), 'beep')];
    return [...out, ...this.maybeLeave(atMs)];
  }

  private maybeLeave(nowMs: number): VoicemailAction[] {
    if (nowMs >= this.o.maxWaitForBeepMs) return this.leave(nowMs, 'timeout');
    const last = this.segments.at(-1);
    if (last && last.endMs !== null && nowMs - last.endMs >= this.o.greetingEndSilenceMs) return this.leave(nowMs, 'greeting-end');
    return [];
  }

  private leave(atMs: number, after: 'beep' | 'greeting-end' | 'timeout'): VoicemailAction[] {
    this.awaitingMessage = false;
    this.finished = true;
    return [{ type: 'leave-message', text: this.o.voiceMailMessage, atMs, after }];
  }

  private snapshot(rule: VerdictRule, atMs: number): VoicemailEvidence {
    const text = this.text();
    let speechMs = 0;
    for (const s of this.segments) speechMs += (s.endMs ?? atMs) - s.startMs;
    const phrases = [...VOICEMAIL_PHRASES, ...IVR_PHRASES].map((r) => r.exec(text)?.[0]).filter((m): m is string => m !== undefined);
    return {
      rule,
      decidedAtMs: atMs,
      firstSpeechAtMs: this.segments[0]?.startMs ?? null,
      speechMs,
      segments: this.segments.length,
      greetingMs: this.greeting(atMs)?.lengthMs ?? 0,
      phrases,
      beep: this.beepSeen,
      transcript: `${this.finals} ${this.interim}`.trim(),
    };
  }
}
