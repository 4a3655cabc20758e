import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRAME_MS, splitPcm } from '../../../src/audio/frame.ts';
import { SpeechDetector, type SpeechEvent } from '../../../src/audio/vad/detector.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { BeepDetector } from '../../../src/call/voicemail/beep.ts';
import { VoicemailClassifier, type VoicemailAction, type VoicemailClassifierOptions } from '../../../src/call/voicemail/classifier.ts';
import { loadFixture } from '../vad/fixture-audio.ts';

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

interface Said {
  atMs: number;
  text: string;
  final: boolean;
}

/**
 * The session's wiring in miniature: frames from the answer on go through Silero + the
 * segment detector and the beep detector; scripted transcript updates stand in for STT; the
 * classifier ticks every frame. Returns every action with the time it was produced.
 */
async function classify(pcm: Int16Array, opts: Partial<VoicemailClassifierOptions> = {}, said: Said[] = [], tailMs = 0) {
  const c = new VoicemailClassifier({ endCallOnVoicemail: false, voiceMailMessage: 'Hi, this is Acme, please call us back.', ...opts });
  const stream = vad.createStream();
  const speech = new SpeechDetector();
  const beeps = new BeepDetector();
  const actions: VoicemailAction[] = [];
  const pending = [...said];
  let at = 0;
  const frames = [...splitPcm(pcm), ...Array.from({ length: tailMs / FRAME_MS }, () => new Int16Array(320))];
  for (const f of frames) {
    const p = await stream.push({ samples: f, sampleRate: 16000 });
    const events: SpeechEvent[] = speech.push(p, at);
    at += FRAME_MS;
    for (const e of events) actions.push(...c.onSpeech(e));
    const beep = beeps.push(f);
    if (beep) actions.push(...c.onBeep(beep));
    while (pending[0] && pending[0].atMs <= at) {
      const s = pending.shift()!;
      actions.push(...c.onTranscript(s.text, s.final, s.atMs));
    }
    actions.push(...c.tick(at));
    if (c.done) break;
  }
  return { c, actions };
}

const vm = (name: string) => loadFixture(`voicemail/${name}`);
const verdictOf = (actions: VoicemailAction[]) => actions.find((a) => a.type === 'verdict');

