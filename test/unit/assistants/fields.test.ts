import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base, harness, realtime, type Harness } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());

const ok = async (body: unknown) => expect(await h.errorsOf(body)).toBeUndefined();
const bad = async (body: unknown, field: string) => {
  const errors = await h.errorsOf(body);
  expect(errors, `expected an error on ${field}`).toBeDefined();
  expect(Object.keys(errors!)).toContain(field);
};

describe('required fields', () => {
  it.each(['name', 'voice_id', 'language_id', 'type', 'mode', 'timezone', 'initial_message', 'system_prompt'])('%s missing → 422', async (f) => {
    const b = base();
    delete b[f];
    await bad(b, f);
  });
  it('the base body is accepted', () => ok(base()));
  it('empty name → 422', () => bad(base({ name: '' }), 'name'));
  it('empty system_prompt → 422', () => bad(base({ system_prompt: '' }), 'system_prompt'));
  it('empty initial_message is allowed (assistant says nothing first)', () => ok(base({ initial_message: '' })));
});

describe('string lengths', () => {
  it.each([
    ['name', 255],
    ['initial_message', 200],
    ['reengagement_prompt', 1000],
    ['voice_mail_message', 1000],
  ])('%s: %i chars ok, one more → 422', async (f, max) => {
    await ok(base({ [f]: 'x'.repeat(max) }));
    await bad(base({ [f]: 'x'.repeat(max + 1) }), f);
  });
});

describe('numeric bounds (both sides)', () => {
  const floats: [string, number, number][] = [
    ['voice_stability', 0, 1],
    ['voice_similarity', 0, 1],
    ['speech_speed', 0.7, 1.2],
    ['llm_temperature', 0, 1],
    ['endpoint_sensitivity', 0, 5],
    ['interrupt_sensitivity', 0, 5],
    ['ambient_sound_volume', 0, 1],
  ];
  it.each(floats)('%s accepts [%d, %d] and rejects just outside', async (f, min, max) => {
    await ok(base({ [f]: min }));
    await ok(base({ [f]: max }));
    await bad(base({ [f]: min - 0.01 }), f);
    await bad(base({ [f]: max + 0.01 }), f);
  });
  it('turn_detection_threshold 0..1 (multimodal)', async () => {
    await ok(realtime({ turn_detection_threshold: 0 }));
    await ok(realtime({ turn_detection_threshold: 1 }));
    await bad(realtime({ turn_detection_threshold: -0.01 }), 'turn_detection_threshold');
    await bad(realtime({ turn_detection_threshold: 1.01 }), 'turn_detection_threshold');
  });
  const ints: [string, number, number][] = [
    ['max_duration', 20, 1200],
    ['max_silence_duration', 1, 360],
    ['max_initial_silence_duration', 1, 120],
    ['ringing_time', 1, 60],
    ['reengagement_interval', 7, 600],
    ['min_interrupt_words', 0, 10],
    ['conversation_inactivity_timeout', 1, 1440],
  ];
  it.each(ints)('%s accepts integers %i..%i, rejects %i-1, max+1 and fractions', async (f, min, max) => {
    await ok(base({ [f]: min }));
    await ok(base({ [f]: max }));
    await bad(base({ [f]: min - 1 }), f);
    await bad(base({ [f]: max + 1 }), f);
    await bad(base({ [f]: min + 0.5 }), f);
  });
});

describe('enums', () => {
  it.each([
    ['type', ['inbound', 'outbound']],
    ['endpoint_type', ['vad', 'ai']],
    ['ambient_sound', ['off', 'office', 'city', 'forest', 'crowded_room', 'cafe', 'nature']],
    ['knowledgebase_mode', ['function_call', 'prompt']],
  ] as [string, string[]][])('%s accepts its values and rejects others', async (f, values) => {
    for (const v of values) await ok(base({ [f]: v }));
    await bad(base({ [f]: 'other' }), f);
  });
  it('mode accepts pipeline/multimodal/dualplex and rejects others', async () => {
    await ok(base({ mode: 'pipeline' }));
    await ok(realtime({ mode: 'multimodal' }));
    await ok(realtime({ mode: 'dualplex', voice_id: 121 }));
    await bad(base({ mode: 'duplex' }), 'mode');
  });
});

describe('types', () => {
  it.each([
    ['record', 'yes'],
    ['voice_id', '121'],
    ['max_duration', '600'],
    ['label_ids', 5],
    ['variables', []],
    ['name', 42],
  ])('%s with a wrong type → 422', (f, v) => bad(base({ [f]: v }), f));
  it('null for a defaulted field → 422', () => bad(base({ record: null }), 'record'));
  it('null for an optional field means none', () => ok(base({ webhook_url: null, folder_id: null, max_initial_silence_duration: null })));
  it('unknown fields → 422 naming each', async () => {
    const errors = await h.errorsOf(base({ colour: 'red', sized: 1 }));
    expect(Object.keys(errors!)).toEqual(expect.arrayContaining(['colour', 'sized']));
  });
  it('unknown fields are reported together with other errors', async () => {
    const errors = await h.errorsOf(base({ colour: 'red', max_duration: 5 }));
    expect(Object.keys(errors!)).toEqual(expect.arrayContaining(['colour', 'max_duration']));
  });
});

