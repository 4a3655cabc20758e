/**
 * The supervisor's decision in a warm transfer: keys or speech.
 *
 * Keys: 1 takes the call, 2 declines, at any time from the start of the briefing.
 *
 * Speech (when the assistant has an STT, transcriber.ts): the supervisor's leg is transcribed
 * from the moment the question is asked ("Say yes or press 1 to take the call…") until they
 * decide. Not during the summary before it: a listening supervisor says "okay", "mm-hmm" while
 * being briefed, and that is not a decision. Each final transcript is judged on its own
 * (`judgeSupervisorSpeech`):
 * - accept: yes, yeah, sure, okay, go ahead, put them through, connect them, I'll take it…
 * - decline: no, nope, not now, can't, won't, don't, busy, decline…
 * - unclear: both kinds ("no, wait, yes", "don't put them through"), or neither ("who is it?").
 *   Unclear speech never decides: the supervisor is still waited for (keys or clearer words)
 *   until the window closes, which counts as no answer. Taking a call on mixed words would
 *   connect a caller to someone who did not agree; the caller loses nothing by the wait, as the
 *   assistant takes over again when nobody accepts.
 * The window (`supervisorAcceptMs`) opens once the question has been spoken; hanging up, the
 * caller leaving, or the window closing end it.
 */
import { FRAME_MS, type AudioFrame } from '../../audio/frame.ts';
import { SpeechDetector } from '../../audio/vad/detector.ts';
import { DropOldestQueue } from '../../media/rtp-session-queue.ts';
import type { Conductor } from './conductor.ts';
import type { Leg } from './leg.ts';
import { TranscriptTap } from './transcriber.ts';
import { isNarrowbandCodec } from '../../media/codecs/codecs.ts';

export const ACCEPT_PROMPT = 'Press 1 to take the call, or 2 to decline.';
export const SPEECH_ACCEPT_PROMPT = 'Say yes or press 1 to take the call. Say no or press 2 to decline.';

export type SpokenAnswer = 'accept' | 'decline' | 'unclear';

