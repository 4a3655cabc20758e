import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCreate, validateUpdate } from '../../../src/assistants/service.ts';
import { DEFAULT_TEXTS } from '../../../src/assistants/tools.ts';
import { AssistantsRepo } from '../../../src/store/repos/assistants.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { ValidationError } from '../../../src/util/errors.ts';
import { base, harness, insertPhone, type Harness } from './helpers.ts';

let h: Harness;
let phone: number;
let otherPhone: number;
let repo: AssistantsRepo;
beforeAll(async () => {
  h = await harness();
  phone = await insertPhone(h.store, h.accountId);
  otherPhone = await insertPhone(h.store, h.otherAccountId);
  repo = new AssistantsRepo(h.store, new ManualClock());
});
afterAll(() => h.close());

const withTool = (tool: Record<string, unknown>) => base({ tools: [tool] });
const stored = async (tool: Record<string, unknown>) => (await validateCreate(h.deps, h.accountId, withTool(tool))).tools[0]!;
const ok = async (tool: Record<string, unknown>) => expect(await h.errorsOf(withTool(tool))).toBeUndefined();
const bad = async (tool: Record<string, unknown>, field: string) => {
  const errors = await h.errorsOf(withTool(tool));
  expect(errors, `expected an error on ${field}`).toBeDefined();
  expect(Object.keys(errors!)).toContain(`tools.0.${field}`);
};

describe('tool kinds', () => {
  it('unknown type → 422 on tools.0.type', () => bad({ type: 'teleport' }, 'type'));
  it('missing type → 422', () => bad({ description: 'x' }, 'type'));
  it('unknown field inside a tool → 422', async () => {
    const errors = await h.errorsOf(withTool({ type: 'end_call', colour: 'red' }));
    expect(errors).toBeDefined();
    expect(JSON.stringify(errors)).toContain('colour');
  });
  it('stores {type, data} with the sent field names', async () => {
    expect(await stored({ type: 'end_call', description: 'When done' })).toEqual({ type: 'end_call', data: { description: 'When done' } });
  });
  it('accepts the {type, data} form read back from GET', async () => {
    expect(await stored({ type: 'dtmf_input', data: { description: 'IVR' } })).toEqual({ type: 'dtmf_input', data: { description: 'IVR' } });
  });
  it('more than 50 tools → 422', async () => {
    const errors = await h.errorsOf(base({ tools: Array.from({ length: 51 }, () => ({ type: 'end_call' })) }));
    expect(Object.keys(errors!)).toContain('tools');
  });
});

describe('call_transfer', () => {
  it('valid with defaults', async () => {
    expect((await stored({ type: 'call_transfer', phone_number: '+14155550100' })).data).toMatchObject({ custom: false, warm_transfer: false, timezone: null });
  });
  it('sip URI ok', () => ok({ type: 'call_transfer', phone_number: 'sip:agent@pbx.example.com' }));
  it('missing phone_number → 422', () => bad({ type: 'call_transfer' }, 'phone_number'));
  it('non-number phone_number → 422', () => bad({ type: 'call_transfer', phone_number: 'call bob' }, 'phone_number'));
  it('bad timezone → 422', () => bad({ type: 'call_transfer', phone_number: '+14155550100', timezone: 'Nowhere' }, 'timezone'));
  it('all fields', () => ok({ type: 'call_transfer', phone_number: '+14155550100', description: 'sales', custom: true, timezone: 'America/New_York', warm_transfer: true, warm_transfer_message: 'One moment' }));
});

describe('warm_call_transfer', () => {
  const valid = () => ({ type: 'warm_call_transfer', supervisor_phone: '+14155550100', outbound_phone_id: phone, description: 'Escalations' });
  it('valid with every default', async () => {
    expect((await stored(valid())).data).toEqual({
      supervisor_phone: '+14155550100', outbound_phone_id: phone, description: 'Escalations', custom_sip: false,
      caller_id_mode: 'outbound_number', custom_caller_id: null, hold_music: 'hold_music', hold_music_volume: 80,
      hold_message: DEFAULT_TEXTS.hold_message, summary_instructions: DEFAULT_TEXTS.summary_instructions,
      briefing_initial_message: DEFAULT_TEXTS.briefing_initial_message, connected_message: DEFAULT_TEXTS.connected_message,
    });
  });
  it.each(['supervisor_phone', 'outbound_phone_id', 'description'])('missing %s → 422', (f) => {
    const t: Record<string, unknown> = valid();
    delete t[f];
    return bad(t, f);
  });
  it('outbound_phone_id of another account → 422', () => bad({ ...valid(), outbound_phone_id: otherPhone }, 'outbound_phone_id'));
  it('extension needs custom_sip', async () => {
    await bad({ ...valid(), supervisor_phone: 'ext-1001' }, 'supervisor_phone');
    await ok({ ...valid(), supervisor_phone: 'ext-1001', custom_sip: true });
  });
  it('caller_id_mode values; custom needs custom_caller_id', async () => {
    await ok({ ...valid(), caller_id_mode: 'customer_number' });
    await ok({ ...valid(), caller_id_mode: 'custom', custom_caller_id: '+14155550199' });
    await bad({ ...valid(), caller_id_mode: 'custom' }, 'custom_caller_id');
    await bad({ ...valid(), caller_id_mode: 'mine' }, 'caller_id_mode');
  });
  it('hold_music hold_music|none', async () => {
    await ok({ ...valid(), hold_music: 'none' });
    await bad({ ...valid(), hold_music: 'jazz' }, 'hold_music');
  });
  it('hold_music_volume 0..100 integer', async () => {
    await ok({ ...valid(), hold_music_volume: 0 });
    await ok({ ...valid(), hold_music_volume: 100 });
    await bad({ ...valid(), hold_music_volume: -1 }, 'hold_music_volume');
    await bad({ ...valid(), hold_music_volume: 101 }, 'hold_music_volume');
    await bad({ ...valid(), hold_music_volume: 50.5 }, 'hold_music_volume');
  });
});

