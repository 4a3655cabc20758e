import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../support/app.ts';
import { testTempDir } from '../../support/temp-dir.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function start(env: Record<string, string> = {}) {
  t = await testApp(env);
  return { t, key: (await t.account(1)).key };
}

describe('catalog endpoints', () => {
  it.each(['/user/assistants/voices', '/user/assistants/languages', '/user/assistants/llm-models', '/user/assistants/multimodal-models', '/user/assistants/synthesizer-providers', '/user/assistants/transcriber-providers'])(
    '%s needs a key',
    async (url) => {
      const { t } = await start();
      expect((await t.call(undefined, 'GET', url)).status).toBe(401);
    },
  );

  it('languages: [{id, name, code}] with en-US', async () => {
    const { t, key } = await start();
    const res = await t.call(key, 'GET', '/user/assistants/languages');
    expect(res.status).toBe(200);
    expect(res.body).toContainEqual({ id: 1, name: 'English (United States)', code: 'en-US' });
    for (const l of res.body) expect(Object.keys(l).sort()).toEqual(['code', 'id', 'name']);
  });

  it('models: [{id, name, provider, model}]', async () => {
    const { t, key } = await start();
    const llm = await t.call(key, 'GET', '/user/assistants/llm-models');
    expect(llm.body).toContainEqual({ id: 1, name: 'GPT-4o mini', provider: 'openai', model: 'gpt-4o-mini' });
    const mm = await t.call(key, 'GET', '/user/assistants/multimodal-models');
    expect(mm.body).toContainEqual({ id: 1, name: 'GPT Realtime', provider: 'openai', model: 'gpt-realtime' });
    for (const m of [...llm.body, ...mm.body]) expect(Object.keys(m).sort()).toEqual(['id', 'model', 'name', 'provider']);
  });

  it('providers: [{id, name}]', async () => {
    const { t, key } = await start();
    expect((await t.call(key, 'GET', '/user/assistants/synthesizer-providers')).body).toEqual([{ id: 1, name: 'OpenAI TTS' }, { id: 2, name: 'Flite (offline)' }]);
    expect((await t.call(key, 'GET', '/user/assistants/transcriber-providers')).body).toEqual([{ id: 1, name: 'Deepgram' }, { id: 2, name: 'OpenAI' }]);
  });

  it('voices: the spec’s fields only, all public voices without filters', async () => {
    const { t, key } = await start();
    const res = await t.call(key, 'GET', '/user/assistants/voices');
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(t.ctx.catalog.voices().length);
    expect(Object.keys(res.body[0]).sort()).toEqual(['accent', 'age', 'gender', 'id', 'language_id', 'name', 'preview_url', 'synthesizer_provider_id']);
  });

  it('voices filter by mode and language', async () => {
    const { t, key } = await start();
    const mm = (await t.call(key, 'GET', '/user/assistants/voices?mode=multimodal&language_id=3')).body as { id: number; language_id: number; synthesizer_provider_id: number | null }[];
    expect(mm.length).toBe(10);
    expect(mm.every((v) => v.language_id === 3 && v.synthesizer_provider_id === null)).toBe(true);
    const pipe = (await t.call(key, 'GET', '/user/assistants/voices?mode=pipeline')).body as { synthesizer_provider_id: number | null }[];
    expect(pipe.every((v) => v.synthesizer_provider_id !== null)).toBe(true);
    // A voice listed for a mode is accepted by assistant creation in that mode.
    const first = (await t.call(key, 'GET', '/user/assistants/voices?mode=dualplex&language_id=1')).body[0];
    const created = await t.call(key, 'POST', '/user/assistant', {
      name: 'x', voice_id: first.id, language_id: 1, type: 'outbound', mode: 'dualplex', timezone: 'Europe/Paris',
      initial_message: 'hi', system_prompt: 'p', multimodal_model_id: 1,
    });
    expect(created.status).toBe(201);
  });

  it.each(['mode=duplex', 'language_id=abc', 'language_id=0', 'language_id=1.5', 'colour=red'])('voices?%s → 422', async (q) => {
    const { t, key } = await start();
    const res = await t.call(key, 'GET', `/user/assistants/voices?${q}`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: expect.any(String), errors: expect.any(Object) });
  });

  it('voices of an unknown language: empty list', async () => {
    const { t, key } = await start();
    expect((await t.call(key, 'GET', '/user/assistants/voices?language_id=999')).body).toEqual([]);
  });
});

describe('SWITCHBOARD_CATALOG', () => {
  it('a replacement file changes what the endpoints serve and what assistants accept', async () => {
    const dir = testTempDir('sb-cat-');
    const file = path.join(dir, 'catalog.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        languages: [{ id: 1, name: 'English', code: 'en-US' }],
        llm_models: [{ id: 10, name: 'Local Llama', provider: 'openai', model: 'llama3.1' }],
        voices: [
          { id: 5, name: 'Offline Sarah', language_id: 1, gender: 'female', synthesizer_provider_id: 2, provider_voice: 'slt', modes: ['pipeline', 'dualplex'] },
          { id: 6, name: 'Alloy', language_id: 1, gender: 'female', synthesizer_provider_id: null, provider_voice: 'alloy', modes: ['multimodal'] },
        ],
      }),
    );
    const { t, key } = await start({ SWITCHBOARD_CATALOG: file });
    expect((await t.call(key, 'GET', '/user/assistants/llm-models')).body).toEqual([{ id: 10, name: 'Local Llama', provider: 'openai', model: 'llama3.1' }]);
    expect((await t.call(key, 'GET', '/user/assistants/voices')).body.map((v: { id: number }) => v.id)).toEqual([5, 6]);
    // Untouched sections keep the built-in entries.
    expect((await t.call(key, 'GET', '/user/assistants/multimodal-models')).body.length).toBe(3);
    const body = { name: 'x', voice_id: 5, language_id: 1, type: 'outbound', mode: 'pipeline', timezone: 'Europe/Paris', initial_message: 'hi', system_prompt: 'p' };
    expect((await t.call(key, 'POST', '/user/assistant', { ...body, llm_model_id: 1 })).status).toBe(422);
    expect((await t.call(key, 'POST', '/user/assistant', { ...body, llm_model_id: 10 })).status).toBe(201);
  });

  it('a bad file stops start-up with a message naming the variable', async () => {
    const dir = testTempDir('sb-cat-');
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ voices: [{ id: 1, name: 'x' }] }));
    await expect(testApp({ SWITCHBOARD_CATALOG: file })).rejects.toThrow(/SWITCHBOARD_CATALOG/);
  });
});
