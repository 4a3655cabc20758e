import type { Catalog } from '../catalog/catalog.ts';
import { addError } from '../api/validation.ts';
import type { CreateInput } from './fields.ts';

type Errors = Record<string, string[]>;

/** Fields the rules resolve when the client left them out. */
export interface Derived {
  synthesizer_provider_id: number | null;
  transcriber_provider_id: number | null;
}

/**
 * Rules between fields and against the catalog (no store access). Appends to `errors` and returns
 * the derived provider ids. Decisions where the spec is silent:
 * - the voice's language need not equal language_id (OpenAI voices are multilingual);
 * - turn_detection_threshold, chat_llm_fallback_id and an llm_model_id are accepted and ignored
 *   by modes that do not use them (so switching mode does not force clearing them), but any id
 *   given must exist;
 * - a voice that belongs to a TTS provider fixes synthesizer_provider_id: a different one is 422.
 */
export function catalogRules(input: CreateInput, catalog: Catalog, accountId: number, errors: Errors): Derived {
  const realtime = input.mode !== 'pipeline';

  const language = catalog.language(input.language_id);
  if (!language) addError(errors, 'language_id', 'The selected language id is invalid.');
  const badSecondary = (input.secondary_language_ids ?? []).filter((id) => !catalog.language(id));
  if (badSecondary.length > 0) {
    addError(errors, 'secondary_language_ids', `The secondary language ids contain unknown languages: ${badSecondary.join(', ')}.`);
  }

  if (input.mode === 'pipeline' && input.llm_model_id == null) {
    addError(errors, 'llm_model_id', 'The llm model id field is required when mode is pipeline.');
  }
  if (input.llm_model_id != null && !catalog.llmModel(input.llm_model_id)) {
    addError(errors, 'llm_model_id', 'The selected llm model id is invalid.');
  }
  if (realtime && input.multimodal_model_id == null) {
    addError(errors, 'multimodal_model_id', `The multimodal model id field is required when mode is ${input.mode}.`);
  }
  if (input.multimodal_model_id != null && !catalog.multimodalModel(input.multimodal_model_id)) {
    addError(errors, 'multimodal_model_id', 'The selected multimodal model id is invalid.');
  }
  if (input.chat_llm_fallback_id != null && !catalog.llmModel(input.chat_llm_fallback_id)) {
    addError(errors, 'chat_llm_fallback_id', 'The chat llm fallback id must be one of the LLM models.');
  }

  const voice = catalog.voice(input.voice_id, accountId);
  if (!voice) {
    addError(errors, 'voice_id', 'The selected voice id is invalid.');
  } else if (!voice.modes.includes(input.mode)) {
    addError(errors, 'voice_id', `The selected voice is not compatible with the ${input.mode} mode (it supports: ${voice.modes.join(', ')}).`);
  } else if (input.mode === 'multimodal' && input.multimodal_model_id != null && voice.multimodal_model_ids && !voice.multimodal_model_ids.includes(input.multimodal_model_id)) {
    addError(errors, 'voice_id', 'The selected voice is not available with the selected multimodal model.');
  }

  if (realtime && input.knowledgebase_mode === 'prompt') {
    addError(errors, 'knowledgebase_mode', `The knowledgebase mode must be function_call when mode is ${input.mode}.`);
  }
  if (realtime && input.allow_interruptions === false) {
    addError(errors, 'allow_interruptions', `Interruptions cannot be disabled when mode is ${input.mode}.`);
  }
  if (realtime && input.fillers === true) {
    addError(errors, 'fillers', 'Fillers are only available when mode is pipeline.');
  }
  if (input.is_webhook_active === true && input.webhook_url == null) {
    addError(errors, 'webhook_url', 'The webhook url field is required when is webhook active is true.');
  }

  const names = new Set<string>();
  (input.post_call_schema ?? []).forEach((item, i) => {
    if (names.has(item.name)) addError(errors, `post_call_schema.${i}.name`, `The name ${item.name} is used more than once.`);
    names.add(item.name);
  });

  // Synthesizer: explicit, else the voice's own provider, else the language default.
  let synthesizer = input.synthesizer_provider_id ?? null;
  if (synthesizer !== null) {
    if (!catalog.synthesizerProvider(synthesizer)) {
      addError(errors, 'synthesizer_provider_id', 'The selected synthesizer provider id is invalid.');
    } else if (voice?.synthesizer_provider_id != null && voice.synthesizer_provider_id !== synthesizer) {
      addError(errors, 'synthesizer_provider_id', 'The selected voice belongs to a different synthesizer provider.');
    }
  } else {
    synthesizer = voice?.synthesizer_provider_id ?? catalog.defaultSynthesizerFor(input.language_id)?.id ?? null;
  }

  // Transcriber: pipeline only (a realtime model hears the caller itself).
  let transcriber = input.transcriber_provider_id ?? null;
  if (transcriber !== null) {
    if (realtime) addError(errors, 'transcriber_provider_id', 'The transcriber provider id is only available when mode is pipeline.');
    else if (!catalog.transcriberProvider(transcriber)) addError(errors, 'transcriber_provider_id', 'The selected transcriber provider id is invalid.');
  } else if (!realtime) {
    transcriber = catalog.defaultTranscriberFor(input.language_id)?.id ?? null;
  }
  return { synthesizer_provider_id: synthesizer, transcriber_provider_id: transcriber };
}
