import { z } from 'zod';
import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import { Catalog } from '../../catalog/catalog.ts';
import { MODES } from '../../catalog/schema.ts';

const voicesQuery = z.strictObject({
  mode: z.enum(MODES).optional(),
  language_id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
});

const tags = ['Assistants'];

const voiceView = z.object({
  id: z.int().meta({ description: 'Use as voice_id' }),
  name: z.string(),
  language_id: z.int(),
  gender: z.enum(['male', 'female']),
  preview_url: z.string().meta({ description: 'A spoken sample (WAV)' }),
  accent: z.string().nullable(),
  age: z.string().nullable(),
  synthesizer_provider_id: z.int().nullable(),
});
const languageView = z.object({ id: z.int(), name: z.string(), code: z.string().meta({ description: 'BCP 47 language tag' }) });
const modelView = z.object({ id: z.int(), name: z.string(), provider: z.string(), model: z.string() });
const providerView = z.object({ id: z.int(), name: z.string() });

/** The catalog lists assistant creation refers to; each item carries only its public fields. */
export function registerCatalogRoutes(api: Api, ctx: AppContext): void {
  const { catalog } = ctx;

  api.route({
    method: 'GET',
    url: '/user/assistants/voices',
    summary: 'List voices (public ones and the caller’s own), optionally by mode and language',
    tags,
    query: voicesQuery,
    response: z.array(voiceView),
    handler: ({ query, accountId }) =>
      catalog.voices({ mode: query.mode, language_id: query.language_id, accountId }).map(Catalog.publicVoice),
  });

  api.route({
    method: 'GET',
    url: '/user/assistants/languages',
    summary: 'List languages usable as language_id and secondary_language_ids',
    tags,
    response: z.array(languageView),
    handler: () => catalog.languages().map(({ id, name, code }) => ({ id, name, code })),
  });

  const models = (list: typeof catalog.llmModels) => () =>
    list.call(catalog).map(({ id, name, provider, model }) => ({ id, name, provider, model }));
  api.route({
    method: 'GET',
    url: '/user/assistants/llm-models',
    summary: 'List LLM models usable as llm_model_id and chat_llm_fallback_id',
    tags,
    response: z.array(modelView),
    handler: models(catalog.llmModels),
  });
  api.route({
    method: 'GET',
    url: '/user/assistants/multimodal-models',
    summary: 'List realtime models usable as multimodal_model_id',
    tags,
    response: z.array(modelView),
    handler: models(catalog.multimodalModels),
  });

  api.route({
    method: 'GET',
    url: '/user/assistants/synthesizer-providers',
    summary: 'List speech synthesizers usable as synthesizer_provider_id',
    tags,
    response: z.array(providerView),
    handler: () => catalog.synthesizerProviders().map(({ id, name }) => ({ id, name })),
  });
  api.route({
    method: 'GET',
    url: '/user/assistants/transcriber-providers',
    summary: 'List speech recognizers usable as transcriber_provider_id',
    tags,
    response: z.array(providerView),
    handler: () => catalog.transcriberProviders().map(({ id, name }) => ({ id, name })),
  });
}
