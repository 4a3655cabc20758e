import type { z } from 'zod';
import type { DEFAULTED, NULLABLE, REQUIRED } from './fields.ts';
import type { StoredTool } from './tools.ts';

type Out<S extends Record<string, z.ZodType>> = { [K in keyof S]: z.output<S[K]> };

/**
 * An assistant's full configuration: every API field (snake_case, as sent) with defaults applied.
 * Optional fields without a spec default are null when not set. Built-in tools are stored as
 * `{type, data}`. `synthesizer_provider_id` is always resolved (voice's provider, else the
 * language default); `transcriber_provider_id` is resolved for `pipeline` and null otherwise.
 * `calendar_api_key` of a calendar_booking tool is sealed (ctx.secrets.open() to use it).
 */
export type AssistantConfig = Out<typeof REQUIRED> &
  Omit<Out<typeof DEFAULTED>, 'tools'> & { tools: StoredTool[] } & {
    [K in keyof typeof NULLABLE]: z.output<(typeof NULLABLE)[K]> | null;
  };

export type AssistantMode = AssistantConfig['mode'];
export type AssistantType = AssistantConfig['type'];

/** The spec's defaults ("Default" columns of the assistant tables). */
export const DEFAULTS = {
  secondary_language_ids: [] as number[],
  knowledgebase_mode: 'function_call',
  label_ids: [] as number[],
  tool_ids: [] as number[],
  tools: [] as unknown[],
  tts_emotion_enabled: true,
  voice_stability: 0.7,
  voice_similarity: 0.5,
  speech_speed: 1,
  llm_temperature: 0.1,
  allow_interruptions: true,
  fillers: false,
  record: false,
  enable_noise_cancellation: true,
  wait_for_customer: false,
  max_duration: 600,
  max_silence_duration: 40,
  ringing_time: 30,
  reengagement_interval: 30,
  end_call_on_voicemail: true,
  endpoint_type: 'vad',
  endpoint_sensitivity: 0.5,
  interrupt_sensitivity: 0.5,
  ambient_sound_volume: 0.5,
  is_webhook_active: false,
  send_webhook_only_on_completed: true,
  include_recording_in_webhook: true,
  post_call_evaluation: true,
  conversation_inactivity_timeout: 30,
  conversation_ended_retrigger: false,
} as const satisfies { [K in keyof typeof DEFAULTED]: unknown };
