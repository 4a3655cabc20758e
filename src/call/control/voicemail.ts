/**
 * Answering-machine detection on an answered outbound call, before the engine starts.
 *
 * Why before, not alongside: an assistant that greets a mailbox has already been recorded
 * saying half a sentence to nobody, and a person who answers says "hello?" and waits — the
 * verdict for them comes 0.7 s after they stop, which is when the assistant should speak anyway.
 * The classifier's deadline (5 s of audio by default) bounds the wait: no verdict by then is
 * `unknown` and the engine starts as for a person.
 *
 * Early media first: what an outbound call heard before the answer (a mailbox greeting some
 * carriers play as early media, with ringback and other call-progress tones silenced; see
 * docs/EARLY-MEDIA.md) goes through the same detectors first, at negative times counted back from
 * the answer, so the deadline still counts from the answer.
 *
 * Frames go through the shared Silero VAD + SpeechDetector (greeting cadence) and the
 * BeepDetector (which rejects ringback and other call-progress tones by shape); time is audio
 * time from the answer, so a late burst from the jitter buffer cannot bend the cadence.
 *
 * The same frames go to the assistant's STT (transcriber.ts) for the phrase rules ("leave a
 * message", "not available", "press 1"…): its interim and final text reach the classifier on the
 * next frame after they arrive, so text and cadence share one audio clock and one deadline. VAD's
 * end of each utterance asks STT for its final at once. A person verdict from the rhythm waits a
 * little for the greeting's final (TRANSCRIPT_WAIT_MS; the classifier explains why); an STT that
 * fails or never answers costs nothing but that wait, never the deadline. Without an STT (none
 * for the language, or none configured) cadence and beep decide alone.
 *
 * The verdict and its evidence go to `details.voicemail` on the call record, with what was done:
 * `hang-up` (end_call_on_voicemail, or no voice_mail_message), `message` (voice_mail_message
 * spoken after the beep / the end of the greeting / 30 s), or `engine` (a person, IVR, unknown).
 *
 * `stt` holds the provider, what it heard by then and its error if it failed.
 *
 * `engine` says whether the callee already spoke (`customerSpoke`): their "hello?" was consumed
 * here, so the engine must not wait for them to speak (wait_for_customer) a second time, and what
 * they said (`heard`), which opens the conversation history.
 */
import { fillTemplate, mergeVariables } from '../../agent/template.ts';
import { FRAME_MS, type AudioFrame } from '../../audio/frame.ts';
import { SpeechDetector } from '../../audio/vad/detector.ts';
import { DropOldestQueue } from '../../media/rtp-session-queue.ts';
import type { VadFactory } from '../cascade/listener.ts';
import { isNarrowbandCodec } from '../../media/codecs/codecs.ts';
import { BeepDetector } from '../voicemail/beep.ts';
import { VoicemailClassifier, type VoicemailAction } from '../voicemail/classifier.ts';
import type { Conductor } from './conductor.ts';
import { TranscriptTap } from './transcriber.ts';

export type DetectionResult = { next: 'engine'; customerSpoke: boolean; heard: string } | { next: 'ended' };

/** Longest a person verdict waits for STT's final on the greeting (fast providers need none of it). */
export const TRANSCRIPT_WAIT_MS = 800;

type TextUpdate = { text: string; isFinal: boolean } | { error: string };

