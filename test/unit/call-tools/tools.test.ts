import { describe, expect, it } from 'vitest';
import { DEFAULT_TEXTS } from '../../../src/assistants/tools.ts';
import { buildVoiceTools } from '../../../src/call/tools/index.ts';
import type { AgentTool } from '../../../src/agent/types.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { FakeControl } from './fake-control.ts';

// Tuesday 2030-03-05 15:00 UTC = 10:00 in New York, 00:00 (Wednesday) in Tokyo.
const NOW = Date.parse('2030-03-05T15:00:00Z');

function tools(stored: { type: string; data?: Record<string, unknown> }[], now = NOW) {
  const control = new FakeControl();
  const invalid: string[] = [];
  const list = buildVoiceTools(stored, { control, clock: new ManualClock(now), timeZone: 'UTC', onInvalid: (t, p) => invalid.push(`${t}: ${p}`) });
  const byName = new Map(list.map((t) => [t.spec.name, t]));
  const get = (name: string): AgentTool => {
    const t = byName.get(name);
    if (!t) throw new Error(`no tool ${name}; have ${[...byName.keys()].join(', ')}`);
    return t;
  };
  return { control, list, get, invalid };
}

describe('buildVoiceTools', () => {
  it('offers one function per stored tool (two for the calendar), with JSON Schema parameters', () => {
    const { list, invalid } = tools([
      { type: 'end_call', data: { description: 'when the caller says bye' } },
      { type: 'dtmf_input', data: {} },
      { type: 'collect_keypad', data: { timeout: 10, stop_key: '*' } },
      { type: 'call_transfer', data: { phone_number: '+14155550100' } },
      { type: 'warm_call_transfer', data: { supervisor_phone: '+14155550101', outbound_phone_id: 3, description: 'escalations' } },
      { type: 'assistant_transfer', data: { assistant_id: 42 } },
      { type: 'calendar_booking', data: { calendar_api_key: 'k', calendar_event_slug: 'intro' } },
    ]);
    expect(invalid).toEqual([]);
    expect(list.map((t) => t.spec.name)).toEqual([
      'end_call',
      'send_dtmf',
      'collect_keypad',
      'transfer_call',
      'warm_transfer_call',
      'transfer_to_assistant_42',
      'check_availability',
      'book_meeting',
    ]);
    for (const t of list) expect(t.spec.parameters).toMatchObject({ type: 'object', properties: expect.any(Object) });
    expect(list.filter((t) => t.ends).map((t) => t.spec.name)).toEqual(['end_call', 'transfer_call', 'warm_transfer_call', 'transfer_to_assistant_42']);
  });

  it('skips a stored tool that no longer parses, and says which', () => {
    const { list, invalid } = tools([{ type: 'call_transfer', data: { phone_number: 'not a number' } }, { type: 'teleport', data: {} }]);
    expect(list).toHaveLength(0);
    expect(invalid).toHaveLength(2);
  });
});

describe('end_call', () => {
  it('hangs up after the current sentence', async () => {
    const { get, control } = tools([{ type: 'end_call' }]);
    expect(get('end_call').spec.description).toMatch(/End the phone call/);
    expect(await get('end_call').run({ reason: 'done' }, undefined)).toEqual({ ended: true, reason: 'done' });
    expect(control.log).toEqual([{ op: 'hangUp', args: [true] }]);
  });
});

describe('dtmf_input', () => {
  it('sends digits, tolerating spaces, dashes and lowercase A-D', async () => {
    const { get, control } = tools([{ type: 'dtmf_input' }]);
    expect(await get('send_dtmf').run({ digits: '1 2-3 #a' }, undefined)).toEqual({ sent: '123#A' });
    expect(await get('send_dtmf').run({ digits: 5 }, undefined)).toEqual({ sent: '5' });
    expect(control.log.map((l) => l.args[0])).toEqual(['123#A', '5']);
  });

  it('rejects anything that is no key, sending nothing', async () => {
    const { get, control } = tools([{ type: 'dtmf_input' }]);
    for (const digits of ['', 'one', '12E', '9'.repeat(65), undefined]) {
      expect(await get('send_dtmf').run({ digits }, undefined)).toMatchObject({ error: expect.stringMatching(/Invalid arguments/) });
    }
    expect(control.log).toEqual([]);
  });
});

