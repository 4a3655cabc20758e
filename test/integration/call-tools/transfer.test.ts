import { afterEach, describe, expect, it } from 'vitest';
import { header, type SipRequest } from '../../../src/sip/message.ts';
import { sleep, toneRatio, toneShare } from '../../support/test-phone-rtp.ts';
import { acceptRefers, until, world, type World } from './world.ts';
import { StandInLlm } from '../../../src/replay/stand-ins.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { llmSummarizer } from '../../../src/call/wiring/summarize.ts';
import { ACCEPT_PROMPT } from '../../../src/call/control/supervisor.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const transferTool = { type: 'call_transfer', data: { phone_number: '+14155550123', description: 'to billing' } };
const scriptTransfer = (w: World) => w.llm.queue.push({ content: 'Transferring you now.', toolCalls: [{ name: 'transfer_call', arguments: { reason: 'billing' } }] }, { content: '' });

describe('call_transfer over SIP', () => {
  it('REFER accepted: 202, NOTIFY 100 then 200, our leg hangs up; the record says refer', async () => {
    w = await world({ tools: [transferTool] });
    scriptTransfer(w);
    const call = await w.call();
    const refers: SipRequest[] = [];
    acceptRefers(call.dialog!, refers);
    expect(await call.ended).toBe('remote-bye');
    expect(refers).toHaveLength(1);
    expect(header(refers[0]!, 'refer-to')).toMatch(/^<sip:\+14155550123@127\.0\.0\.1>$/);
    expect(w.carrier.incoming).toHaveLength(0); // no bridge leg
    await until(async () => (await w!.details()).transfer?.notify_status === 200, 2000, 'details');
    expect((await w.details()).transfer).toMatchObject({ type: 'blind', method: 'refer', refer_status: 202, target: '+14155550123', reason: 'billing' });
  });

  it('REFER refused (405): a new leg through the trunk is bridged; audio flows both ways; both legs on the record', async () => {
    w = await world({ tools: [transferTool] });
    scriptTransfer(w);
    const call = await w.call(); // the caller's dialog refuses REFER with 405 (no listener)
    await until(() => w!.carrier.answered.length === 1, 4000, 'bridge leg answered');
    const far = w.carrier.answered[0]!;
    expect(w.carrier.incoming[0]!.request.uri).toContain('+14155550123@127.0.0.1');
    // Once the engine has stopped talking the legs are joined: a tone from the far leg reaches the caller and back.
    await until(async () => (await w!.details()).transfer?.method === 'bridge', 4000, 'bridge recorded');
    await sleep(300);
    far.rtp.playTone(1000, 1500);
    call.rtp.playTone(600, 1500);
    const callerFrom = call.heard.length;
    const farFrom = far.heard.length;
    await sleep(1200);
    expect(toneShare(call.heard.slice(callerFrom), 1000)).toBeGreaterThan(0.5);
    expect(toneShare(far.heard.slice(farFrom), 600)).toBeGreaterThan(0.5);
    // The far leg hangs up: the caller is hung up too, and the record lists both legs.
    await far.hangup();
    expect(await call.ended).toBe('remote-bye');
    await until(async () => (await w!.details()).transfer?.legs?.[1]?.end_cause !== undefined, 3000, 'legs recorded');
    const t = (await w.details()).transfer;
    expect(t).toMatchObject({ method: 'bridge', refer_status: 405 });
    expect(t.legs.map((l: any) => l.leg)).toEqual(['caller', 'target']);
    expect(t.legs[1].relayed_frames.to_caller).toBeGreaterThan(20);
    await until(() => w!.h.pool.inUse === 0, 3000, 'ports released');
  });

  it('REFER refused and the bridge leg busy: the model is told, the call goes on', async () => {
    w = await world({ tools: [transferTool] });
    scriptTransfer(w);
    w.carrier.answerMode = { reject: 486 };
    const call = await w.call();
    await until(() => w!.llm.requests.length >= 2, 5000, 'model told');
    const result = JSON.parse(String(w.llm.requests[1]!.find((m) => m.role === 'tool')?.content));
    expect(result).toMatchObject({ transferred: false, reason: 'busy' });
    await sleep(200);
    expect(call.dialog!.isEnded).toBe(false);
    await call.hangup();
  });
});