describe('voicemail classification on fixtures', () => {
  it('greeting with a beep, no transcript: voicemail by the long greeting, message left at the beep', async () => {
    const pcm = loadFixture('voicemail-greeting-beep');
    const { c, actions } = await classify(pcm);
    expect(c.verdict).toBe('voicemail');
    expect(c.evidence?.rule).toBe('long-greeting');
    expect(c.evidence!.decidedAtMs).toBeLessThanOrEqual(5000);
    const leave = actions.find((a) => a.type === 'leave-message');
    expect(leave).toMatchObject({ type: 'leave-message', after: 'beep', text: 'Hi, this is Acme, please call us back.' });
    const totalMs = (pcm.length / 16000) * 1000;
    // After the beep (which ends 1 s before the end of the file), never during it.
    if (leave?.type === 'leave-message') expect(leave.atMs).toBeGreaterThanOrEqual(totalMs - 1000);
  });

  it('greeting with a beep and end_call_on_voicemail: hangs up at the verdict', async () => {
    const { c, actions } = await classify(loadFixture('voicemail-greeting-beep'), { endCallOnVoicemail: true });
    expect(c.verdict).toBe('voicemail');
    expect(actions.map((a) => a.type)).toEqual(['verdict', 'hang-up']);
  });

  it('greeting without a beep: the transcript decides, the message follows the greeting', async () => {
    const { c, actions } = await classify(vm('greeting-no-beep'), {}, [
      { atMs: 1400, text: 'Hi, this is Alex.', final: true },
      { atMs: 2600, text: 'I am not avail', final: false },
      { atMs: 3200, text: 'I am not available right now.', final: true },
    ], 2000);
    expect(c.verdict).toBe('voicemail');
    // Long greeting (3 s) and the phrase come close together; either is voicemail evidence.
    expect(['voicemail-phrase', 'long-greeting']).toContain(c.evidence?.rule);
    const leave = actions.find((a) => a.type === 'leave-message');
    expect(leave).toMatchObject({ after: 'greeting-end' });
    // The greeting runs to about 7.7 s; the message waits for 2.5 s of silence after it.
    if (leave?.type === 'leave-message') expect(leave.atMs).toBeGreaterThan(9000);
  });

  it('the transcript alone decides when the greeting is still short', async () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: true, voiceMailMessage: null });
    expect(c.onSpeech({ type: 'speech-start', startMs: 300, paddedStartMs: 100, detectedAtMs: 360 })).toEqual([]);
    const out = c.onTranscript("You've reached the voicemail of", false, 1200);
    expect(out[0]).toMatchObject({ type: 'verdict', verdict: 'voicemail', evidence: { rule: 'voicemail-phrase', phrases: ['voicemail'] } });
    expect(out[1]).toMatchObject({ type: 'hang-up' });
  });

  it('a person saying "hello?" then waiting: person within a second of the end of the word', async () => {
    const { c } = await classify(vm('person-hello'), {}, [{ atMs: 1100, text: 'Hello?', final: true }]);
    expect(c.verdict).toBe('person');
    expect(c.evidence?.rule).toBe('short-greeting');
    expect(c.evidence!.decidedAtMs).toBeLessThan(2500);
    expect(c.evidence!.greetingMs).toBeLessThan(1500);
  });

  it('a short recorded greeting then a pause: a person by its rhythm alone, a mailbox by its words', async () => {
    // "Sam is not available." (1.65 s with its tail), 1 s of silence, then the beep at 3.15 s.
    const pcm = vm('short-greeting-beep');
    const rhythm = await classify(pcm);
    expect(rhythm.c.verdict).toBe('person');
    const speechEndMs = rhythm.c.evidence!.firstSpeechAtMs! + rhythm.c.evidence!.greetingMs;
    expect(rhythm.c.evidence!.decidedAtMs).toBeLessThan(3150); // before the beep
    // With STT: the interims and the final (300 ms after the words end) carry the phrase.
    const words = await classify(pcm, {}, [
      { atMs: 1000, text: 'Sam is', final: false },
      { atMs: speechEndMs + 300, text: 'Sam is not available.', final: true },
    ]);
    expect(words.c.verdict).toBe('voicemail');
    expect(words.c.evidence).toMatchObject({ rule: 'voicemail-phrase', transcript: 'Sam is not available.' });
    expect(words.c.evidence!.phrases).toContain('is not available');
    expect(words.actions.find((a) => a.type === 'leave-message')).toMatchObject({ after: 'beep' });
  });

  it('slow STT: with transcriptWaitMs the person verdict waits for the final that says mailbox', async () => {
    const pcm = vm('short-greeting-beep');
    const rhythm = await classify(pcm);
    const speechEndMs = rhythm.c.evidence!.firstSpeechAtMs! + rhythm.c.evidence!.greetingMs;
    // A segment-upload STT answers 900 ms after the words end: after the rhythm rule's 700 ms.
    const late = [{ atMs: speechEndMs + 900, text: 'Sam is not available.', final: true }];
    expect((await classify(pcm, {}, late)).c.verdict).toBe('person');
    const waited = await classify(pcm, { transcriptWaitMs: 800 }, late);
    expect(waited.c.evidence).toMatchObject({ rule: 'voicemail-phrase' });
  });

  it('the transcript wait is bounded: no final, the person verdict comes transcriptWaitMs later', async () => {
    const pcm = vm('person-hello');
    const quick = await classify(pcm);
    const patient = await classify(pcm, { transcriptWaitMs: 800 });
    expect(patient.c.verdict).toBe('person');
    expect(patient.c.evidence!.decidedAtMs - quick.c.evidence!.decidedAtMs).toBeGreaterThanOrEqual(780);
    expect(patient.c.evidence!.decidedAtMs - quick.c.evidence!.decidedAtMs).toBeLessThanOrEqual(820);
    // A final for the greeting ends the wait at once.
    const heard = await classify(pcm, { transcriptWaitMs: 800 }, [{ atMs: quick.c.evidence!.decidedAtMs - 200, text: 'Hello?', final: true }]);
    expect(heard.c.evidence!.decidedAtMs).toBe(quick.c.evidence!.decidedAtMs);
    expect(heard.c.evidence!.transcript).toBe('Hello?');
  });

  it('an IVR menu: ivr by its phrases', async () => {
    const { c } = await classify(vm('ivr-menu'), {}, [
      { atMs: 2000, text: 'Thank you for calling Acme.', final: true },
      { atMs: 3300, text: 'For sales, press 1.', final: true },
    ]);
    expect(c.verdict).toBe('ivr');
    expect(c.evidence?.rule).toBe('ivr-phrase');
    expect(c.evidence?.phrases).toContain('press 1');
  });

  it('ringback before the answer never counts as a beep or as speech', async () => {
    const { actions } = await classify(vm('ringback-na').subarray(0, 16000 * 3), { deadlineMs: 3000 });
    expect(verdictOf(actions)).toMatchObject({ verdict: 'unknown', evidence: { rule: 'deadline', beep: null, segments: 0 } });
  });

  it('ringback heard as early media, then a greeting with a beep: voicemail, message after the real beep', async () => {
    const { c, actions } = await classify(vm('ringback-then-greeting-beep'), { deadlineMs: 30_000 });
    expect(c.verdict).toBe('voicemail');
    const leave = actions.find((a) => a.type === 'leave-message');
    expect(leave).toMatchObject({ after: 'beep' });
    if (leave?.type === 'leave-message') expect(leave.atMs).toBeGreaterThan(10_000);
  });

  it('DTMF tones are no beep', async () => {
    const { c } = await classify(vm('dtmf-digits'), { deadlineMs: 2500 });
    expect(c.evidence?.beep).toBeNull();
    expect(c.verdict).not.toBe('voicemail');
  });

  it('silence until the deadline: unknown', async () => {
    const { c } = await classify(loadFixture('silence'), { deadlineMs: 2000 });
    expect(c.verdict).toBe('unknown');
    expect(c.evidence).toMatchObject({ rule: 'deadline', decidedAtMs: 2000, segments: 0 });
  });
});

