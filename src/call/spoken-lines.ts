/**
 * The fixed lines the engine itself says on a call (not the assistant's LLM): the default
 * re-engagement question, the goodbye at `max_duration`, the apologies when a provider fails,
 * and the line that covers a slow tool. Every mode uses these, in the assistant's language: the
 * languages the filler defaults have (src/call/fillers.ts); any other falls back to English.
 * A `reengagement_prompt` replaces the default question with an LLM turn in any language.
 */

export type SpokenLine =
  /** max_silence_duration reached and no reengagement_prompt. */
  | 'reengagement'
  /** max_duration reached: said, then the call ends. */
  | 'goodbye'
  /** Pipeline: the LLM or TTS failed for one turn; the call goes on (docs/FAILURES-AND-BILLING.md). */
  | 'apology'
  /** Any mode: a provider failure ends the call (no speech recogniser, no model, turns keep failing); said, then the call ends. */
  | 'model-lost'
  /** Realtime: a tool is still running when the silence limit comes. */
  | 'still-working';

const LINES = {
  en: {
    reengagement: 'Are you still there?',
    goodbye: "I'm sorry, we've reached the time limit for this call. Thank you for calling, goodbye.",
    apology: "I'm sorry, I'm having some trouble right now. Could you say that again?",
    'model-lost': "I'm sorry, I'm having technical trouble and have to end this call. Please call back later. Goodbye.",
    'still-working': 'One moment please, I am still looking into that.',
  },
  es: {
    reengagement: '¿Sigue ahí?',
    goodbye: 'Lo siento, hemos llegado al tiempo máximo de esta llamada. Gracias por llamar, adiós.',
    apology: 'Lo siento, estoy teniendo algunos problemas. ¿Podría repetirlo?',
    'model-lost': 'Lo siento, tengo un problema técnico y debo terminar esta llamada. Por favor, vuelva a llamar más tarde. Adiós.',
    'still-working': 'Un momento, por favor, sigo revisándolo.',
  },
  fr: {
    reengagement: 'Êtes-vous toujours là ?',
    goodbye: "Je suis désolé, nous avons atteint la durée maximale de cet appel. Merci de votre appel, au revoir.",
    apology: "Je suis désolé, j'ai un petit problème. Pourriez-vous répéter ?",
    'model-lost': "Je suis désolé, j'ai un problème technique et je dois mettre fin à cet appel. Merci de rappeler plus tard. Au revoir.",
    'still-working': "Un instant, s'il vous plaît, je suis toujours en train de vérifier.",
  },
  de: {
    reengagement: 'Sind Sie noch da?',
    goodbye: 'Es tut mir leid, die maximale Dauer dieses Anrufs ist erreicht. Vielen Dank für Ihren Anruf, auf Wiederhören.',
    apology: 'Entschuldigung, ich habe gerade ein Problem. Könnten Sie das bitte wiederholen?',
    'model-lost': 'Es tut mir leid, ich habe ein technisches Problem und muss diesen Anruf beenden. Bitte rufen Sie später noch einmal an. Auf Wiederhören.',
    'still-working': 'Einen Moment bitte, ich schaue noch nach.',
  },
} satisfies Record<string, Record<SpokenLine, string>>;

/**
 * The base language of a BCP 47 tag ("en-US", "EN", "de_DE" → "en", "de") if `table` has it,
 * else "en".
 */
export function supportedLanguage(tag: string | undefined, table: Record<string, unknown>): string {
  const base = (tag ?? 'en').toLowerCase().split(/[-_]/)[0] ?? 'en';
  return base in table ? base : 'en';
}

/** The line in the language of `tag` (BCP 47), or in English when it has none. */
export function spokenLine(line: SpokenLine, tag: string | undefined): string {
  return LINES[supportedLanguage(tag, LINES) as keyof typeof LINES][line];
}