const ACCEPT: readonly RegExp[] = [
  /\b(yes|yeah|yep|yup|sure|okay|ok|alright|all right|of course|certainly|absolutely|definitely)\b/,
  /\bgo ahead\b/,
  /\b(put|send|patch|bring) (them|him|her|it|the caller|the call|the customer) (through|in|over)\b/,
  /\bconnect (them|him|her|me|us|the caller|the call|the customer)\b/,
  /\bi('ll| will| can) take (it|the call|them|him|her)\b/,
];
const DECLINE: readonly RegExp[] = [
  /\b(no|nope|nah|decline|declined|refuse)\b/,
  /\bnot (now|right now|today|available|a good time)\b/,
  /\b(can't|cannot|can not|couldn't|won't|don't|do not|unable)\b/,
  /\b(busy|in a meeting|on another call)\b/,
];
/** Acceptances that contain a "no". */
const NO_PROBLEM = /\bno (problem|worries)\b/g;

/** What a supervisor's words mean; anything mixed or off-topic is `unclear`. */
export function judgeSupervisorSpeech(text: string): SpokenAnswer {
  let t = text.toLowerCase().replace(/[’`]/g, "'").replace(/[^\p{L}\p{N}' ]+/gu, ' ').replace(/\s+/g, ' ').trim();
  if (!t) return 'unclear';
  t = t.replace(NO_PROBLEM, 'sure');
  const accept = ACCEPT.some((r) => r.test(t));
  const decline = DECLINE.some((r) => r.test(t));
  if (accept && !decline) return 'accept';
  if (decline && !accept) return 'decline';
  return 'unclear';
}

export type SupervisorOutcome = 'accepted' | 'declined' | 'hung-up' | 'no-answer';

export interface SupervisorAnswer {
  outcome: SupervisorOutcome;
  /** How the decision came: a key, words, or neither (hang-up, timeout). */
  by?: 'key' | 'speech';
  /** The words that decided. */
  heard?: string;
  /** Final transcripts judged unclear before the decision. */
  unclear: string[];
  /** The STT used on the leg and its error, if any. */
  stt?: Record<string, unknown>;
}

/** Briefs the supervisor on `leg`, asks the question, and waits for keys or words. */
export async function askSupervisor(c: Conductor, leg: Leg, briefing: string): Promise<SupervisorAnswer> {
  const stt = sttFor(c);
  const unclear: string[] = [];
  let settle!: (a: Omit<SupervisorAnswer, 'unclear'>) => void;
  const answer = new Promise<Omit<SupervisorAnswer, 'unclear'>>((r) => (settle = r));
  const onDtmf = (e: { digit: string }): void => {
    if (e.digit === '1') settle({ outcome: 'accepted', by: 'key' });
    else if (e.digit === '2') settle({ outcome: 'declined', by: 'key' });
  };
  leg.media.on('dtmf', onDtmf);
  void leg.ended.then(() => settle({ outcome: 'hung-up' }));
  void c.session.done.then(() => settle({ outcome: 'hung-up' }));
  const speak = new AbortController();
  void answer.then(() => speak.abort());
  let window: { cancel(): void } | undefined;
  let listening: Listening | undefined;
  const question = stt ? SPEECH_ACCEPT_PROMPT : ACCEPT_PROMPT;
  const out = leg.media.outbound;
  void (async () => {
    await out.writeStream(c.speech(briefing, speak.signal, out), speak.signal);
    if (speak.signal.aborted) return;
    if (stt) {
      listening = listen(c, leg, stt, (text) => {
        const judged = judgeSupervisorSpeech(text);
        if (judged === 'accept') settle({ outcome: 'accepted', by: 'speech', heard: text });
        else if (judged === 'decline') settle({ outcome: 'declined', by: 'speech', heard: text });
        else unclear.push(text);
      });
    }
    await out.writeStream(c.speech(question, speak.signal, out), speak.signal);
    // The window opens once the question has been spoken (a key or a word during it counts too).
    if (!speak.signal.aborted) window = c.deps.env.clock.setTimeout(() => settle({ outcome: 'no-answer' }), c.o.supervisorAcceptMs);
  })();
  try {
    const got = await answer;
    return { ...got, unclear, ...(listening ? { stt: listening.tap.toRecord() } : {}) };
  } finally {
    window?.cancel();
    leg.media.off('dtmf', onDtmf);
    listening?.stop();
  }
}

interface Listening {
  tap: TranscriptTap;
  stop(): void;
}

/** The supervisor's audio through VAD (to ask for finals at each pause) into STT. */
function listen(c: Conductor, leg: Leg, stt: NonNullable<ReturnType<typeof sttFor>>, onFinal: (text: string) => void): Listening {
  const narrowband = isNarrowbandCodec(leg.media.outbound.codec);
  const tap = new TranscriptTap(
    stt,
    {
      onText: (text, isFinal) => {
        if (isFinal && text) onFinal(text);
      },
      onError: (err) => c.deps.env.logger.warn({ call: c.session.uuid, err }, 'warm transfer: STT on the supervisor leg failed; keys still work'),
    },
    narrowband,
  );
  const frames = new DropOldestQueue<AudioFrame>(100);
  leg.onFrame = (f) => frames.push(f);
  const vad = c.deps.vad?.createStream({ narrowband });
  const speech = new SpeechDetector();
  void (async () => {
    let atMs = 0;
    for await (const frame of frames) {
      tap.write(frame);
      if (vad) {
        const p = await vad.push(frame);
        if (speech.push(p, atMs).some((e) => e.type === 'speech-end')) tap.speechEnded();
      }
      atMs += FRAME_MS;
    }
  })().catch((err: unknown) => c.deps.env.logger.warn({ call: c.session.uuid, err: (err as Error).message }, 'warm transfer: supervisor listening failed'));
  return {
    tap,
    stop() {
      leg.onFrame = undefined;
      frames.end();
      void tap.close();
    },
  };
}

function sttFor(c: Conductor) {
  try {
    return c.deps.stt?.(c.assistant);
  } catch (err) {
    c.deps.env.logger.warn({ call: c.session.uuid, err: (err as Error).message }, 'warm transfer: no STT for the supervisor');
    return undefined;
  }
}
