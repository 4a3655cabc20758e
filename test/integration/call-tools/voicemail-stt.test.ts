/**
 * Voicemail detection with the assistant's STT on live outbound calls over SIP: the carrier phone
 * answers and plays a fixture greeting; the conductor runs the real Silero VAD, the beep detector
 * and an STT provider (Deepgram's streaming protocol or OpenAI's segment upload, each against its
 * protocol-faithful stand-in, which answers with the fixture's words) under the same deadline.
 *
 * The key fixture is voicemail/short-greeting-beep: "Sam is not available.", 1.5 s of silence,
 * a beep. Its rhythm is a person's (a short phrase, then a wait); only its words are a mailbox's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import type { AssistantStt } from '../../../src/call/control/transcriber.ts';
import { DeepgramStt } from '../../../src/providers/stt/deepgram.ts';
import { OpenAiStt } from '../../../src/providers/stt/openai-stt.ts';
import { DeepgramStandIn, type DeepgramStandInOptions } from '../../support/deepgram-stand-in.ts';
import { OpenAiAudioStandIn } from '../../support/openai-audio-stand-in.ts';
import { loadFixture } from '../../unit/vad/fixture-audio.ts';
import { firstLoudMs, play, until, world } from './world.ts';

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

async function outbound(fixture: string, stt: AssistantStt | undefined, config: Record<string, unknown> = {}) {
  const w = await world({ deps: { vad, ...(stt ? { stt: () => stt } : {}) } });
  const assistant = await w.h.assistant(null, { initial_message: 'Hi, this is Acme calling.', voice_mail_message: 'Please call Acme back.', end_call_on_voicemail: false, ...config }, 'outbound');
  const res = await w.h.req('POST', '/user/calls', { assistant_id: assistant, phone_number_id: w.trunk.phoneNumberId, to: '+14155550199' });
  expect(res.status).toBe(201);
  await until(() => w.carrier.answered.length === 1, 3000, 'answered');
  const call = w.carrier.answered[0]!;
  const pcm = loadFixture(fixture);
  play(call, pcm);
  const voicemail = async () => ((await w.h.ctx.repos.calls.getById(res.body.id))!.details?.voicemail ?? {}) as Record<string, any>;
  return { w, call, voicemail, totalMs: (pcm.length / 16000) * 1000 };
}

async function deepgram(options: DeepgramStandInOptions) {
  const dg = await DeepgramStandIn.start(options);
  return { dg, stt: { provider: new DeepgramStt({ apiKey: dg.options.apiKey, baseUrl: dg.url }), language: 'en-US' } };
}

/** The greeting's words, as the stand-in streams them (interims, then the final); the beep is no words. */
const SAM = { text: 'Sam is not available.', interims: ['Sam', 'Sam is', 'Sam is not'] };