describe('caller ID of the bridged leg (REFER refused)', () => {
  const bridged = async (wd: World) => {
    scriptTransfer(wd);
    const call = await wd.call(); // the caller's dialog refuses REFER with 405
    await until(() => wd.carrier.answered.length === 1, 4000, 'bridge leg answered');
    await until(async () => (await wd.details()).transfer?.method === 'bridge', 4000, 'bridge recorded');
    return call;
  };

  it("the customer's number is passed through: From and P-Asserted-Identity, with Diversion naming the trunk", async () => {
    w = await world({ tools: [transferTool], callerUser: '+14155550142' });
    const call = await bridged(w);
    const invite = w.carrier.incoming[0]!.request;
    expect(header(invite, 'from')).toMatch(/^<sip:\+14155550142@127\.0\.0\.1>;tag=/);
    expect(header(invite, 'p-asserted-identity')).toBe('<sip:+14155550142@127.0.0.1>');
    expect(header(invite, 'diversion')).toBe('<sip:+14155550100@127.0.0.1>;reason=unconditional;counter=1;privacy=off');
    expect((await w.details()).transfer.caller_id).toEqual({ kind: 'customer', number: '+14155550142', diversion: '+14155550100' });
    await call.hangup();
  });

  it("a carrier that refuses the passthrough (403) gets the same leg again with the trunk's own number", async () => {
    w = await world({ tools: [transferTool], callerUser: '+14155550142' });
    const carrier = w.carrier;
    const answer = carrier.ua.onInvite!;
    // A carrier that only lets its own numbers out: a diverted caller ID is refused.
    carrier.ua.onInvite = (inc) => {
      if (header(inc.request, 'diversion') === undefined) return answer(inc);
      carrier.incoming.push(inc);
      inc.reject(403);
    };
    const call = await bridged(w);
    expect(carrier.incoming).toHaveLength(2);
    const second = carrier.incoming[1]!.request;
    expect(header(second, 'from')).toMatch(/^<sip:\+14155550100@127\.0\.0\.1>;tag=/);
    expect(header(second, 'p-asserted-identity')).toBe('<sip:+14155550100@127.0.0.1>');
    expect(header(second, 'diversion')).toBeUndefined();
    expect((await w.details()).transfer.caller_id).toEqual({ kind: 'trunk', number: '+14155550100', passthrough_refused: 403 });
    await call.hangup();
  });

  it('warm transfer with caller_id_mode customer_number: the supervisor sees the customer, the trunk diverts', async () => {
    w = await world({ callerUser: '+14155550142' });
    await w.h.ctx.store.db
      .updateTable('assistants')
      .set({
        config: JSON.stringify({
          initial_message: 'Hello.',
          tools: [
            {
              type: 'warm_call_transfer',
              data: { supervisor_phone: '+14155550777', outbound_phone_id: w.trunk.phoneNumberId, description: 'escalations', hold_message: 'Hold.', caller_id_mode: 'customer_number' },
            },
          ],
        }),
      })
      .execute();
    w.llm.queue.push({ content: 'One moment.', toolCalls: [{ name: 'warm_transfer_call', arguments: { reason: 'refund' } }] });
    const call = await w.call();
    await until(() => w!.carrier.answered.length === 1, 4000, 'supervisor answered');
    const invite = w.carrier.incoming[0]!.request;
    expect(header(invite, 'from')).toMatch(/^<sip:\+14155550142@127\.0\.0\.1>;tag=/);
    expect(header(invite, 'p-asserted-identity')).toBe('<sip:+14155550142@127.0.0.1>');
    expect(header(invite, 'diversion')).toBe('<sip:+14155550100@127.0.0.1>;reason=unconditional;counter=1;privacy=off');
    await w.carrier.answered[0]!.rtp.sendDtmf('1');
    await until(async () => (await w!.details()).transfer?.outcome === 'accepted', 6000, 'accepted');
    expect((await w.details()).transfer.caller_id).toEqual({ kind: 'customer', number: '+14155550142', diversion: '+14155550100' });
    await call.hangup();
  });

  it("an anonymous caller: the far peer sees the trunk's number, nothing diverted", async () => {
    w = await world({ tools: [transferTool], callerUser: 'anonymous' });
    const call = await bridged(w);
    const invite = w.carrier.incoming[0]!.request;
    expect(header(invite, 'from')).toMatch(/^<sip:\+14155550100@127\.0\.0\.1>;tag=/);
    expect(header(invite, 'p-asserted-identity')).toBe('<sip:+14155550100@127.0.0.1>');
    expect(header(invite, 'diversion')).toBeUndefined();
    expect((await w.details()).transfer.caller_id).toEqual({ kind: 'trunk', number: '+14155550100' });
    await call.hangup();
  });
});

