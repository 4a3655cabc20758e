import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCreate, validateUpdate } from '../../../src/assistants/service.ts';
import { AssistantsRepo } from '../../../src/store/repos/assistants.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { ValidationError } from '../../../src/util/errors.ts';
import { base, harness, IDS, insertKb, insertNamed, insertPhone, insertTool, realtime, type Harness } from './helpers.ts';

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
const create = (body: Record<string, unknown>) => validateCreate(h.deps, h.accountId, body);

describe('models by mode', () => {
  it('pipeline without llm_model_id → 422', () => bad(base({ llm_model_id: undefined }), 'llm_model_id'));
  it('unknown llm_model_id → 422', () => bad(base({ llm_model_id: 999 }), 'llm_model_id'));
  it.each(['multimodal', 'dualplex'])('%s without multimodal_model_id → 422', (mode) =>
    bad(realtime({ mode, voice_id: mode === 'dualplex' ? IDS.ttsAlloy : IDS.realtimeAlloy, multimodal_model_id: undefined }), 'multimodal_model_id'));
  it('unknown multimodal_model_id → 422', () => bad(realtime({ multimodal_model_id: 999 }), 'multimodal_model_id'));
  it('multimodal needs no llm_model_id', () => ok(realtime()));
  it('chat_llm_fallback_id must be an LLM model', async () => {
    await ok(realtime({ chat_llm_fallback_id: IDS.gpt4oMini }));
    await bad(realtime({ chat_llm_fallback_id: 999 }), 'chat_llm_fallback_id');
  });
  it('turn_detection_threshold is accepted (and ignored) for pipeline', () => ok(base({ turn_detection_threshold: 0.4 })));
});

describe('voice', () => {
  it('unknown voice → 422', () => bad(base({ voice_id: 99999 }), 'voice_id'));
  it('TTS voice with multimodal → 422', () => bad(realtime({ voice_id: IDS.ttsAlloy }), 'voice_id'));
  it('realtime voice with pipeline → 422', () => bad(base({ voice_id: IDS.realtimeAlloy }), 'voice_id'));
  it('realtime voice with dualplex → 422', () => bad(realtime({ mode: 'dualplex' }), 'voice_id'));
  it('TTS and offline voices with dualplex/pipeline ok', async () => {
    await ok(realtime({ mode: 'dualplex', voice_id: IDS.ttsAlloy }));
    await ok(base({ voice_id: IDS.fliteSlt }));
  });
  it('marin works with gpt-realtime, not with the preview model', async () => {
    await ok(realtime({ voice_id: IDS.realtimeMarin }));
    await bad(realtime({ voice_id: IDS.realtimeMarin, multimodal_model_id: IDS.gpt4oRealtimePreview }), 'voice_id');
  });
  it('the voice language need not match language_id', () => ok(base({ voice_id: 321, language_id: IDS.enUS })));
});

describe('languages', () => {
  it('unknown language_id → 422', () => bad(base({ language_id: 999 }), 'language_id'));
  it('secondary languages must exist', async () => {
    await ok(base({ secondary_language_ids: [IDS.esES, 4] }));
    await bad(base({ secondary_language_ids: [IDS.esES, 999] }), 'secondary_language_ids');
  });
});