describe('collect_keypad', () => {
  it('collects with the configured stop key and timeout and gives the digits to the model', async () => {
    const { get, control } = tools([{ type: 'collect_keypad', data: { timeout: 7, stop_key: '*' } }]);
    const signal = new AbortController().signal;
    expect(await get('collect_keypad').run({ max_digits: 6 }, signal)).toEqual({ digits: '1234', ended_by: 'stop-key' });
    expect(control.log[0]).toEqual({ op: 'collectDigits', args: [{ stopKey: '*', timeoutMs: 7000, maxDigits: 6 }, signal] });
    expect(get('collect_keypad').spec.description).toMatch(/star key/);
  });

  it('defaults to # and 5 s; an empty result says so; bad max_digits is refused', async () => {
    const { get, control } = tools([{ type: 'collect_keypad' }]);
    control.collected = { digits: '', endedBy: 'timeout' };
    expect(await get('collect_keypad').run({}, undefined)).toMatchObject({ digits: '', ended_by: 'timeout', note: expect.any(String) });
    expect(control.log[0]!.args[0]).toEqual({ stopKey: '#', timeoutMs: 5000 });
    expect(await get('collect_keypad').run({ max_digits: 0 }, undefined)).toMatchObject({ error: expect.any(String) });
    expect(control.log).toHaveLength(1);
  });
});

describe('call_transfer', () => {
  it('transfers to the configured number', async () => {
    const { get, control } = tools([{ type: 'call_transfer', data: { phone_number: '+14155550100' } }]);
    expect(get('transfer_call').spec.parameters).not.toHaveProperty('properties.phone_number');
    expect(await get('transfer_call').run({ reason: 'billing question' }, undefined)).toEqual({ transferred: true, method: 'refer' });
    expect(control.log).toEqual([{ op: 'transferBlind', args: [{ target: '+14155550100', reason: 'billing question' }] }]);
  });

  it('custom: the model may choose the number (validated), or fall back to the configured one', async () => {
    const { get, control } = tools([{ type: 'call_transfer', data: { phone_number: '+14155550100', custom: true } }]);
    expect(get('transfer_call').spec.parameters).toHaveProperty('properties.phone_number');
    await get('transfer_call').run({ phone_number: '+44 (20) 7946-0018' }, undefined);
    await get('transfer_call').run({ phone_number: 'sip:desk@pbx.example.com' }, undefined);
    await get('transfer_call').run({}, undefined);
    expect(await get('transfer_call').run({ phone_number: 'call Bob' }, undefined)).toMatchObject({ error: expect.stringMatching(/phone_number/) });
    expect(control.log.map((l) => (l.args[0] as { target: string }).target)).toEqual(['+442079460018', 'sip:desk@pbx.example.com', '+14155550100']);
  });

  it('respects the availability time zone: business hours Mon–Fri 09:00–17:00 there', async () => {
    const ny = tools([{ type: 'call_transfer', data: { phone_number: '+14155550100', timezone: 'America/New_York' } }]);
    expect(await ny.get('transfer_call').run({}, undefined)).toEqual({ transferred: true, method: 'refer' });
    const tokyo = tools([{ type: 'call_transfer', data: { phone_number: '+14155550100', timezone: 'Asia/Tokyo' } }]);
    expect(await tokyo.get('transfer_call').run({}, undefined)).toMatchObject({ error: expect.stringMatching(/business hours/), reason: 'outside-hours' });
    expect(tokyo.control.log).toEqual([]);
  });

  it('warm_transfer speaks the message first; a failed transfer is an error the model can relay', async () => {
    const { get, control } = tools([{ type: 'call_transfer', data: { phone_number: '+14155550100', warm_transfer: true, warm_transfer_message: 'Connecting you to billing now.' } }]);
    control.blindResult = { ok: false, reason: 'busy' };
    expect(await get('transfer_call').run({}, undefined)).toMatchObject({ error: expect.stringMatching(/busy/), transferred: false });
    expect(control.ops()).toEqual(['say', 'transferBlind']);
    expect(control.log[0]!.args).toEqual(['Connecting you to billing now.']);
    const d = tools([{ type: 'call_transfer', data: { phone_number: '+14155550100', warm_transfer: true } }]);
    await d.get('transfer_call').run({}, undefined);
    expect(d.control.log[0]).toEqual({ op: 'say', args: ['Please hold while I transfer your call.'] });
  });
});

