import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from '../../support/test-phone-rtp.ts';
import { until, world, type World } from './world.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** The tool result the model saw in its second request. */
function toolResult(w: World, index = 1): Record<string, any> {
  const msgs = w.llm.requests[index] ?? [];
  const tool = msgs.find((m) => m.role === 'tool');
  return JSON.parse(String(tool?.content ?? '{}'));
}

describe('dtmf_input and collect_keypad over SIP', () => {
  it('send_dtmf: the caller receives the RFC 4733 digits in order', async () => {
    w = await world({ tools: [{ type: 'dtmf_input', data: { description: 'IVR' } }] });
    w.llm.queue.push({ toolCalls: [{ name: 'send_dtmf', arguments: { digits: '1 2#' } }] }, { content: 'Done.' });
    const call = await w.call();
    await until(() => call.rtp.dtmfHeard.length >= 3, 4000, 'digits');
    expect(call.rtp.dtmfHeard).toEqual(['1', '2', '#']);
    await until(() => w!.llm.requests.length >= 2, 4000, 'second model round');
    expect(toolResult(w)).toEqual({ sent: '12#' });
    await call.hangup();
    await until(async () => (await w!.details()).dtmf_sent !== undefined, 2000, 'details');
    expect((await w.details()).dtmf_sent[0].digits).toBe('12#');
  });

  for (const stop of ['#', '*'] as const) {
    it(`collect_keypad ends at the stop key ${stop}; the record keeps no digits`, async () => {
      w = await world({ tools: [{ type: 'collect_keypad', data: { timeout: 5, stop_key: stop } }] });
      w.llm.queue.push({ toolCalls: [{ name: 'collect_keypad', arguments: {} }] }, { content: 'Thanks.' });
      const call = await w.call();
      await sleep(300);
      for (const d of ['4', '2', stop === '#' ? '*' : '#', stop]) {
        // The other key is a digit for this collection only when it is not the stop key.
        if (d === (stop === '#' ? '*' : '#')) continue;
        await call.rtp.sendDtmf(d);
        await sleep(80);
      }
      await until(() => w!.llm.requests.length >= 2, 4000, 'second model round');
      expect(toolResult(w)).toEqual({ digits: '42', ended_by: 'stop-key' });
      await call.hangup();
      await until(async () => (await w!.details()).keypad !== undefined, 2000, 'details');
      expect((await w.details()).keypad[0]).toMatchObject({ digits: 2, ended_by: 'stop-key' });
    });
  }

  it('collect_keypad ends after `timeout` seconds without a key', async () => {
    w = await world({ tools: [{ type: 'collect_keypad', data: { timeout: 1 } }] });
    w.llm.queue.push({ toolCalls: [{ name: 'collect_keypad', arguments: {} }] }, { content: 'Thanks.' });
    const call = await w.call();
    await sleep(300);
    await call.rtp.sendDtmf('7');
    const t0 = Date.now();
    await until(() => w!.llm.requests.length >= 2, 4000, 'second model round');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(800);
    expect(toolResult(w)).toEqual({ digits: '7', ended_by: 'timeout' });
    await call.hangup();
  });
});

describe('end_call over SIP', () => {
  it('the assistant finishes its goodbye, then BYE', async () => {
    w = await world({ tools: [{ type: 'end_call', data: { description: 'when done' } }] });
    w.llm.queue.push({ content: 'Goodbye then!', toolCalls: [{ name: 'end_call', arguments: { reason: 'done' } }] }, { content: '' });
    const call = await w.call();
    const reason = await call.ended;
    expect(reason).toBe('remote-bye');
    // The goodbye (tone speech) was heard before the BYE.
    expect(w.tts.spoken).toContain('Goodbye then!');
    expect(call.heard.some((s) => Math.abs(s) > 2000)).toBe(true);
    await until(async () => (await w!.h.ctx.repos.calls.getById(1))?.endCause === 'local-hangup', 3000, 'record');
  });
});