describe('VoicemailClassifier rules (scripted events)', () => {
  const start = (ms: number): SpeechEvent => ({ type: 'speech-start', startMs: ms, paddedStartMs: ms, detectedAtMs: ms + 60 });
  const end = (s: number, e: number): SpeechEvent => ({ type: 'speech-end', startMs: s, endMs: e, detectedAtMs: e + 300 });
  const beep = { beepAtMs: 4000, startMs: 3500, durationMs: 500, freqHz: 1000, purity: 0.99 };

  it('a beep before any verdict is voicemail and the message starts at once', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: false, voiceMailMessage: 'msg' });
    const out = c.onBeep(beep);
    expect(out.map((a) => a.type)).toEqual(['verdict', 'leave-message']);
    expect(out[1]).toMatchObject({ atMs: 4000, after: 'beep' });
  });

  it('no message configured: voicemail hangs up even without end_call_on_voicemail', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: false, voiceMailMessage: '  ' });
    expect(c.onBeep(beep).map((a) => a.type)).toEqual(['verdict', 'hang-up']);
  });

  it('"Hello, this is John speaking." (2 s) then a 1 s wait is a person', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: true, voiceMailMessage: null });
    c.onSpeech(start(500));
    c.onSpeech(end(500, 2500));
    expect(c.tick(3000)).toEqual([]);
    expect(c.tick(3500)[0]).toMatchObject({ verdict: 'person', evidence: { rule: 'greeting-then-silence' } });
  });

  it('speech with short pauses adds up to a long greeting', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: true, voiceMailMessage: null });
    c.onSpeech(start(300));
    c.onSpeech(end(300, 1200));
    c.tick(1600);
    c.onSpeech(start(1600));
    expect(c.tick(3200)).toEqual([]);
    expect(c.tick(3300)[0]).toMatchObject({ verdict: 'voicemail', evidence: { rule: 'long-greeting' } });
  });

  it('mailbox phrases beat IVR phrases ("press pound when finished")', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: true, voiceMailMessage: null });
    expect(c.onTranscript('Leave a message after the tone, press pound when finished', true, 2000)[0]).toMatchObject({ verdict: 'voicemail' });
  });

  it('without VAD, a short greeting in the transcript then a wait is a person', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: true, voiceMailMessage: null });
    c.onTranscript('Hello?', true, 900);
    expect(c.tick(1500)).toEqual([]);
    expect(c.tick(1600)[0]).toMatchObject({ verdict: 'person' });
  });

  it('waits for the beep at most 30 s after the answer', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: false, voiceMailMessage: 'msg' });
    c.onSpeech(start(200));
    c.onTranscript('please leave a message', false, 1500);
    expect(c.tick(29_980)).toEqual([]);
    expect(c.tick(30_000)).toEqual([{ type: 'leave-message', text: 'msg', atMs: 30_000, after: 'timeout' }]);
    expect(c.done).toBe(true);
    expect(c.tick(31_000)).toEqual([]);
  });

  it('transcriptUnavailable (STT failed) ends a person verdict\'s wait for words', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: true, voiceMailMessage: null, transcriptWaitMs: 800 });
    c.onSpeech(start(300));
    c.onSpeech(end(300, 900));
    expect(c.tick(1600)).toEqual([]); // the 700 ms silence is met, the words are awaited
    expect(c.transcriptUnavailable(1620)[0]).toMatchObject({ verdict: 'person', evidence: { rule: 'short-greeting', decidedAtMs: 1620 } });
  });

  it('the deadline ends the wait for words with the rhythm\'s verdict, not unknown', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: true, voiceMailMessage: null, transcriptWaitMs: 2000, deadlineMs: 2500 });
    c.onSpeech(start(300));
    c.onSpeech(end(300, 1000));
    expect(c.tick(2480)).toEqual([]);
    expect(c.tick(2500)[0]).toMatchObject({ verdict: 'person', evidence: { rule: 'short-greeting' } });
  });

  it('the verdict is final: a later beep after "person" changes nothing', () => {
    const c = new VoicemailClassifier({ endCallOnVoicemail: true, voiceMailMessage: null });
    c.onSpeech(start(300));
    c.onSpeech(end(300, 900));
    c.tick(1700);
    expect(c.verdict).toBe('person');
    expect(c.onBeep(beep)).toEqual([]);
  });
});