export async function detectVoicemail(c: Conductor, vad: VadFactory): Promise<DetectionResult> {
  const cfg = c.assistant.config;
  const stt = sttFor(c);
  const updates: TextUpdate[] = [];
  const narrowband = isNarrowbandCodec(c.sw.call.outbound.codec);
  const tap = stt
    ? new TranscriptTap(
        stt,
        {
          onText: (text, isFinal) => updates.push({ text, isFinal }),
          onError: (error) => updates.push({ error }),
        },
        narrowband,
      )
    : undefined;
  const classifier = new VoicemailClassifier({
    endCallOnVoicemail: cfg.end_call_on_voicemail ?? true,
    voiceMailMessage: cfg.voice_mail_message ? fillTemplate(cfg.voice_mail_message, mergeVariables(cfg.variables, c.variables)) : null,
    deadlineMs: c.o.voicemailDeadlineMs,
    transcriptWaitMs: tap && tap.error === undefined ? TRANSCRIPT_WAIT_MS : 0,
  });
  const stream = vad.createStream({ narrowband });
  const speech = new SpeechDetector();
  const beeps = new BeepDetector();
  const frames = new DropOldestQueue<AudioFrame>(100);
  c.sw.route((f) => frames.push(f));
  void c.sw.done.then(() => frames.end());
  // Early media (docs/EARLY-MEDIA.md): what played before the answer is heard first, on the same
  // audio clock, before 0 (the answer): deadlines still count from the answer.
  const preroll = c.session.takeEarlyAudio();
  const prerollMs = preroll.length * FRAME_MS;
  let atMs = -prerollMs;
  let record: Record<string, unknown> = {};
  const withStt = (r: Record<string, unknown>) => (tap ? { ...r, stt: tap.toRecord() } : r);
  /** One frame through VAD, beep and classifier; a result when detection is over. */
  const hear = async (frame: AudioFrame): Promise<DetectionResult | 'done' | undefined> => {
    const actions: VoicemailAction[] = [];
    // Text that arrived while the previous frame was processed, stamped with this frame's time.
    for (const u of updates.splice(0)) {
      if ('error' in u) {
        c.deps.env.logger.warn({ call: c.session.uuid, err: u.error }, 'voicemail detection: STT failed, deciding without words');
        actions.push(...classifier.transcriptUnavailable(atMs));
      } else actions.push(...classifier.onTranscript(u.text, u.isFinal, atMs));
    }
    tap?.write(frame);
    const p = await stream.push(frame);
    for (const e of speech.push(p, atMs)) {
      if (e.type === 'speech-end') tap?.speechEnded();
      actions.push(...classifier.onSpeech(e));
    }
    atMs += FRAME_MS;
    const beep = beeps.push(frame);
    // The beep detector counts from its first frame, the first of the pre-roll.
    if (beep) actions.push(...classifier.onBeep({ ...beep, beepAtMs: beep.beepAtMs - prerollMs, startMs: beep.startMs - prerollMs }));
    actions.push(...classifier.tick(atMs));
    for (const a of actions) {
      if (a.type === 'verdict') {
        record = { verdict: a.verdict, rule: a.evidence.rule, evidence: a.evidence, ...(prerollMs > 0 ? { early_media_ms: prerollMs } : {}) };
        if (a.verdict !== 'voicemail') {
          await c.details.set({ voicemail: withStt({ ...record, action: 'engine' }) });
          const heard = a.verdict === 'person' ? (tap?.text ?? '') : '';
          return { next: 'engine', customerSpoke: a.evidence.firstSpeechAtMs !== null, heard };
        }
        await c.details.set({ voicemail: withStt({ ...record, action: 'waiting-for-beep' }) });
      } else if (a.type === 'hang-up') {
        await c.details.set({ voicemail: withStt({ ...record, action: 'hang-up', at_ms: a.atMs }) });
        await c.hangUpNow('local-hangup');
        return { next: 'ended' };
      } else if (a.type === 'leave-message') {
        c.sw.route(undefined);
        await c.details.set({ voicemail: withStt({ ...record, action: 'message', after: a.after, message_at_ms: a.atMs }) });
        await c.control.play(a.text);
        await c.hangUpNow('local-hangup');
        return { next: 'ended' };
      }
    }
    return classifier.done ? 'done' : undefined;
  };
  try {
    let result: DetectionResult | 'done' | undefined;
    for (const frame of preroll) {
      result = await hear(frame);
      if (result !== undefined) break;
    }
    if (result === undefined) {
      for await (const frame of frames) {
        result = await hear(frame);
        if (result !== undefined) break;
      }
    }
    if (result !== undefined && result !== 'done') return result;
  } finally {
    c.sw.route(undefined);
    // Not awaited: a provider slow to hang up must not hold the call.
    void tap?.close();
  }
  return c.active ? { next: 'engine', customerSpoke: false, heard: '' } : { next: 'ended' };
}

function sttFor(c: Conductor) {
  try {
    return c.deps.stt?.(c.assistant);
  } catch (err) {
    c.deps.env.logger.warn({ call: c.session.uuid, err: (err as Error).message }, 'voicemail detection: no STT');
    return undefined;
  }
}
