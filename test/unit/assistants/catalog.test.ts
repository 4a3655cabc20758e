import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog, CatalogError, catalogProblems, resolveCatalog } from '../../../src/catalog/catalog.ts';
import { ConfigError } from '../../../src/config.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-catalog-'));
function file(content: unknown): string {
  const p = path.join(dir, `${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}
const load = (catalogFile?: string) => Catalog.load({ publicUrl: 'http://sb.test', catalogFile });

describe('built-in catalog', () => {
  const c = load();
  it('is consistent', () => expect(catalogProblems(c.data)).toEqual([]));
  it('has the required languages', () => {
    const codes = c.languages().map((l) => l.code);
    expect(codes).toEqual(expect.arrayContaining(['en-US', 'en-GB', 'es-ES', 'fr-FR', 'de-DE', 'it-IT', 'pt-BR', 'nl-NL', 'ja-JP']));
  });
  it('has OpenAI LLM and realtime models', () => {
    expect(c.llmModels().map((m) => m.model)).toEqual(expect.arrayContaining(['gpt-4o-mini', 'gpt-4o', 'gpt-4.1', 'gpt-4.1-mini']));
    expect(c.multimodalModels().map((m) => m.model)).toEqual(['gpt-realtime', 'gpt-4o-realtime-preview', 'gpt-4o-mini-realtime-preview']);
  });
  it('has voices for every mode in every language', () => {
    for (const l of c.languages()) {
      for (const mode of ['pipeline', 'multimodal', 'dualplex'] as const) {
        expect(c.voices({ mode, language_id: l.id }).length, `${mode} ${l.code}`).toBeGreaterThan(0);
      }
    }
  });
  it('realtime voices have no synthesizer and only multimodal', () => {
    const v = c.voices({ mode: 'multimodal' });
    expect(v.map((x) => x.provider_voice)).toEqual(expect.arrayContaining(['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', 'cedar']));
    expect(v.every((x) => x.synthesizer_provider_id === null && x.modes.join() === 'multimodal')).toBe(true);
  });
  it('offline Flite voices exist and are marked offline', () => {
    const offline = c.voices().filter((v) => v.offline);
    expect(offline.map((v) => v.provider_voice).sort()).toEqual(['awb', 'kal', 'kal16', 'rms', 'slt']);
    expect(offline.every((v) => v.modes.includes('pipeline') && v.modes.includes('dualplex'))).toBe(true);
  });
  it('preview URLs use the public URL', () => expect(c.voice(101)?.preview_url).toBe('http://sb.test/api/voices/101/preview.wav'));
  it('default providers by language', () => {
    expect(c.defaultSynthesizerFor(1)?.name).toBe('OpenAI TTS');
    expect(c.defaultTranscriberFor(3)?.name).toBe('Deepgram');
    expect(c.defaultSynthesizerFor(999)).toBeUndefined();
  });
});

describe('SWITCHBOARD_CATALOG file', () => {
  it('replaces the sections it contains and keeps the others', () => {
    const c = load(file({ llm_models: [{ id: 7, name: 'Local', provider: 'openai', model: 'llama3' }] }));
    expect(c.llmModels()).toEqual([{ id: 7, name: 'Local', provider: 'openai', model: 'llama3' }]);
    expect(c.languages().length).toBeGreaterThan(5);
  });
  it('`add` appends to a section', () => {
    const c = load(file({ add: { languages: [{ id: 50, name: 'Swedish', code: 'sv-SE' }] } }));
    expect(c.language(50)?.code).toBe('sv-SE');
    expect(c.language(1)?.code).toBe('en-US');
  });
  it('private voices are seen only by their account', () => {
    const c = load(file({ add: { voices: [{ id: 9001, name: 'Clone', language_id: 1, gender: 'female', synthesizer_provider_id: 1, provider_voice: 'nova', modes: ['pipeline'], public: false, account_id: 42 }] } }));
    expect(c.voices({ accountId: 42 }).some((v) => v.id === 9001)).toBe(true);
    expect(c.voices({ accountId: 43 }).some((v) => v.id === 9001)).toBe(false);
    expect(c.voice(9001, 43)).toBeUndefined();
  });
  it.each([
    ['not JSON', '{nope'],
    ['unknown section', { models: [] }],
    ['bad field', { languages: [{ id: 1, name: 'English', code: 'english' }] }],
    ['voice with unknown language', { languages: [{ id: 1, name: 'English', code: 'en-US' }] }],
    ['duplicate ids', { llm_models: [{ id: 1, name: 'a', provider: 'openai', model: 'a' }, { id: 1, name: 'b', provider: 'openai', model: 'b' }] }],
    ['realtime voice in pipeline', { add: { voices: [{ id: 9002, name: 'x', language_id: 1, gender: 'male', synthesizer_provider_id: null, provider_voice: 'alloy', modes: ['pipeline'] }] } }],
  ])('fails start-up clearly: %s', (_what, content) => {
    const p = file(content);
    let err: unknown;
    try {
      load(p);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CatalogError);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('SWITCHBOARD_CATALOG');
  });
  it('a missing file fails start-up', () => expect(() => resolveCatalog(path.join(dir, 'absent.json'))).toThrow(CatalogError));
});
