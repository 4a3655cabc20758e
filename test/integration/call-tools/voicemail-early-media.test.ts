/**
 * Voicemail detection hears early media: the test carrier answers the engine's INVITE with a 183
 * and SDP, plays a fixture before the answer (a mailbox greeting, or ringback), then answers. The
 * conductor classifies with the real Silero VAD and beep detector, starting from what the call
 * heard before the answer (docs/EARLY-MEDIA.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resample } from '../../../src/audio/resample.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { PhoneRtp } from '../../support/test-phone-rtp.ts';
import { loadFixture } from '../../unit/vad/fixture-audio.ts';
import { firstLoudMs, until, world } from './world.ts';

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

/** Plays a 16 kHz fixture from `rtp` (8 kHz PCMU), then silence; resolves when it has been played. */
function play(rtp: PhoneRtp, pcm16k: Int16Array): Promise<void> {
  const pcm = resample(pcm16k, 16000, 8000);
  let at = 0;
  return new Promise((resolve) => {
    rtp.play(() => {
      if (at >= pcm.length) {
        resolve();
        return undefined;
      }
      const out = new Int16Array(160);
      out.set(pcm.subarray(at, at + 160));
      at += 160;
      return out;
    });
  });
}

async function placeWithEarlyMedia(config: Record<string, unknown>) {
  const w = await world({ deps: { vad } });
  w.carrier.answerMode = 'ring';
  const assistant = await w.h.assistant(null, { initial_message: 'Hi, this is Acme calling.', ...config }, 'outbound');
  const res = await w.h.req('POST', '/user/calls', { assistant_id: assistant, phone_number_id: w.trunk.phoneNumberId, to: '+14155550199' });
  expect(res.status).toBe(201);
  await until(() => w.carrier.incoming.length === 1 && w.h.server.registry.list().length === 1, 8000, `INVITE (${w.carrier.incoming.length}, ${w.h.server.registry.list().length})`);
  const inc = w.carrier.incoming[0]!;
  const rtp = await PhoneRtp.open('127.0.0.1');
  rtp.setRemote(inc.offer!);
  inc.progress(rtp.sdp());
  const record = async () => (await w.h.ctx.repos.calls.getById(res.body.id))!;
  return { w, inc, rtp, session: w.h.server.registry.list()[0]!, record };
}

describe.concurrent('voicemail detection hears early media', () => {
  it('a mailbox greeting played as early media, answered at its end: voicemail on the greeting heard before the answer, no engine', async () => {
    const { w, inc, rtp, record } = await placeWithEarlyMedia({ end_call_on_voicemail: true });
    try {
      await play(rtp, loadFixture('voicemail/greeting-no-beep'));
      const dialog = inc.accept(rtp.sdp());
      const ended = new Promise<void>((r) => dialog.once('ended', () => r()));
      await ended;
      await until(async () => (await record()).status !== 'in-progress', 3000, 'record written');
      const rec = await record();
      const vm = rec.details!.voicemail as Record<string, any>;
      expect(vm).toMatchObject({ verdict: 'voicemail', rule: 'long-greeting', action: 'hang-up' });
      // Decided on audio from before the answer (negative times count back from the 200 OK).
      expect(vm.early_media_ms).toBeGreaterThan(5000);
      expect(vm.evidence.firstSpeechAtMs).toBeLessThan(0);
      expect(vm.at_ms).toBeLessThan(1000);
      expect(w.runs).toHaveLength(0);
      expect(w.tts.spoken).toEqual([]);
      expect(firstLoudMs(rtp.heard)).toBeUndefined();
      expect(rec.status).toBe('completed');
    } finally {
      rtp.close();
      await w.close();
    }
  }, 40_000);

  it('ringback as early media, then a person says "hello?": ringback is no greeting, the assistant speaks only after the answer', async () => {
    const { w, inc, rtp, session, record } = await placeWithEarlyMedia({});
    try {
      await play(rtp, loadFixture('voicemail/ringback-na').subarray(0, 16000 * 4));
      // The engine heard the ringback before the answer, and knew it for a call-progress tone.
      const early = session.earlyAudioStats!;
      expect(early.audibleFrames).toBeGreaterThan(50);
      // (A burst's first frame, cut by the jitter buffer's timing, may be part tone, part silence.)
      expect(early.toneFrames).toBeGreaterThanOrEqual(early.audibleFrames * 0.9);
      // Nothing audible went to the carrier while ringing.
      const heardBeforeAnswer = rtp.heard.length;
      expect(heardBeforeAnswer).toBeGreaterThan(8 * 1000);
      expect(firstLoudMs(rtp.heard)).toBeUndefined();
      inc.accept(rtp.sdp());
      void play(rtp, loadFixture('voicemail/person-hello'));
      await until(() => w.runs.length === 1, 8000, 'engine started');
      await until(() => w.tts.spoken.includes('Hi, this is Acme calling.'), 3000, 'greeting');
      await until(() => (firstLoudMs(rtp.heard) ?? 0) > 0, 3000, 'greeting heard');
      expect(firstLoudMs(rtp.heard)!).toBeGreaterThan(heardBeforeAnswer / 8);
      const vm = (await record()).details!.voicemail as Record<string, any>;
      expect(vm).toMatchObject({ verdict: 'person', action: 'engine' });
      expect(vm.evidence.firstSpeechAtMs).toBeGreaterThanOrEqual(0);
      await session.hangup();
    } finally {
      rtp.close();
      await w.close();
    }
  }, 40_000);
});
