/**
 * warm_call_transfer with a supervisor who answers in words, over SIP: the supervisor phone plays
 * synthesized fixtures (fixtures/audio/sup-*.wav) after the question; the engine runs the real
 * Silero VAD and the assistant's STT (Deepgram protocol, against its stand-in scripted with the
 * fixture's words) on the supervisor leg. Rules under test (src/call/control/supervisor.ts): words
 * count from the question on; "yes…" accepts, "no…" declines; unclear words never decide, so the
 * supervisor is still waited for (a key still works) until the window closes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resample } from '../../../src/audio/resample.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { SPEECH_ACCEPT_PROMPT } from '../../../src/call/control/supervisor.ts';
import { DeepgramStt } from '../../../src/providers/stt/deepgram.ts';
import { DeepgramStandIn, type DeepgramStandInOptions } from '../../support/deepgram-stand-in.ts';
import { sleep, toneShare } from '../../support/test-phone-rtp.ts';
import type { PhoneCall } from '../../support/test-phone.ts';
import { loadFixture } from '../../unit/vad/fixture-audio.ts';
import { until, world, type World } from './world.ts';

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

/** Plays a 16 kHz fixture from the phone (8 kHz PCMU); resolves when the last frame went out. */
function say(call: PhoneCall, fixture: string): Promise<void> {
  const pcm = resample(loadFixture(fixture), 16000, 8000);
  let at = 0;
  return new Promise((resolve) => {
    call.rtp.play(() => {
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

interface Setup {
  w: World;
  dg: DeepgramStandIn;
  call: PhoneCall;
  sup: PhoneCall;
  transfer(): Promise<Record<string, any> | undefined>;
  close(): Promise<void>;
}

/** An inbound call whose assistant asks for a warm transfer; resolves once the supervisor answered. */
/**
 * `script`: the stand-in's words per utterance it hears; the trailing '' makes any further
 * utterance (a fixture split at a comma's pause) a final without words.
 */
async function warmCall(script: DeepgramStandInOptions['script'], summary = 'Ada wants a refund for order 42.'): Promise<Setup> {
  const dg = await DeepgramStandIn.start({ script });
  const stt = { provider: new DeepgramStt({ apiKey: dg.options.apiKey, baseUrl: dg.url }), language: 'en-US' };
  const w = await world({ deps: { vad, stt: () => stt, summarize: async () => summary } });
  await w.h.ctx.store.db
    .updateTable('assistants')
    .set({
      config: JSON.stringify({
        initial_message: 'Hello.',
        tools: [{ type: 'warm_call_transfer', data: { supervisor_phone: '+14155550777', outbound_phone_id: w.trunk.phoneNumberId, description: 'escalations', hold_message: 'Hold.' } }],
      }),
    })
    .execute();
  w.llm.queue.push(
    { content: 'Let me get my supervisor.', toolCalls: [{ name: 'warm_transfer_call', arguments: { reason: 'refund', summary: 'Ada, refund' } }] },
    { content: 'Sorry, nobody is free. How else can I help?' },
  );
  const call = await w.call();
  await until(() => w.carrier.answered.length === 1, 4000, 'supervisor answered');
  return {
    w,
    dg,
    call,
    sup: w.carrier.answered[0]!,
    transfer: async () => (await w.details()).transfer,
    async close() {
      await w.close();
      await dg.close();
    },
  };
}

const asked = (s: Setup) => until(() => s.w.tts.spoken.includes(SPEECH_ACCEPT_PROMPT), 5000, 'question asked');

describe.concurrent('supervisor answers a warm transfer in words', () => {
  it('"Yes, put them through.": accepted by speech, the legs are bridged', async () => {
    const s = await warmCall(['Yes, put them through.', '']);
    try {
      await asked(s);
      // With an STT the question offers words and keys; it follows the briefing.
      expect(s.w.tts.spoken.at(-2)).toContain('Ada wants a refund for order 42.');
      await say(s.sup, 'sup-yes-put-through');
      await until(async () => (await s.transfer())?.outcome === 'accepted', 5000, 'accepted');
      expect((await s.transfer())!.supervisor_answer).toMatchObject({ outcome: 'accepted', by: 'speech', heard: 'Yes, put them through.', stt: { provider: 'deepgram' } });
      expect(s.w.tts.spoken.some((t) => /connect/i.test(t))).toBe(true);
      // The supervisor's STT stream was opened once, at the question.
      expect(s.dg.connections).toHaveLength(1);
      await sleep(300);
      s.call.rtp.playTone(600, 1200);
      const from = s.sup.heard.length;
      await sleep(1000);
      expect(toneShare(s.sup.heard.slice(from), 600)).toBeGreaterThan(0.5);
      await s.call.hangup();
      expect(await s.sup.ended).toBe('remote-bye');
    } finally {
      await s.close();
    }
  });

  it('"No, I can\'t right now.": declined by speech, the supervisor leg ends, the assistant resumes', async () => {
    const s = await warmCall(["No, I can't right now.", '']);
    try {
      await asked(s);
      // Not awaited: the leg may be hung up before the fixture's trailing silence has gone out.
      void say(s.sup, 'sup-no-cant');
      expect(await s.sup.ended).toBe('remote-bye');
      await until(() => s.w.tts.spoken.some((t) => t.includes('Sorry, nobody is free.')), 4000, 'assistant resumed');
      const result = JSON.parse(String(s.w.llm.requests[1]!.find((m) => m.role === 'tool')?.content));
      expect(result).toMatchObject({ transferred: false, outcome: 'refused' });
      expect(await s.transfer()).toMatchObject({ outcome: 'refused', supervisor_answer: { outcome: 'declined', by: 'speech', heard: "No, I can't right now." } });
      expect(s.call.dialog!.isEnded).toBe(false);
      await s.call.hangup();
    } finally {
      await s.close();
    }
  });

  it('unclear words ("Hmm, who is it?") decide nothing: still waiting, and a key 1 then accepts', async () => {
    const s = await warmCall(['Hmm, who is it?', '']);
    try {
      await asked(s);
      await say(s.sup, 'sup-who-is-it');
      // The final came back and was judged; nothing was decided.
      await until(() => s.dg.connections[0]?.sent.some((m) => m.is_final === true && m.channel !== undefined) === true, 4000, 'final sent');
      await sleep(500);
      expect(await s.transfer()).toBeUndefined();
      expect(s.sup.dialog!.isEnded).toBe(false);
      await s.sup.rtp.sendDtmf('1');
      await until(async () => (await s.transfer())?.outcome === 'accepted', 5000, 'accepted');
      expect((await s.transfer())!.supervisor_answer).toMatchObject({ outcome: 'accepted', by: 'key', unclear: ['Hmm, who is it?'] });
      await s.call.hangup();
    } finally {
      await s.close();
    }
  });

  it('unclear words and then nothing: no answer when the window closes; the assistant resumes', async () => {
    const s = await warmCall(['Hmm, who is it?', '']);
    try {
      await asked(s);
      const askedAt = Date.now();
      await say(s.sup, 'sup-who-is-it');
      expect(await s.sup.ended).toBe('remote-bye');
      // The window (3 s in these tests) opens once the question is spoken: not before it closes.
      expect(Date.now() - askedAt).toBeGreaterThanOrEqual(3000);
      await until(async () => (await s.transfer())?.outcome === 'no-answer', 3000, 'recorded');
      expect((await s.transfer())!.supervisor_answer).toEqual(expect.objectContaining({ outcome: 'no-answer', unclear: ['Hmm, who is it?'] }));
      expect((await s.transfer())!.supervisor_answer.by).toBeUndefined();
      await until(() => s.w.tts.spoken.some((t) => t.includes('Sorry, nobody is free.')), 4000, 'assistant resumed');
      await s.call.hangup();
    } finally {
      await s.close();
    }
  });

  it('"okay" said while the summary plays is no answer: words count from the question on', async () => {
    const long =
      'Ada Lovelace called about order 42, which arrived broken. She has already sent photos and wants a full refund today rather than a replacement. The refund is above the limit the assistant may approve, so a person has to decide it.';
    const s = await warmCall(['Okay.', ''], long);
    try {
      await until(() => s.w.tts.spoken.some((t) => t.includes('Ada Lovelace called')), 4000, 'summary playing');
      await say(s.sup, 'bc-okay');
      expect(s.w.tts.spoken.includes(SPEECH_ACCEPT_PROMPT)).toBe(false); // still in the summary
      expect(s.dg.connections).toHaveLength(0);
      expect(await s.sup.ended).toBe('remote-bye');
      // The leg's BYE goes out first; the transfer is written once its media is closed too.
      await until(async () => (await s.transfer()) !== undefined, 2000, 'transfer written');
      expect((await s.transfer())!.supervisor_answer).toMatchObject({ outcome: 'no-answer' });
      await s.call.hangup();
    } finally {
      await s.close();
    }
  });
});