describe('warm_call_transfer over SIP', () => {
  const warm = (w: { trunk: { phoneNumberId: number } }) => ({
    type: 'warm_call_transfer',
    data: { supervisor_phone: '+14155550777', outbound_phone_id: w.trunk.phoneNumberId, description: 'escalations', hold_music_volume: 60, hold_message: 'Hold.' },
  });

  async function setup(): Promise<World> {
    const summaries: string[] = [];
    const wd = await world({
      deps: {
        summarize: async (_a, brief) => {
          summaries.push(brief.instructions, brief.context);
          return 'Ada wants a refund for order 42.';
        },
      },
    });
    // The tool needs the trunk's phone id: rewrite the assistant's tools now that it exists.
    await wd.h.ctx.store.db
      .updateTable('assistants')
      .set({ config: JSON.stringify({ initial_message: 'Hello.', tools: [warm(wd)] }) })
      .execute();
    wd.llm.queue.push({ content: 'Let me get my supervisor.', toolCalls: [{ name: 'warm_transfer_call', arguments: { reason: 'refund', summary: 'Ada, refund' } }] });
    return Object.assign(wd, { summaries });
  }

  it('accepted with 1: caller hears hold music, supervisor is briefed, then the legs are bridged', async () => {
    w = await setup();
    const call = await w.call();
    await until(() => w!.carrier.answered.length === 1, 4000, 'supervisor answered');
    const sup = w.carrier.answered[0]!;
    // From and P-Asserted-Identity carry the outbound number (caller_id_mode outbound_number).
    expect(w.carrier.incoming[0]!.from).toContain('+14155550100');
    expect(header(w.carrier.incoming[0]!.request, 'p-asserted-identity')).toBe('<sip:+14155550100@127.0.0.1>');
    expect(header(w.carrier.incoming[0]!.request, 'diversion')).toBeUndefined();
    await until(() => w!.tts.spoken.includes(ACCEPT_PROMPT), 4000, 'briefing and question');
    // Without an STT the question asks for keys only; it follows the briefing.
    const spoken = w.tts.spoken;
    expect(spoken.findIndex((t) => t.includes('Ada wants a refund'))).toBe(spoken.indexOf(ACCEPT_PROMPT) - 1);
    // Hold music after the short hold message: the chord's E (329.63 Hz), not the stand-in voice's 180 Hz.
    await sleep(300);
    const holdFrom = call.heard.length;
    await sleep(600);
    const held = call.heard.slice(holdFrom, holdFrom + 3200);
    expect(toneRatio(held, 329.63)).toBeGreaterThan(0.1);
    expect(toneRatio(held, 180)).toBeLessThan(0.02);
    await until(() => sup.heard.some((s) => Math.abs(s) > 2000), 3000, 'supervisor hears the briefing');
    await sup.rtp.sendDtmf('1');
    await until(async () => (await w!.details()).transfer?.outcome === 'accepted', 5000, 'accepted');
    expect(w.tts.spoken.some((t) => /connect/i.test(t))).toBe(true);
    await sleep(200);
    sup.rtp.playTone(1000, 1200);
    const from = call.heard.length;
    await sleep(1000);
    expect(toneShare(call.heard.slice(from), 1000)).toBeGreaterThan(0.5);
    await call.hangup();
    expect(await sup.ended).toBe('remote-bye');
  });

  it('refused with 2: the supervisor leg ends and the assistant resumes with the caller', async () => {
    w = await setup();
    w.llm.queue.push({ content: 'Sorry, nobody is free. How else can I help?' });
    const call = await w.call();
    await until(() => w!.carrier.answered.length === 1, 4000, 'supervisor answered');
    const sup = w.carrier.answered[0]!;
    await until(() => sup.heard.some((s) => Math.abs(s) > 2000), 4000, 'briefing heard');
    await sup.rtp.sendDtmf('2');
    expect(await sup.ended).toBe('remote-bye');
    await until(() => w!.llm.requests.length >= 2, 4000, 'model told');
    const result = JSON.parse(String(w.llm.requests[1]!.find((m) => m.role === 'tool')?.content));
    expect(result).toMatchObject({ transferred: false, outcome: 'refused' });
    await until(() => w!.tts.spoken.some((t) => t.includes('Sorry, nobody is free.')), 3000, 'assistant resumed');
    expect(call.dialog!.isEnded).toBe(false);
    expect((await w.details()).transfer).toMatchObject({ type: 'warm', outcome: 'refused' });
    await call.hangup();
  });
});

