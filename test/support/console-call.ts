/**
 * A real recorded call for the console's tests: a test phone dials the engine over loopback
 * SIP/RTP (stand-in STT/LLM/TTS, test/integration/e2e/world.ts), hears the greeting, asks a
 * question, barges in on the answer, presses a key and hangs up. The assistant records, so the
 * call leaves a stereo WAV and a call tape (with the engine's timeline) behind.
 */
import { TestPhone } from './test-phone.ts';
import { fixture8k, firstAudible, listen, speak, waitQuiet, waitUntil, type World } from '../integration/e2e/world.ts';

export const CONSOLE_CALL_SCRIPT = ['What are your opening hours?', 'Actually, can I book a table for two tomorrow?'];
export const CONSOLE_CALL_ANSWER =
  'We are open from nine in the morning to five in the evening, Monday to Friday. On Saturdays we open at ten and close at four.';

/** Places the call and waits until its record is complete; returns the call's id. */
export async function placeRecordedCall(w: World): Promise<number> {
  w.chat.defaultResponse = { content: CONSOLE_CALL_ANSWER };
  await w.assistant({ record: true, is_webhook_active: true, webhook_url: `${w.sink.url}/hooks/calls`, send_webhook_only_on_completed: true });
  const phone = await TestPhone.create();
  try {
    const call = await phone.dial(w.target());
    const heard = listen(call);
    if ((await call.outcome).status !== 200) throw new Error('the engine did not answer');
    const answeredAt = performance.now();
    await waitUntil(() => firstAudible(heard, answeredAt) !== undefined, 6000, 'greeting');
    await waitQuiet(heard, answeredAt, 800, 15_000);
    await speak(call, fixture8k('utt-opening-hours'));
    const askedAt = performance.now();
    await waitUntil(() => firstAudible(heard, askedAt) !== undefined, 8000, 'answer');
    await new Promise((r) => setTimeout(r, 1500));
    await speak(call, fixture8k('utt-book-table'));
    const bargedAt = performance.now();
    await waitUntil(() => firstAudible(heard, bargedAt + 300) !== undefined, 8000, 'reply to the barge-in');
    await new Promise((r) => setTimeout(r, 1200));
    await call.rtp.sendDtmf('5', 120);
    await new Promise((r) => setTimeout(r, 400));
    await call.hangup();
  } finally {
    await phone.close();
  }
  const list = await w.api('GET', '/user/calls?limit=1');
  const id = list.body[0].id as number;
  await w.waitCall(id, (c) => c.status === 'completed' && c.recording_url !== null && c.tape_url !== null && (c.transcript?.length ?? 0) > 2, 20_000);
  return id;
}
