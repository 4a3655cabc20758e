/**
 * Answering-machine detection on an answered outbound call, before the engine starts.
 *
 * Why before, not alongside: an assistant that greets a mailbox has already been recorded
 * saying half a sentence to nobody, and a person who answers says "hello?" and waits — the
 * verdict for them comes 0.7 s after they stop, which is when the assistant should speak anyway.
 * The classifier's deadline (5 s of audio by default) bounds the wait: no verdict by then is
 * `unknown` and the engine starts as for a person.
 *
 * Frames go through the shared Silero VAD + SpeechDetector (greeting cadence) and the
 * BeepDetector (which rejects ringback and other call-progress tones by shape); time is audio
 * time from the answer, so a late burst from the jitter buffer cannot bend the cadence. No STT
 * runs in this phase, so the transcript rules (phrases) stay idle; cadence and beep decide.
 *
 * The verdict and its evidence go to `details.voicemail` on the call record, with what was done:
 * `hang-up` (end_call_on_voicemail, or no voice_mail_message), `message` (voice_mail_message
 * spoken after the beep / the end of the greeting / 30 s), or `engine` (a person, IVR, unknown).
 *
 * `engine` says whether the callee already spoke (`customerSpoke`): their "hello?" was consumed
 * here, so the engine must not wait for them to speak (wait_for_customer) a second time.
 */
import { fillTemplate, mergeVariables } from '../../agent/template.ts';
import { FRAME_MS, type AudioFrame } from '../../audio/frame.ts';
import { SpeechDetector } from '../../audio/vad/detector.ts';
import { DropOldestQueue } from '../../media/rtp-session-queue.ts';
import type { VadStreamLike } from '../cascade/listener.ts';
import { BeepDetector } from '../voicemail/beep.ts';
import { VoicemailClassifier, type VoicemailAction } from '../voicemail/classifier.ts';
import type { Conductor } from './conductor.ts';

export type DetectionResult = { next: 'engine'; customerSpoke: boolean } | { next: 'ended' };

export async function detectVoicemail(c: Conductor, vad: { createStream(): VadStreamLike }): Promise<DetectionResult> {
  const cfg = c.assistant.config;
  const classifier = new VoicemailClassifier({
    endCallOnVoicemail: cfg.end_call_on_voicemail ?? true,
    voiceMailMessage: cfg.voice_mail_message ? fillTemplate(cfg.voice_mail_message, mergeVariables(cfg.variables, c.variables)) : null,
    deadlineMs: c.o.voicemailDeadlineMs,
  });
  const stream = vad.createStream();
  const speech = new SpeechDetector();
  const beeps = new BeepDetector();
  const frames = new DropOldestQueue<AudioFrame>(100);
  c.sw.route((f) => frames.push(f));
  void c.sw.done.then(() => frames.end());
  let atMs = 0;
  let record: Record<string, unknown> = {};
  try {
    for await (const frame of frames) {
      const actions: VoicemailAction[] = [];
      const p = await stream.push(frame);
      for (const e of speech.push(p, atMs)) actions.push(...classifier.onSpeech(e));
      atMs += FRAME_MS;
      const beep = beeps.push(frame);
      if (beep) actions.push(...classifier.onBeep(beep));
      actions.push(...classifier.tick(atMs));
      for (const a of actions) {
        if (a.type === 'verdict') {
          record = { verdict: a.verdict, rule: a.evidence.rule, evidence: a.evidence };
          if (a.verdict !== 'voicemail') {
            await c.details.set({ voicemail: { ...record, action: 'engine' } });
            return { next: 'engine', customerSpoke: a.evidence.firstSpeechAtMs !== null };
          }
          await c.details.set({ voicemail: { ...record, action: 'waiting-for-beep' } });
        } else if (a.type === 'hang-up') {
          await c.details.set({ voicemail: { ...record, action: 'hang-up', at_ms: a.atMs } });
          await c.hangUpNow('local-hangup');
          return { next: 'ended' };
        } else if (a.type === 'leave-message') {
          c.sw.route(undefined);
          await c.details.set({ voicemail: { ...record, action: 'message', after: a.after, message_at_ms: a.atMs } });
          await c.control.play(a.text);
          await c.hangUpNow('local-hangup');
          return { next: 'ended' };
        }
      }
      if (classifier.done) break;
    }
  } finally {
    c.sw.route(undefined);
  }
  return c.active ? { next: 'engine', customerSpoke: false } : { next: 'ended' };
}
