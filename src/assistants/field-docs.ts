import type { z } from 'zod';
import { DEFAULTS } from './config.ts';

/**
 * What the API document says about each assistant field beyond its type and bounds: the spec's
 * descriptions, mode rules in words, and the defaults applied when a field is left out. Only
 * documentation: validation lives in fields.ts and rules.ts. The console's assistant form
 * shows these as hints and starts its inputs from the defaults.
 */
export const FIELD_DESCRIPTIONS: Record<string, string> = {
  name: 'Shown in lists; not spoken.',
  voice_id: 'Must be compatible with the chosen mode (GET /user/assistants/voices?mode=).',
  language_id: 'The main language of the conversation.',
  type: 'inbound answers calls to its phone number; outbound places calls (campaigns, POST /user/calls).',
  mode: 'pipeline: speech recognition, LLM and speech synthesis in turn; multimodal and dualplex: a realtime speech model.',
  timezone: 'IANA time zone in region/city form, e.g. Europe/Paris.',
  initial_message: 'First thing spoken at call start; empty: the assistant says nothing first.',
  system_prompt: 'Behavior and personality; {{variable_name}} is replaced by the call’s variables.',
  llm_model_id: 'Required when mode is pipeline.',
  multimodal_model_id: 'Required when mode is multimodal or dualplex.',
  chat_llm_fallback_id: 'Fallback model for tool calls in multimodal and dualplex.',
  turn_detection_threshold: 'For multimodal and dualplex; empty: automatic.',
  secondary_language_ids: 'Additional languages; the assistant detects them and switches.',
  knowledgebase_id: 'Knowledge base to attach.',
  knowledgebase_mode: 'function_call: the assistant searches through a function (required for multimodal and dualplex); prompt: knowledge injected into the prompt (pipeline only).',
  folder_id: 'Empty leaves the assistant uncategorized.',
  phone_number_id: 'For inbound assistants: not a caller-ID number, and not assigned to another inbound assistant.',
  tool_ids: 'Custom mid-call tools (/user/tools).',
  tools: 'Built-in tools (call_transfer, warm_call_transfer, end_call, dtmf_input, collect_keypad, assistant_transfer, calendar_booking); on update replaces all of them, [] removes them.',
  synthesizer_provider_id: 'Empty: chosen from the voice, else by language.',
  transcriber_provider_id: 'Pipeline only. Empty: chosen by language.',
  allow_interruptions: 'Cannot be disabled for multimodal and dualplex.',
  fillers: 'Short phrases while the model thinks; pipeline only.',
  filler_config: 'Keys positive, negative, question, neutral, each an array of short phrases.',
  record: 'Record the call.',
  wait_for_customer: 'The assistant waits for the customer to speak first.',
  max_duration: 'Seconds.',
  max_silence_duration: 'Seconds of silence until re-engagement.',
  max_initial_silence_duration: 'Seconds of silence right after call start before the call ends; empty: none.',
  ringing_time: 'Seconds an outbound call rings.',
  reengagement_interval: 'Seconds between re-engagement prompts.',
  reengagement_prompt: 'What the assistant says to re-engage a silent caller.',
  voice_mail_message: 'Left on voicemail instead of hanging up.',
  endpoint_type: 'How the end of the caller’s turn is found: vad (silence) or ai.',
  min_interrupt_words: 'Words the caller must say before the assistant stops; setting it enables the feature.',
  ambient_sound: 'Background sound mixed under the assistant’s voice.',
  is_webhook_active: 'Send the post-call webhook.',
  webhook_url: 'Required when the post-call webhook is active.',
  send_webhook_only_on_completed: 'Skip failed and unanswered calls.',
  post_call_schema: 'Items {name, type (string, number, bool), description} extracted after each call.',
  variables: 'Key/value pairs usable in prompts as {{variable_name}}.',
  conversation_inactivity_timeout: 'Minutes of chat inactivity before the conversation ends.',
  conversation_ended_retrigger: 'A conversation ended by inactivity may restart.',
  conversation_ended_webhook_url: 'Called when a chat conversation ends by inactivity.',
};

/**
 * The shape with each field's description attached, and its default where the spec has one
 * (`withDefaults`: the create body; an update keeps what is not sent instead).
 */
export function documentedShape<S extends Record<string, z.ZodType>>(shape: S, withDefaults: boolean): S {
  const defaults = (withDefaults ? DEFAULTS : {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(shape).map(([name, type]) => {
      const meta: Record<string, unknown> = {};
      if (FIELD_DESCRIPTIONS[name]) meta.description = FIELD_DESCRIPTIONS[name];
      if (name in defaults) meta.default = defaults[name];
      return [name, Object.keys(meta).length > 0 ? type.meta(meta) : type];
    }),
  ) as S;
}
