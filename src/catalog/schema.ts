import { z } from 'zod';

/**
 * The catalog's shapes: what an operator may write in a SWITCHBOARD_CATALOG file and what the
 * built-in catalog is made of. Fields beyond the spec's list objects (`kind`, `modes`,
 * `provider_voice`, ...) are internal: they tell the engine which adapter and provider name to use
 * and are never sent to clients.
 */
export const MODES = ['pipeline', 'multimodal', 'dualplex'] as const;
export type Mode = (typeof MODES)[number];

const id = z.int().positive();
const name = z.string().min(1).max(255);
/** BCP 47 tag as used by providers: `en`, `en-US`, `zh-Hans-CN`. */
const bcp47 = z.string().regex(/^[a-z]{2,3}(-[A-Za-z]{4})?(-([A-Z]{2}|[0-9]{3}))?$/, 'must be a BCP 47 tag such as en-US');
/** Language prefixes a provider serves (`en` covers en-US and en-GB); null means every language. */
const languages = z.array(bcp47).min(1).nullable().default(null);

export const languageSchema = z.strictObject({ id, name, code: bcp47 });

export const modelSchema = z.strictObject({
  id,
  name,
  // Only the OpenAI protocol is implemented; requests go to OPENAI_BASE_URL.
  provider: z.literal('openai'),
  model: z.string().min(1).max(200),
});

export const synthesizerProviderSchema = z.strictObject({
  id,
  name,
  /** Which adapter synthesizes: OpenAI speech API or the bundled Flite (WASI) engine. */
  kind: z.enum(['openai', 'flite']),
  /** Provider model, e.g. gpt-4o-mini-tts; unused by Flite. */
  model: z.string().min(1).max(200).nullable().default(null),
  /** Works without network access. */
  offline: z.boolean().default(false),
  languages,
});

export const transcriberProviderSchema = z.strictObject({
  id,
  name,
  kind: z.enum(['deepgram', 'openai']),
  model: z.string().min(1).max(200).nullable().default(null),
  languages,
});

export const voiceSchema = z.strictObject({
  id,
  name,
  language_id: id,
  gender: z.enum(['male', 'female']),
  accent: z.string().min(1).max(100).nullable().default(null),
  age: z.string().min(1).max(100).nullable().default(null),
  /** Null for voices of a realtime (multimodal) model, which speaks itself. */
  synthesizer_provider_id: id.nullable(),
  /** The provider's own voice name (`alloy`, `slt`). */
  provider_voice: z.string().min(1).max(200),
  modes: z.array(z.enum(MODES)).min(1),
  /** Realtime voices some models lack (marin/cedar exist on gpt-realtime only); null = all. */
  multimodal_model_ids: z.array(id).min(1).nullable().default(null),
  /** Listed to every account; a private voice is listed only to `account_id`. */
  public: z.boolean().default(true),
  account_id: id.nullable().default(null),
  /** Overrides the computed `{public_url}/api/voices/{id}/preview.wav`. */
  preview_url: z.url({ protocol: /^https?$/ }).nullable().default(null),
});

const sections = {
  languages: z.array(languageSchema),
  llm_models: z.array(modelSchema),
  multimodal_models: z.array(modelSchema),
  synthesizer_providers: z.array(synthesizerProviderSchema),
  transcriber_providers: z.array(transcriberProviderSchema),
  voices: z.array(voiceSchema),
};

export const SECTIONS = Object.keys(sections) as (keyof typeof sections)[];

/** A complete catalog. */
export const catalogDataSchema = z.strictObject(sections);

/**
 * A SWITCHBOARD_CATALOG file: each top-level section present REPLACES the built-in section;
 * sections under `add` are appended to the (built-in or replaced) section.
 */
const partialSections = {
  languages: sections.languages.optional(),
  llm_models: sections.llm_models.optional(),
  multimodal_models: sections.multimodal_models.optional(),
  synthesizer_providers: sections.synthesizer_providers.optional(),
  transcriber_providers: sections.transcriber_providers.optional(),
  voices: sections.voices.optional(),
};

export const catalogFileSchema = z.strictObject({ ...partialSections, add: z.strictObject(partialSections).optional() });

export type Language = z.output<typeof languageSchema>;
export type Model = z.output<typeof modelSchema>;
export type SynthesizerProvider = z.output<typeof synthesizerProviderSchema>;
export type TranscriberProvider = z.output<typeof transcriberProviderSchema>;
export type VoiceEntry = z.output<typeof voiceSchema>;
export type CatalogData = z.output<typeof catalogDataSchema>;
export type CatalogDataInput = z.input<typeof catalogDataSchema>;
export type CatalogFile = z.output<typeof catalogFileSchema>;