describe('mode rules', () => {
  it.each(['multimodal', 'dualplex'])('knowledgebase_mode prompt with %s → 422', (mode) =>
    bad(realtime({ mode, voice_id: mode === 'dualplex' ? IDS.ttsAlloy : IDS.realtimeAlloy, knowledgebase_mode: 'prompt' }), 'knowledgebase_mode'));
  it('knowledgebase_mode prompt with pipeline ok; function_call with multimodal ok', async () => {
    await ok(base({ knowledgebase_mode: 'prompt' }));
    await ok(realtime({ knowledgebase_mode: 'function_call' }));
  });
  it.each(['multimodal', 'dualplex'])('allow_interruptions false with %s → 422', (mode) =>
    bad(realtime({ mode, voice_id: mode === 'dualplex' ? IDS.ttsAlloy : IDS.realtimeAlloy, allow_interruptions: false }), 'allow_interruptions'));
  it('allow_interruptions false with pipeline ok', () => ok(base({ allow_interruptions: false })));
  it.each(['multimodal', 'dualplex'])('fillers true with %s → 422', (mode) =>
    bad(realtime({ mode, voice_id: mode === 'dualplex' ? IDS.ttsAlloy : IDS.realtimeAlloy, fillers: true }), 'fillers'));
  it('fillers true with pipeline ok; fillers false with multimodal ok', async () => {
    await ok(base({ fillers: true }));
    await ok(realtime({ fillers: false }));
  });
});

describe('providers', () => {
  it('synthesizer defaults to the voice’s provider', async () => {
    expect((await create(base({ voice_id: IDS.fliteSlt }))).synthesizer_provider_id).toBe(IDS.flite);
    expect((await create(base())).synthesizer_provider_id).toBe(IDS.openaiTts);
  });
  it('multimodal synthesizer defaults by language', async () => {
    expect((await create(realtime())).synthesizer_provider_id).toBe(IDS.openaiTts);
  });
  it('unknown synthesizer → 422', () => bad(base({ synthesizer_provider_id: 999 }), 'synthesizer_provider_id'));
  it('a synthesizer other than the voice’s → 422', () => bad(base({ voice_id: IDS.fliteSlt, synthesizer_provider_id: IDS.openaiTts }), 'synthesizer_provider_id'));
  it('transcriber defaults to Deepgram for pipeline and is null for multimodal', async () => {
    expect((await create(base())).transcriber_provider_id).toBe(IDS.deepgram);
    expect((await create(realtime())).transcriber_provider_id).toBeNull();
  });
  it('explicit transcriber for pipeline ok; unknown → 422', async () => {
    expect((await create(base({ transcriber_provider_id: IDS.openaiStt }))).transcriber_provider_id).toBe(IDS.openaiStt);
    await bad(base({ transcriber_provider_id: 999 }), 'transcriber_provider_id');
  });
  it.each(['multimodal', 'dualplex'])('transcriber with %s → 422', (mode) =>
    bad(realtime({ mode, voice_id: mode === 'dualplex' ? IDS.ttsAlloy : IDS.realtimeAlloy, transcriber_provider_id: IDS.deepgram }), 'transcriber_provider_id'));
});

describe('defaults', () => {
  it('applies the spec defaults and nulls', async () => {
    const c = await create(base());
    expect(c).toMatchObject({
      tts_emotion_enabled: true, voice_stability: 0.7, voice_similarity: 0.5, speech_speed: 1, llm_temperature: 0.1,
      allow_interruptions: true, fillers: false, record: false, enable_noise_cancellation: true, wait_for_customer: false,
      max_duration: 600, max_silence_duration: 40, ringing_time: 30, reengagement_interval: 30, end_call_on_voicemail: true,
      endpoint_type: 'vad', endpoint_sensitivity: 0.5, interrupt_sensitivity: 0.5, ambient_sound_volume: 0.5,
      is_webhook_active: false, send_webhook_only_on_completed: true, include_recording_in_webhook: true,
      post_call_evaluation: true, conversation_inactivity_timeout: 30, conversation_ended_retrigger: false,
      max_initial_silence_duration: null, min_interrupt_words: null, ambient_sound: null, webhook_url: null,
      turn_detection_threshold: null, folder_id: null, tools: [], label_ids: [], knowledgebase_mode: 'function_call',
    });
  });
});

