/**
 * Fillers ("fillers", pipeline mode): when the reply's first audio is late — a slow LLM or tool —
 * a short phrase whose category fits what the caller said, so they do not hear dead air. Pure:
 * the planner is told when the turn ended and when reply audio started, and `tick` says whether
 * a filler is due. Randomness is injected so tests pick deterministically.
 *
 * Classification is a small lexicon, checked in this order (first match wins):
 *   question  ends with "?" (or starts with "¿"), or starts with a question word / auxiliary
 *             ("what", "can", "do", "¿", "qué", "est-ce", "warum", …);
 *   negative  contains a negative word ("no", "not", "problem", "cancel", "wrong", "nunca",
 *             "pas", "nicht", …) — checked before positive so "not good" is negative;
 *   positive  contains a positive word ("yes", "great", "thanks", "perfect", "sí", "merci", …);
 *   neutral   anything else.
 */

import { supportedLanguage } from './spoken-lines.ts';

export type FillerCategory = 'question' | 'negative' | 'positive' | 'neutral';
export type FillerConfig = Partial<Record<FillerCategory, readonly string[]>>;

interface Lexicon {
  questionStarts: readonly string[];
  negative: readonly string[];
  positive: readonly string[];
}

const LEXICONS: Record<string, Lexicon> = {
  en: {
    questionStarts: 'what when where who whom whose why how which can could would will do does did is are am was were should shall may might have has'.split(' '),
    negative: "no not don't dont can't cant won't wont never nothing problem problems issue wrong bad broken terrible awful angry upset annoyed frustrated cancel refund complaint unfortunately unhappy hate late missing".split(' '),
    positive: 'yes yeah yep great thanks thank perfect good awesome excellent wonderful love sure lovely fantastic nice happy glad brilliant amazing'.split(' '),
  },
  es: {
    questionStarts: 'qué cuándo dónde quién por cómo cuál cuánto cuánta puede puedo podría podrían'.split(' '),
    negative: 'no nunca nada problema mal malo error cancelar queja reembolso desafortunadamente enfadado roto tarde'.split(' '),
    positive: 'sí gracias perfecto genial bien bueno excelente vale claro encantado estupendo'.split(' '),
  },
  fr: {
    questionStarts: "quoi quand où qui pourquoi comment quel quelle quels quelles combien est-ce pouvez peux puis avez".split(' '),
    negative: "non pas jamais rien problème mauvais erreur annuler plainte remboursement malheureusement cassé retard".split(' '),
    positive: 'oui merci parfait super génial bien bon excellent formidable volontiers'.split(' '),
  },
  de: {
    questionStarts: 'was wann wo wer warum wie welche welcher welches wieviel wie viel kann können könnten haben hast ist sind gibt'.split(' '),
    negative: 'nein nicht nie nichts kein keine problem falsch schlecht kaputt stornieren beschwerde leider ärgerlich spät'.split(' '),
    positive: 'ja danke perfekt super toll gut prima ausgezeichnet wunderbar gerne klar'.split(' '),
  },
};

/** Built-in phrases per language, used for any category `filler_config` leaves empty. */
export const DEFAULT_FILLERS: Record<string, Record<FillerCategory, readonly string[]>> = {
  en: {
    question: ['Good question, let me check.', 'Let me look that up.', 'One moment, let me see.'],
    negative: ['I understand, one moment.', "I'm sorry to hear that, let me see.", 'Okay, let me check that for you.'],
    positive: ['Great, one moment.', 'Perfect, just a second.', 'Wonderful, let me see.'],
    neutral: ['Okay, one moment.', 'Alright, let me see.', 'Just a second.'],
  },
  es: {
    question: ['Buena pregunta, déjeme comprobarlo.', 'Un momento, lo consulto.', 'Déjeme ver.'],
    negative: ['Entiendo, un momento.', 'Lo siento, déjeme revisarlo.', 'De acuerdo, lo compruebo.'],
    positive: ['Genial, un momento.', 'Perfecto, un segundo.', 'Estupendo, déjeme ver.'],
    neutral: ['Vale, un momento.', 'De acuerdo, déjeme ver.', 'Un segundo.'],
  },
  fr: {
    question: ['Bonne question, je vérifie.', 'Un instant, je regarde.', 'Laissez-moi voir.'],
    negative: ['Je comprends, un instant.', 'Je suis désolé, je vérifie.', "D'accord, je regarde ça."],
    positive: ['Parfait, un instant.', 'Très bien, une seconde.', 'Super, je regarde.'],
    neutral: ["D'accord, un instant.", 'Bien, laissez-moi voir.', 'Une seconde.'],
  },
  de: {
    question: ['Gute Frage, ich schaue nach.', 'Einen Moment, ich prüfe das.', 'Lassen Sie mich sehen.'],
    negative: ['Verstehe, einen Moment.', 'Das tut mir leid, ich schaue nach.', 'In Ordnung, ich prüfe das.'],
    positive: ['Prima, einen Moment.', 'Perfekt, eine Sekunde.', 'Sehr gut, ich schaue nach.'],
    neutral: ['Okay, einen Moment.', 'Gut, lassen Sie mich sehen.', 'Eine Sekunde.'],
  },
};