describe('warm_call_transfer', () => {
  const data = { supervisor_phone: '+14155550101', outbound_phone_id: 3, description: 'when the caller asks for a manager' };

  it('passes the configuration with the spec defaults and the model reason/summary', async () => {
    const { get, control } = tools([{ type: 'warm_call_transfer', data }]);
    expect(get('warm_transfer_call').spec.parameters).toMatchObject({ required: ['reason'] });
    expect(await get('warm_transfer_call').run({ reason: 'Refund over limit', summary: 'Jane, order 42, wants a refund.' }, undefined)).toEqual({ transferred: true });
    expect(control.log[0]).toEqual({
      op: 'transferWarm',
      args: [
        {
          supervisor: '+14155550101',
          customSip: false,
          outboundPhoneId: 3,
          callerIdMode: 'outbound_number',
          customCallerId: null,
          holdMessage: DEFAULT_TEXTS.hold_message,
          holdMusic: 'hold_music',
          holdMusicVolume: 80,
          briefingInitialMessage: DEFAULT_TEXTS.briefing_initial_message,
          summaryInstructions: DEFAULT_TEXTS.summary_instructions,
          reason: 'Refund over limit',
          modelSummary: 'Jane, order 42, wants a refund.',
          connectedMessage: DEFAULT_TEXTS.connected_message,
        },
      ],
    });
  });

  it('custom SIP target and caller id; refusal and no answer hand the call back to the assistant', async () => {
    const { get, control } = tools([
      { type: 'warm_call_transfer', data: { ...data, supervisor_phone: '204', custom_sip: true, caller_id_mode: 'custom', custom_caller_id: '+14155550199', hold_music: 'none' } },
    ]);
    control.warmResult = { outcome: 'refused' };
    expect(await get('warm_transfer_call').run({ reason: 'x' }, undefined)).toMatchObject({ error: expect.stringMatching(/declined/), outcome: 'refused' });
    control.warmResult = { outcome: 'no-answer' };
    expect(await get('warm_transfer_call').run({ reason: 'x' }, undefined)).toMatchObject({ error: expect.stringMatching(/did not answer/) });
    expect(control.log[0]!.args[0]).toMatchObject({ supervisor: '204', customSip: true, callerIdMode: 'custom', customCallerId: '+14155550199', holdMusic: 'none' });
  });

  it('requires a reason', async () => {
    const { get, control } = tools([{ type: 'warm_call_transfer', data }]);
    expect(await get('warm_transfer_call').run({ reason: '  ' }, undefined)).toMatchObject({ error: expect.stringMatching(/reason/) });
    expect(control.log).toEqual([]);
  });
});

describe('assistant_transfer', () => {
  it('speaks message_before_transfer, then swaps with the greeting', async () => {
    const { get, control } = tools([{ type: 'assistant_transfer', data: { assistant_id: 42, message_before_transfer: 'One moment, passing you to our booking assistant.' } }]);
    expect(get('transfer_to_assistant_42').spec.description).toBe(DEFAULT_TEXTS.assistant_transfer_description);
    expect(await get('transfer_to_assistant_42').run({}, undefined)).toEqual({ transferred: true, assistant_id: 42 });
    expect(control.log).toEqual([
      { op: 'say', args: ['One moment, passing you to our booking assistant.'] },
      { op: 'swapAssistant', args: [42, { speakGreeting: true, announced: 'One moment, passing you to our booking assistant.' }] },
    ]);
  });

  it('without a message and without the greeting', async () => {
    const { get, control } = tools([{ type: 'assistant_transfer', data: { assistant_id: 7, speak_transfer_greeting: false, description: 'For bookings.' } }]);
    await get('transfer_to_assistant_7').run({}, undefined);
    expect(control.log).toEqual([{ op: 'swapAssistant', args: [7, { speakGreeting: false }] }]);
  });
});
