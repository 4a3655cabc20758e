/**
 * Voicemail handling on outbound calls over SIP: the carrier phone answers and plays a fixture
 * greeting (fixtures/audio/voicemail, see its README); the conductor classifies with the real
 * Silero VAD and beep detector before any engine runs. The four cases run concurrently (each
 * plays ~5–12 s of real-time audio).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { loadFixture } from '../../unit/vad/fixture-audio.ts';
import { firstLoudMs, play, until, world } from './world.ts';

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

async function outbound(fixture: string, config: Record<string, unknown>, voicemailDeadlineMs?: number) {
  const w = await world({ deps: { vad }, ...(voicemailDeadlineMs ? { options: { voicemailDeadlineMs } } : {}) });
  const assistant = await w.h.assistant(null, { initial_message: 'Hi, this is Acme calling.', voice_mail_message: 'Please call Acme back.', ...config }, 'outbound');
  const res = await w.h.req('POST', '/user/calls', { assistant_id: assistant, phone_number_id: w.trunk.phoneNumberId, to: '+14155550199' });
  expect(res.status).toBe(201);
  await until(() => w.carrier.answered.length === 1, 3000, 'answered');
  const call = w.carrier.answered[0]!;
  const pcm = loadFixture(fixture);
  play(call, pcm);
  const record = async () => (await w.h.ctx.repos.calls.getById(res.body.id))!;
  return { w, call, record, totalMs: (pcm.length / 16000) * 1000 };
}

describe.concurrent('voicemail detection on outbound calls', () => {
  it('greeting with a beep: voicemail, the message is left after the beep, no engine', async () => {
    const { w, call, record, totalMs } = await outbound('voicemail-greeting-beep', { end_call_on_voicemail: false });
    try {
      expect(await call.ended).toBe('remote-bye');
      expect(w.tts.spoken).toEqual(['Please call Acme back.']);
      expect(w.runs).toHaveLength(0);
      // The beep ends 1 s before the end of the file; the message never starts on top of it.
      expect(firstLoudMs(call.heard)).toBeGreaterThanOrEqual(totalMs - 1000 - 150);
      const vm = (await record()).details!.voicemail as Record<string, any>;
      expect(vm).toMatchObject({ verdict: 'voicemail', rule: 'long-greeting', action: 'message', after: 'beep' });
    } finally {
      await w.close();
    }
  });

  it('greeting without a beep and end_call_on_voicemail: hang up at the verdict, nothing said', async () => {
    const { w, call, record } = await outbound('voicemail/greeting-no-beep', { end_call_on_voicemail: true });
    try {
      expect(await call.ended).toBe('remote-bye');
      expect(w.tts.spoken).toEqual([]);
      expect(firstLoudMs(call.heard)).toBeUndefined();
      // The BYE goes out first; the record is final once the call's media is closed too.
      await until(async () => (await record()).status !== 'in-progress', 2000, 'record written');
      const rec = await record();
      expect(rec.details!.voicemail).toMatchObject({ verdict: 'voicemail', rule: 'long-greeting', action: 'hang-up' });
      expect(rec.status).toBe('completed');
    } finally {
      await w.close();
    }
  });

  it('a person saying "hello?": verdict person, the engine starts and greets', async () => {
    const { w, call, record } = await outbound('voicemail/person-hello', {});
    try {
      await until(() => w.runs.length === 1, 6000, 'engine started');
      await until(() => w.tts.spoken.includes('Hi, this is Acme calling.'), 2000, 'greeting');
      const vm = (await record()).details!.voicemail as Record<string, any>;
      expect(vm).toMatchObject({ verdict: 'person', action: 'engine' });
      expect(vm.evidence.decidedAtMs).toBeLessThan(5000);
      await call.hangup();
    } finally {
      await w.close();
    }
  });

  it('ringback before the greeting does not count as a beep; the message follows the real beep', async () => {
    // The greeting only starts 3.5 s after the answer here (early media played in-band), so the
    // deadline is stretched as an operator would for such a carrier.
    const { w, call, record, totalMs } = await outbound('voicemail/ringback-then-greeting-beep', { end_call_on_voicemail: false }, 8000);
    try {
      expect(await call.ended).toBe('remote-bye');
      const vm = (await record()).details!.voicemail as Record<string, any>;
      expect(vm).toMatchObject({ verdict: 'voicemail', action: 'message', after: 'beep' });
      // Decided by the greeting (after 3.5 s of ringback and silence), not by the ringback tone.
      expect(vm.rule).not.toBe('beep');
      expect(vm.evidence.decidedAtMs).toBeGreaterThan(3500);
      expect(firstLoudMs(call.heard)).toBeGreaterThanOrEqual(totalMs - 1000 - 150);
    } finally {
      await w.close();
    }
    // The fixture alone lasts 12 s of real time; beside the file's other calls on two cores the
    // default 20 s leaves too little room.
  }, 40_000);
});