describe('warm_call_transfer briefing written by the LLM summariser (src/call/wiring/summarize.ts)', () => {
  async function setup(summaryLlm: StandInLlm): Promise<World> {
    // The call's conversation so far is what the engine run shows the conductor (world.ts).
    const wd = await world({
      callerLine: 'Hi, this is Ada Lovelace, order 42 arrived broken. I want my money back today.',
      deps: { summarize: llmSummarizer({ resolveModel: () => ({ provider: summaryLlm, model: 'summary' }) }) },
    });
    await wd.h.ctx.store.db
      .updateTable('assistants')
      .set({
        config: JSON.stringify({
          initial_message: 'Hello.',
          tools: [
            {
              type: 'warm_call_transfer',
              data: { supervisor_phone: '+14155550777', outbound_phone_id: wd.trunk.phoneNumberId, description: 'escalations', hold_message: 'Hold.', summary_instructions: 'Mention the order number first.' },
            },
          ],
        }),
      })
      .execute();
    wd.llm.queue.push({ content: 'Let me get my supervisor.', toolCalls: [{ name: 'warm_transfer_call', arguments: { reason: 'refund over policy limit', summary: 'Model says: refund' } }] });
    return wd;
  }

  it('instructions and transcript reach the LLM; its summary is what the supervisor hears', async () => {
    const summaryLlm = new StandInLlm(systemClock, { content: 'Order 42: **Ada Lovelace** got it broken and wants a refund today. A human must approve it.' });
    w = await setup(summaryLlm);
    const call = await w.call();
    await until(() => w!.carrier.answered.length === 1, 4000, 'supervisor answered');
    await until(() => w!.tts.spoken.some((t) => t.includes('Press 1')), 4000, 'briefing');
    expect(summaryLlm.requests).toHaveLength(1);
    const [system, user] = summaryLlm.requests[0]!;
    expect(system!.content).toContain('Mention the order number first.');
    expect(user!.content).toContain('Assistant: Hello.\nCaller: Hi, this is Ada Lovelace, order 42 arrived broken. I want my money back today.');
    expect(user!.content).toContain('Reason for the transfer: refund over policy limit');
    const briefing = w.tts.spoken[w.tts.spoken.indexOf(ACCEPT_PROMPT) - 1]!;
    expect(briefing).toContain('Order 42: Ada Lovelace got it broken and wants a refund today. A human must approve it.');
    expect(briefing).not.toContain('Model says');
    await call.hangup();
  });

  it('falls back to the model summary when the LLM fails', async () => {
    const summaryLlm = new StandInLlm(systemClock, { error: 'provider down' });
    w = await setup(summaryLlm);
    const call = await w.call();
    await until(() => w!.carrier.answered.length === 1, 4000, 'supervisor answered');
    await until(() => w!.tts.spoken.some((t) => t.includes('Press 1')), 4000, 'briefing');
    expect(summaryLlm.requests).toHaveLength(1);
    expect(w.tts.spoken[w.tts.spoken.indexOf(ACCEPT_PROMPT) - 1]).toContain('Model says: refund');
    await call.hangup();
  });
});
