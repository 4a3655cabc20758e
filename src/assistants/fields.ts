import { z } from 'zod';
import { builtinToolSchema } from './tools.ts';
import { httpUrl, timezone } from './primitives.ts';

/**
 * Every field accepted on assistant creation, with the spec's types and bounds. Shapes only:
 * rules spanning fields or needing the catalog/store live in rules.ts.
 *
 * Three kinds of field: REQUIRED (must be sent on create), DEFAULTED (spec default applied when
 * absent; null is a type error), and the rest, optional with "none" meaning null (null may also
 * be sent, e.g. in a PUT, to clear them).
 */

const id = z.int().positive();
const unit = z.number().min(0).max(1);
const ids = z.array(id).max(100);

const fillerPhrases = z.array(z.string().min(1).max(100)).max(30);
export const fillerConfigSchema = z.strictObject({
  positive: fillerPhrases.optional(),
  negative: fillerPhrases.optional(),
  question: fillerPhrases.optional(),
  neutral: fillerPhrases.optional(),
});

export const postCallItemSchema = z.strictObject({
  name: z
    .string()
    .min(3)
    .max(16)
    .refine((n) => /^[a-z0-9_]*$/.test(n), 'The name may only contain lowercase letters, digits and underscores.'),
  type: z.enum(['string', 'number', 'bool']),
  description: z.string().min(3).max(255),
});

/** Keys must be usable as `{{variable_name}}`; values are scalars substituted as text. */
export const variablesSchema = z
  .record(
    z.string().refine((k) => /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(k), 'The variable names must be letters, digits and underscores (not starting with a digit), up to 64 characters.'),
    z.union([z.string().max(10_000), z.number(), z.boolean()], { error: () => 'The variable values must be strings, numbers or booleans.' }),
  )
  .refine((v) => Object.keys(v).length <= 100, { message: 'The variables field must not have more than 100 keys.' });

export const REQUIRED = {
  name: z.string().min(1).max(255),
  voice_id: id,
  language_id: id,
  type: z.enum(['inbound', 'outbound']),
  mode: z.enum(['pipeline', 'multimodal', 'dualplex']),
  timezone,
  // May be empty: the assistant then says nothing first (conversations start with an empty history).
  initial_message: z.string().max(200),
  // No bound in the spec; the cap only keeps one record from eating the store.
  system_prompt: z.string().min(1).max(100_000),
};

export const DEFAULTED = {
  secondary_language_ids: z.array(id).max(20),
  knowledgebase_mode: z.enum(['function_call', 'prompt']),
  label_ids: ids,
  tool_ids: ids,
  tools: z.array(builtinToolSchema).max(50),
  tts_emotion_enabled: z.boolean(),
  voice_stability: unit,
  voice_similarity: unit,
  speech_speed: z.number().min(0.7).max(1.2),
  llm_temperature: unit,
  allow_interruptions: z.boolean(),
  fillers: z.boolean(),
  record: z.boolean(),
  enable_noise_cancellation: z.boolean(),
  wait_for_customer: z.boolean(),
  max_duration: z.int().min(20).max(1200),
  max_silence_duration: z.int().min(1).max(360),
  ringing_time: z.int().min(1).max(60),
  reengagement_interval: z.int().min(7).max(600),
  end_call_on_voicemail: z.boolean(),
  endpoint_type: z.enum(['vad', 'ai']),
  endpoint_sensitivity: z.number().min(0).max(5),
  interrupt_sensitivity: z.number().min(0).max(5),
  ambient_sound_volume: unit,
  is_webhook_active: z.boolean(),
  send_webhook_only_on_completed: z.boolean(),
  include_recording_in_webhook: z.boolean(),
  post_call_evaluation: z.boolean(),
  conversation_inactivity_timeout: z.int().min(1).max(1440),
  conversation_ended_retrigger: z.boolean(),
};

export const NULLABLE = {
  llm_model_id: id,
  multimodal_model_id: id,
  chat_llm_fallback_id: id,
  turn_detection_threshold: unit,
  knowledgebase_id: id,
  folder_id: id,
  phone_number_id: id,
  // Chosen from the voice/language when absent (rules.ts).
  synthesizer_provider_id: id,
  transcriber_provider_id: id,
  filler_config: fillerConfigSchema,
  max_initial_silence_duration: z.int().min(1).max(120),
  reengagement_prompt: z.string().min(1).max(1000),
  voice_mail_message: z.string().min(1).max(1000),
  min_interrupt_words: z.int().min(0).max(10),
  ambient_sound: z.enum(['off', 'office', 'city', 'forest', 'crowded_room', 'cafe', 'nature']),
  webhook_url: httpUrl,
  post_call_schema: z.array(postCallItemSchema).max(50),
  variables: variablesSchema,
  conversation_ended_webhook_url: httpUrl,
};

/** Fields of the GET record a client may echo back in a PUT; they are ignored there. */
export const READ_ONLY = ['id', 'uuid', 'status', 'created_at', 'updated_at', 'inbound_webhook_enabled'] as const;

export const FIELD_NAMES = [...Object.keys(REQUIRED), ...Object.keys(DEFAULTED), ...Object.keys(NULLABLE)];

type Optional<S extends Record<string, z.ZodType>> = { [K in keyof S]: z.ZodOptional<S[K]> };
type OptionalNullable<S extends Record<string, z.ZodType>> = { [K in keyof S]: z.ZodOptional<z.ZodNullable<S[K]>> };

function optional<S extends Record<string, z.ZodType>>(shape: S): Optional<S> {
  return Object.fromEntries(Object.entries(shape).map(([k, t]) => [k, t.optional()])) as Optional<S>;
}
function optionalNullable<S extends Record<string, z.ZodType>>(shape: S): OptionalNullable<S> {
  return Object.fromEntries(Object.entries(shape).map(([k, t]) => [k, t.nullable().optional()])) as OptionalNullable<S>;
}

/**
 * POST body, and the merged result of a PUT (re-validated whole). Loose: unknown keys are
 * reported by `unknownFields` (service.ts) alongside every other error, which a zod
 * refinement cannot promise (it is skipped once some field aborts).
 */
export const createSchema = z.looseObject({ ...REQUIRED, ...optional(DEFAULTED), ...optionalNullable(NULLABLE) });

/** PUT body: any subset of the fields; read-only record fields are accepted and dropped. */
export const updateSchema = z.looseObject({ ...optional(REQUIRED), ...optional(DEFAULTED), ...optionalNullable(NULLABLE) });

/** The keys of a body the schema does not know (each becomes a 422 entry: a typo never silently does nothing). */
export function unknownFields(value: unknown, allowed: ReadonlySet<string>): string[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.keys(value).filter((key) => !allowed.has(key));
}

export type CreateInput = z.output<typeof createSchema>;
export type UpdateInput = z.output<typeof updateSchema>;
