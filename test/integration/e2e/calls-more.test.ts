/**
 * More of the real engine over SIP/RTP: a recorded call yields a stereo WAV (caller left,
 * assistant right), an outbound call carries its POST variables into the conversation and
 * greets only once the customer has said hello (wait_for_customer), and a low balance refuses the call with 402 before anything answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav } from '../../../src/audio/wav.ts';
import { TestPhone } from '../../support/test-phone.ts';
import { fixture8k, firstAudible, listen, speak, startWorld, waitQuiet, waitUntil, type World } from './world.ts';

let w: World;
let phone: TestPhone;

beforeAll(async () => {
  w = await startWorld({ deepgram: { script: ['What are your opening hours?'] } });
  w.chat.defaultResponse = { content: 'We are open from nine to five.' };
  phone = await TestPhone.create({ userName: 'carrier' });
}, 60_000);

afterAll(async () => {
  await phone?.close();
  await w?.close();
});

function channelRms(samples: Int16Array, channel: 0 | 1): number {
  let sum = 0;
  for (let i = channel; i < samples.length; i += 2) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / Math.max(1, samples.length / 2));
}

describe('more calls through the real engine', () => {
  it('record: true stores a stereo WAV with the caller left and the assistant right', async () => {
    const assistant = await w.assistant({ record: true, initial_message: 'Hello, this call is recorded.' });
    const call = await phone.call(w.target());
    const heard = listen(call);
    const t0 = performance.now();
    await waitUntil(() => firstAudible(heard, t0) !== undefined, 4000, 'greeting');
    await waitQuiet(heard, t0, 600, 10_000);
    await speak(call, fixture8k('utt-opening-hours'));
    const t1 = performance.now();
    await waitUntil(() => firstAudible(heard, t1) !== undefined, 6000, 'answer');
    await waitQuiet(heard, t1, 500, 10_000);
    await call.hangup();

    const id = (await w.api('GET', `/user/calls?limit=1&assistant_id=${assistant}`)).body[0].id as number;
    const rec = await w.waitCall(id, (c) => c.recording_url !== null && c.status === 'completed');
    expect(rec.recording_url).toMatch(new RegExp(`/api/user/calls/${id}/recording$`));
    const res = await fetch(rec.recording_url, { headers: { authorization: `Bearer ${w.account.key}` } });
    expect(res.status).toBe(200);
    const wav = readWav(new Uint8Array(await res.arrayBuffer()));
    expect(wav.channels).toBe(2);
    expect(wav.sampleRate).toBe(16_000);
    expect(wav.samples.length / 2 / wav.sampleRate).toBeGreaterThan(3);
    expect(channelRms(wav.samples, 0)).toBeGreaterThan(100); // the question
    expect(channelRms(wav.samples, 1)).toBeGreaterThan(100); // greeting and answer
    // And the assistant delete frees the number for the next test.
    expect((await w.api('DELETE', `/user/assistant/${assistant}`)).status).toBe(200);
  }, 60_000);

  it('an outbound call fills {{variables}} from POST /user/calls and waits for the customer', async () => {
    const assistant = await w.assistant({
      type: 'outbound',
      phone_number_id: undefined,
      wait_for_customer: true,
      initial_message: 'Hi {{name}}!',
      system_prompt: 'You are calling {{name}} about their booking.',
      ringing_time: 10,
    });
    const live = w.engine.ctx.trunks.list()[0]!;
    live.spec.address = `127.0.0.1:${phone.port}`; // REST takes a host only; the phone is on an ephemeral port
    const placed = await w.api('POST', '/user/calls', { assistant_id: assistant, phone_number_id: w.phoneNumberId, to: '+14155550199', variables: { name: 'Ada' } });
    expect(placed.status).toBe(201);
    await waitUntil(() => phone.answered.length > 0, 5000, 'outbound call answered');
    const call = phone.answered[0]!;
    const heard = listen(call);
    // wait_for_customer: nothing audible until the customer says hello.
    await new Promise((r) => setTimeout(r, 1500));
    expect(firstAudible(heard, 0)).toBeUndefined();
    const before = w.chat.requests.length;
    // Outbound calls start with answering-machine detection (call control): the customer says
    // "hello?" once, that gets the "person" verdict, and since they spoke first the assistant
    // answers with its initial message right away (wait_for_customer is satisfied).
    await speak(call, fixture8k('utt-yes'));
    const tHello = performance.now();
    const callId = placed.body.id as number;
    const row = async () => ((await w.engine.ctx.repos.calls.getById(callId))?.details ?? {}) as Record<string, any>;
    await waitUntil(() => firstAudible(heard, tHello) !== undefined, 8000, 'initial message after hello');
    expect((await row()).voicemail).toMatchObject({ verdict: 'person', action: 'engine' });
    await waitQuiet(heard, tHello, 600, 10_000);
    // Then the conversation goes on as usual: a question gets the model's answer.
    await speak(call, fixture8k('utt-opening-hours'));
    const t1 = performance.now();
    await waitUntil(() => firstAudible(heard, t1) !== undefined, 6000, 'reply');
    const req = w.chat.requests[before]!;
    expect(req.messages[0]!.content).toContain('You are calling Ada about their booking.');
    await call.hangup();
    const rec = await w.waitCall(placed.body.id, (c) => c.status === 'completed' && c.cost > 0);
    const greeting = rec.transcript.find((t: { speaker: string; kind?: string; text?: string }) => t.kind === 'greeting');
    expect(greeting?.text).toContain('Hi Ada!');
  }, 60_000);

  it('a multimodal assistant whose realtime model cannot be reached apologises and hangs up, never silent', async () => {
    // OPENAI_BASE_URL points at the HTTP router, which has no realtime WebSocket: every connect fails.
    const assistant = await w.assistant({ mode: 'multimodal', voice_id: 101, multimodal_model_id: 1, transcriber_provider_id: undefined, llm_model_id: undefined });
    const call = await phone.call(w.target());
    const heard = listen(call);
    const t0 = performance.now();
    expect(await Promise.race([call.ended, new Promise((r) => setTimeout(() => r('still up'), 25_000))])).toBe('remote-bye');
    expect(firstAudible(heard, t0)).toBeDefined(); // the offline apology, not silence
    const id = (await w.api('GET', `/user/calls?limit=1&assistant_id=${assistant}`)).body[0].id as number;
    const rec = await w.waitCall(id, (c) => c.status !== 'in-progress');
    expect(['completed', 'failed']).toContain(rec.status);
    expect((await w.api('DELETE', `/user/assistant/${assistant}`)).status).toBe(200);
  }, 40_000);

  it('refuses a call with 402 when the balance is below a minute', async () => {
    await w.assistant({});
    const repos = w.engine.ctx.repos;
    await repos.ledger.adjust(w.account.id, -await repos.ledger.balance(w.account.id), 'e2e drain');
    const call = await phone.dial(w.target());
    expect((await call.outcome).status).toBe(402);
  }, 30_000);
});