describe('ownership', () => {
  it('folder: own ok, null ok, another account’s or missing → 422', async () => {
    await ok(base({ folder_id: await insertNamed(h.store, 'folders', h.accountId) }));
    await ok(base({ folder_id: null }));
    await bad(base({ folder_id: await insertNamed(h.store, 'folders', h.otherAccountId) }), 'folder_id');
    await bad(base({ folder_id: 9999 }), 'folder_id');
  });
  it('labels: each must be the account’s', async () => {
    const mine = await insertNamed(h.store, 'labels', h.accountId);
    await ok(base({ label_ids: [mine] }));
    await bad(base({ label_ids: [mine, await insertNamed(h.store, 'labels', h.otherAccountId)] }), 'label_ids');
  });
  it('custom tools: each must be the account’s', async () => {
    await ok(base({ tool_ids: [await insertTool(h.store, h.accountId)] }));
    await bad(base({ tool_ids: [await insertTool(h.store, h.otherAccountId)] }), 'tool_ids');
  });
  it('knowledge base must be the account’s', async () => {
    await ok(base({ knowledgebase_id: await insertKb(h.store, h.accountId) }));
    await bad(base({ knowledgebase_id: await insertKb(h.store, h.otherAccountId) }), 'knowledgebase_id');
  });
  it('phone number must be the account’s', async () => {
    await ok(base({ phone_number_id: await insertPhone(h.store, h.accountId) }));
    await bad(base({ phone_number_id: await insertPhone(h.store, h.otherAccountId) }), 'phone_number_id');
  });
  it('inbound: a caller-ID number → 422; outbound may use one', async () => {
    const cid = await insertPhone(h.store, h.accountId, 'caller_id');
    await bad(base({ type: 'inbound', phone_number_id: cid }), 'phone_number_id');
    await ok(base({ type: 'outbound', phone_number_id: cid }));
  });
  it('inbound: a number already on another inbound assistant → 422; not a conflict with itself', async () => {
    const repo = new AssistantsRepo(h.store, new ManualClock());
    const phone = await insertPhone(h.store, h.accountId);
    const first = await repo.create(h.accountId, await create(base({ type: 'inbound', phone_number_id: phone })));
    await bad(base({ type: 'inbound', phone_number_id: phone }), 'phone_number_id');
    await ok(base({ type: 'outbound', phone_number_id: phone }));
    await expect(validateUpdate(h.deps, h.accountId, first, { name: 'renamed' })).resolves.toMatchObject({ name: 'renamed' });
  });
});

describe('update', () => {
  it('merges onto the stored config and re-validates the whole', async () => {
    const repo = new AssistantsRepo(h.store, new ManualClock());
    const a = await repo.create(h.accountId, await create(base({ record: true })));
    const merged = await validateUpdate(h.deps, h.accountId, a, { max_duration: 300 });
    expect(merged).toMatchObject({ record: true, max_duration: 300, name: 'Support' });
    // Switching to multimodal alone leaves an incompatible voice: the merged result is rejected.
    await expect(validateUpdate(h.deps, h.accountId, a, { mode: 'multimodal', multimodal_model_id: 1 })).rejects.toBeInstanceOf(ValidationError);
    const switched = await validateUpdate(h.deps, h.accountId, a, { mode: 'multimodal', multimodal_model_id: 1, voice_id: IDS.realtimeAlloy });
    // Derived providers follow the change.
    expect(switched.transcriber_provider_id).toBeNull();
    const flite = await validateUpdate(h.deps, h.accountId, a, { voice_id: IDS.fliteSlt });
    expect(flite.synthesizer_provider_id).toBe(IDS.flite);
  });
  it('ignores read-only record fields and rejects unknown ones', async () => {
    const repo = new AssistantsRepo(h.store, new ManualClock());
    const a = await repo.create(h.accountId, await create(base()));
    await expect(validateUpdate(h.deps, h.accountId, a, { id: 5, uuid: 'x', status: 'active', created_at: 'x', updated_at: 'x' })).resolves.toBeDefined();
    await expect(validateUpdate(h.deps, h.accountId, a, { nope: 1 })).rejects.toBeInstanceOf(ValidationError);
  });
});