describe('end_call and dtmf_input', () => {
  it('end_call with or without description', async () => {
    await ok({ type: 'end_call' });
    await ok({ type: 'end_call', description: 'When the caller says goodbye' });
    await bad({ type: 'end_call', description: 5 }, 'description');
  });
  it('dtmf_input with description', async () => {
    await ok({ type: 'dtmf_input', description: 'Navigate IVR menus' });
    await bad({ type: 'dtmf_input', description: '' }, 'description');
  });
});

describe('collect_keypad', () => {
  it('defaults timeout 5 and stop_key #', async () => {
    expect((await stored({ type: 'collect_keypad' })).data).toMatchObject({ timeout: 5, stop_key: '#' });
  });
  it('timeout 1..30', async () => {
    await ok({ type: 'collect_keypad', timeout: 1 });
    await ok({ type: 'collect_keypad', timeout: 30 });
    await bad({ type: 'collect_keypad', timeout: 0 }, 'timeout');
    await bad({ type: 'collect_keypad', timeout: 31 }, 'timeout');
  });
  it('stop_key # or *', async () => {
    await ok({ type: 'collect_keypad', stop_key: '*' });
    await bad({ type: 'collect_keypad', stop_key: '0' }, 'stop_key');
  });
});

describe('assistant_transfer', () => {
  it('own assistant ok, with defaults', async () => {
    const target = await repo.create(h.accountId, await validateCreate(h.deps, h.accountId, base()));
    expect((await stored({ type: 'assistant_transfer', assistant_id: target.id })).data).toEqual({
      assistant_id: target.id, description: DEFAULT_TEXTS.assistant_transfer_description, message_before_transfer: null, speak_transfer_greeting: true,
    });
  });
  it('missing, unknown or another account’s assistant → 422', async () => {
    const foreign = await repo.create(h.otherAccountId, await validateCreate(h.deps, h.otherAccountId, base()));
    await bad({ type: 'assistant_transfer' }, 'assistant_id');
    await bad({ type: 'assistant_transfer', assistant_id: 99999 }, 'assistant_id');
    await bad({ type: 'assistant_transfer', assistant_id: foreign.id }, 'assistant_id');
  });
  it('description and message_before_transfer max 500', async () => {
    const target = await repo.create(h.accountId, await validateCreate(h.deps, h.accountId, base()));
    await ok({ type: 'assistant_transfer', assistant_id: target.id, description: 'x'.repeat(500), message_before_transfer: 'y'.repeat(500) });
    await bad({ type: 'assistant_transfer', assistant_id: target.id, description: 'x'.repeat(501) }, 'description');
    await bad({ type: 'assistant_transfer', assistant_id: target.id, message_before_transfer: 'x'.repeat(501) }, 'message_before_transfer');
  });
  it('cannot target the assistant being updated', async () => {
    const self = await repo.create(h.accountId, await validateCreate(h.deps, h.accountId, base()));
    const err = await validateUpdate(h.deps, h.accountId, self, { tools: [{ type: 'assistant_transfer', assistant_id: self.id }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect(Object.keys((err as ValidationError).errors)).toContain('tools.0.assistant_id');
  });
});

describe('calendar_booking', () => {
  const valid = () => ({ type: 'calendar_booking', calendar_api_key: 'cal_live_abcdefghijkl1234', calendar_event_slug: 'demo' });
  it('valid with defaults; the key is sealed at rest', async () => {
    const t = await stored(valid());
    expect(t.data).toMatchObject({ calendar_endpoint: 'us', calendar_team_slug: null, calendar_booking_fields: [] });
    expect(JSON.stringify(t)).not.toContain('cal_live_abcdefghijkl1234');
    expect(t.type === 'calendar_booking' && h.deps.secrets.open(t.data.calendar_api_key)).toBe('cal_live_abcdefghijkl1234');
  });
  it.each(['calendar_api_key', 'calendar_event_slug'])('missing %s → 422', (f) => {
    const t: Record<string, unknown> = valid();
    delete t[f];
    return bad(t, f);
  });
  it('calendar_endpoint us|eu|custom; custom needs a base URL', async () => {
    await ok({ ...valid(), calendar_endpoint: 'eu' });
    await ok({ ...valid(), calendar_endpoint: 'custom', calendar_custom_endpoint: 'https://cal.example.com' });
    await bad({ ...valid(), calendar_endpoint: 'custom' }, 'calendar_custom_endpoint');
    await bad({ ...valid(), calendar_endpoint: 'asia' }, 'calendar_endpoint');
    await bad({ ...valid(), calendar_endpoint: 'custom', calendar_custom_endpoint: 'not a url' }, 'calendar_custom_endpoint');
  });
  it('booking fields: slug/type/label required, required defaults false, select needs options', async () => {
    const t = await stored({ ...valid(), calendar_booking_fields: [{ slug: 'email', type: 'email', label: 'Email' }] });
    expect(t.type === 'calendar_booking' && t.data.calendar_booking_fields[0]).toMatchObject({ required: false, options: null });
    await ok({ ...valid(), calendar_booking_fields: [{ slug: 'plan', type: 'select', label: 'Plan', required: true, options: ['a', 'b'] }] });
    await bad({ ...valid(), calendar_booking_fields: [{ type: 'text', label: 'Name' }] }, 'calendar_booking_fields.0.slug');
    await bad({ ...valid(), calendar_booking_fields: [{ slug: 'plan', type: 'select', label: 'Plan' }] }, 'calendar_booking_fields.0.options');
  });
});