/** "en-US", "EN", "de_DE" → "en"/"de"; unknown languages fall back to English. */
export function fillerLanguage(language: string | undefined): string {
  return supportedLanguage(language, DEFAULT_FILLERS);
}

function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’']/g, "'")
    .split(/[\s,;:.!?¿¡"()]+/)
    .filter((w) => w.length > 0);
}

export function classifyUtterance(text: string, language?: string): FillerCategory {
  const lex = LEXICONS[fillerLanguage(language)]!;
  const trimmed = text.trim();
  if (!trimmed) return 'neutral';
  const words = wordsOf(trimmed);
  const first = words[0] ?? '';
  if (/[?？]["'”’)]*$/.test(trimmed) || trimmed.startsWith('¿') || lex.questionStarts.includes(first)) {
    return 'question';
  }
  if (words.some((w) => lex.negative.includes(w))) return 'negative';
  if (words.some((w) => lex.positive.includes(w))) return 'positive';
  return 'neutral';
}

/** filler_config's phrases for a category, else the language's defaults. */
export function fillerPhrases(category: FillerCategory, config?: FillerConfig, language?: string): readonly string[] {
  const custom = config?.[category]?.filter((p) => p.trim().length > 0);
  if (custom && custom.length > 0) return custom;
  return DEFAULT_FILLERS[fillerLanguage(language)]![category];
}

/** Pick a phrase, never the same as `last` when there is any other choice. */
export function pickFiller(phrases: readonly string[], last: string | undefined, random: () => number): string | undefined {
  const choices = phrases.length > 1 ? phrases.filter((p) => p !== last) : phrases;
  if (choices.length === 0) return undefined;
  const i = Math.min(choices.length - 1, Math.floor(random() * choices.length));
  return choices[i];
}

export interface FillerPlannerOptions {
  enabled: boolean;
  config?: FillerConfig;
  language?: string;
  /** Play a filler only if no reply audio has started this long after the end of turn. */
  delayMs?: number;
  random?: () => number;
}

export interface FillerAction {
  type: 'filler';
  atMs: number;
  text: string;
  category: FillerCategory;
}

export interface FillerStep {
  filler?: FillerAction;
  wakeAtMs?: number;
}

export class FillerPlanner {
  readonly delayMs: number;
  private readonly enabled: boolean;
  private readonly config: FillerConfig | undefined;
  private readonly language: string | undefined;
  private readonly random: () => number;
  private lastFiller: string | undefined;
  /** The turn awaiting its reply, until audio starts or a filler was played for it. */
  private turn: { endedAtMs: number; utterance: string } | undefined;

  constructor(options: FillerPlannerOptions) {
    this.enabled = options.enabled;
    this.config = options.config;
    this.language = options.language;
    this.delayMs = options.delayMs ?? 600;
    this.random = options.random ?? Math.random;
  }

  /** The caller's turn ended: the reply's clock starts. */
  endOfTurn(atMs: number, utterance: string): FillerStep {
    if (!this.enabled) return {};
    this.turn = { endedAtMs: atMs, utterance };
    return { wakeAtMs: atMs + this.delayMs };
  }

  /** Reply audio (or anything else the caller hears from us) started: no filler for this turn. */
  replyAudioStarted(_atMs: number): void {
    this.turn = undefined;
  }

  /** The turn was abandoned (barge-in, call end). */
  cancel(): void {
    this.turn = undefined;
  }

  tick(nowMs: number): FillerStep {
    const t = this.turn;
    if (!t) return {};
    const dueMs = t.endedAtMs + this.delayMs;
    if (nowMs < dueMs) return { wakeAtMs: dueMs };
    // At most one per turn, whatever happens next.
    this.turn = undefined;
    const category = classifyUtterance(t.utterance, this.language);
    const text = pickFiller(fillerPhrases(category, this.config, this.language), this.lastFiller, this.random);
    if (text === undefined) return {};
    this.lastFiller = text;
    return { filler: { type: 'filler', atMs: nowMs, text, category } };
  }
}