describe.concurrent('voicemail detection with STT on live outbound calls', () => {
  it('by rhythm alone the short greeting is taken for a person: the engine greets the mailbox', async () => {
    const { w, voicemail } = await outbound('voicemail/short-greeting-beep', undefined);
    try {
      await until(() => w.runs.length === 1, 6000, 'engine started');
      expect(await voicemail()).toMatchObject({ verdict: 'person', action: 'engine' });
      expect((await voicemail()).stt).toBeUndefined();
    } finally {
      await w.close();
    }
  });

  it('Deepgram: the greeting\'s words decide voicemail; the message follows the beep; the transcript is on the record', async () => {
    const { dg, stt } = await deepgram({ script: [SAM, ''] });
    const { w, call, voicemail, totalMs } = await outbound('voicemail/short-greeting-beep', stt);
    try {
      expect(await call.ended).toBe('remote-bye');
      expect(w.runs).toHaveLength(0);
      expect(w.tts.spoken).toEqual(['Please call Acme back.']);
      // The beep ends 1 s before the end of the file: the message starts after it, never on it.
      expect(firstLoudMs(call.heard)).toBeGreaterThanOrEqual(totalMs - 1000 - 150);
      const vm = await voicemail();
      expect(vm).toMatchObject({ verdict: 'voicemail', rule: 'voicemail-phrase', action: 'message', after: 'beep' });
      expect(vm.evidence.phrases).toContain('is not available');
      expect(vm.evidence.transcript).toBe('Sam is not available.');
      expect(vm.evidence.beep).toBeNull(); // decided by the words, before the beep
      expect(vm.stt).toMatchObject({ provider: 'deepgram', transcript: 'Sam is not available.' });
      // The engine streamed the answered audio to the provider as linear16 at the G.711 line's own 8 kHz.
      expect(dg.connections[0]!.query).toMatchObject({ encoding: 'linear16', sample_rate: '8000', language: 'en-US', interim_results: 'true' });
      expect(dg.connections[0]!.audioMs).toBeGreaterThan(1500);
    } finally {
      await w.close();
      await dg.close();
    }
  });

  it('OpenAI segment upload (slow): VAD asks for the final at the pause; the person verdict waits for it', async () => {
    const audio = await OpenAiAudioStandIn.start({ transcripts: ['Sam is not available.'], transcriptionLatencyMs: 600 });
    const stt = { provider: new OpenAiStt({ apiKey: audio.apiKey, baseUrl: audio.baseUrl }), language: 'en-US' };
    const { w, call, voicemail } = await outbound('voicemail/short-greeting-beep', stt);
    try {
      expect(await call.ended).toBe('remote-bye');
      const vm = await voicemail();
      expect(vm).toMatchObject({ verdict: 'voicemail', rule: 'voicemail-phrase', action: 'message', after: 'beep' });
      expect(vm.stt).toMatchObject({ provider: 'openai', transcript: 'Sam is not available.' });
      // The rhythm rule was met 700 ms after the words ended; the verdict waited for the upload.
      expect(vm.evidence.decidedAtMs).toBeGreaterThan(vm.evidence.firstSpeechAtMs + vm.evidence.greetingMs + 700);
      // One upload: the greeting, cut at the pause VAD found.
      expect(audio.requests.filter((r) => r.path.includes('transcriptions')).length).toBeGreaterThanOrEqual(1);
    } finally {
      await w.close();
      await audio.close();
    }
  });

  it('a person saying "hello?": person, and their word opens the conversation the engine continues', async () => {
    const { dg, stt } = await deepgram({ script: ['Hello?'] });
    const { w, call, voicemail } = await outbound('voicemail/person-hello', stt);
    try {
      await until(() => w.runs.length === 1, 6000, 'engine started');
      await until(() => w.tts.spoken.includes('Hi, this is Acme calling.'), 3000, 'greeting');
      const vm = await voicemail();
      expect(vm).toMatchObject({ verdict: 'person', action: 'engine', stt: { provider: 'deepgram', transcript: 'Hello?' } });
      expect(vm.evidence.decidedAtMs).toBeLessThan(3000);
      await until(() => w.llm.requests.length >= 1, 3000, 'agent turn');
      const messages = w.llm.requests[0]!.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]);
      expect(messages.slice(0, 2)).toEqual([
        ['user', 'Hello?'],
        ['assistant', 'Hi, this is Acme calling.'],
      ]);
      await call.hangup();
    } finally {
      await w.close();
      await dg.close();
    }
  });

  it('an STT that refuses (bad key): cadence decides within the deadline; the error is on the record', async () => {
    const dg = await DeepgramStandIn.start({ apiKey: 'the-right-key' });
    const stt = { provider: new DeepgramStt({ apiKey: 'a-wrong-key', baseUrl: dg.url }), language: 'en-US' };
    const { w, call, voicemail } = await outbound('voicemail/person-hello', stt);
    try {
      await until(() => w.runs.length === 1, 6000, 'engine started');
      const vm = await voicemail();
      expect(vm).toMatchObject({ verdict: 'person', rule: 'short-greeting', action: 'engine' });
      expect(vm.stt.error).toMatch(/401/);
      expect(vm.evidence.decidedAtMs).toBeLessThan(3000);
      expect(dg.rejected[0]).toMatchObject({ status: 401 });
      await call.hangup();
    } finally {
      await w.close();
      await dg.close();
    }
  });
});