describe('timezone', () => {
  it.each(['Europe/Paris', 'America/Argentina/Buenos_Aires', 'America/New_York', 'Asia/Calcutta', 'Etc/GMT+5'])('%s ok', (tz) => ok(base({ timezone: tz })));
  it.each(['UTC', 'Mars/Olympus', 'Europe/Pariss', '+02:00', '', 'europe paris'])('%j → 422', (tz) => bad(base({ timezone: tz }), 'timezone'));
});

describe('post_call_schema', () => {
  const item = (over: Record<string, unknown> = {}) => ({ name: 'budget', type: 'number', description: 'The budget', ...over });
  it('valid items', () => ok(base({ post_call_schema: [item(), item({ name: 'ok_2', type: 'bool' }), item({ name: 'abc', type: 'string' })] })));
  it('name 3 and 16 chars ok; 2 and 17 → 422', async () => {
    await ok(base({ post_call_schema: [item({ name: 'abc' })] }));
    await ok(base({ post_call_schema: [item({ name: 'a'.repeat(16) })] }));
    await bad(base({ post_call_schema: [item({ name: 'ab' })] }), 'post_call_schema.0.name');
    await bad(base({ post_call_schema: [item({ name: 'a'.repeat(17) })] }), 'post_call_schema.0.name');
  });
  it.each(['Budget', 'bud-get', 'bud get'])('name %j → 422', (n) => bad(base({ post_call_schema: [item({ name: n })] }), 'post_call_schema.0.name'));
  it('type other than string/number/bool → 422', () => bad(base({ post_call_schema: [item({ type: 'boolean' })] }), 'post_call_schema.0.type'));
  it('description 3..255', async () => {
    await ok(base({ post_call_schema: [item({ description: 'abc' })] }));
    await ok(base({ post_call_schema: [item({ description: 'x'.repeat(255) })] }));
    await bad(base({ post_call_schema: [item({ description: 'ab' })] }), 'post_call_schema.0.description');
    await bad(base({ post_call_schema: [item({ description: 'x'.repeat(256) })] }), 'post_call_schema.0.description');
  });
  it.each(['name', 'type', 'description'])('missing %s → 422', (f) => {
    const i = item();
    delete (i as Record<string, unknown>)[f];
    return bad(base({ post_call_schema: [i] }), `post_call_schema.0.${f}`);
  });
  it('duplicate names → 422', () => bad(base({ post_call_schema: [item(), item()] }), 'post_call_schema.1.name'));
});

describe('variables', () => {
  it('identifier keys with scalar values ok', () => ok(base({ variables: { customer_name: 'Ann', _n: 3, vip: true } })));
  it.each(['1abc', 'a-b', 'a b', ''])('key %j → 422', (k) => bad(base({ variables: { [k]: 'x' } }), `variables.${k}`));
  it('nested value → 422', () => bad(base({ variables: { a: { b: 1 } } }), 'variables.a'));
});

describe('filler_config', () => {
  it('the four keys, arrays of short phrases', () =>
    ok(base({ fillers: true, filler_config: { positive: ['Great'], negative: ['Oh'], question: ['Hmm'], neutral: ['Okay'] } })));
  it('unknown key → 422', () => bad(base({ filler_config: { happy: ['Yay'] } }), 'filler_config'));
  it('non-array → 422', () => bad(base({ filler_config: { positive: 'Great' } }), 'filler_config.positive'));
  it('phrase over 100 chars → 422', () => bad(base({ filler_config: { neutral: ['x'.repeat(101)] } }), 'filler_config.neutral.0'));
});

describe('webhooks', () => {
  it('is_webhook_active without webhook_url → 422 on webhook_url', () => bad(base({ is_webhook_active: true }), 'webhook_url'));
  it('is_webhook_active with an https URL ok', () => ok(base({ is_webhook_active: true, webhook_url: 'https://hooks.example.com/x' })));
  it.each(['ftp://x.example.com', 'not a url', 'javascript:alert(1)'])('webhook_url %j → 422', (u) => bad(base({ webhook_url: u }), 'webhook_url'));
  it('conversation_ended_webhook_url must be http(s)', () => bad(base({ conversation_ended_webhook_url: 'mailto:a@b.c' }), 'conversation_ended_webhook_url'));
});
