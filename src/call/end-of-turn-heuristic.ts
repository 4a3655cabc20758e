/**
 * Built-in semantic end-of-turn guess for `endpoint_type: 'ai'`, used alone or as the fallback
 * when an external classifier misses its deadline. Lexical on purpose: it must run on every
 * interim in microseconds and be predictable enough to document. It only has to recognise the
 * cases where cutting in is costly — a sentence left hanging, digits or an address being
 * dictated — and otherwise stay near the plain VAD wait.
 *
 * Probabilities (→ wait through `aiWaitMs`):
 *   empty 0.5 · question "?" 0.95 · ". !" 0.85 · no punctuation 0.6 ·
 *   unfinished (trailing conjunction, preposition, article, "um", comma, "…"; or an
 *   auxiliary/pronoun without a full stop, "my name is") 0.15 ·
 *   digits being dictated (≥ 3 trailing digits, not a complete 10/11/12/16-digit number) 0.1 ·
 *   partial address ("at/on/is <number>" after an address cue such as "live", with at most two
 *   words after the number and no street word yet) 0.25.
 */

export type TurnHint = 'empty' | 'question' | 'complete' | 'neutral' | 'unfinished' | 'digits' | 'address';

export interface HeuristicResult {
  probability: number;
  hint: TurnHint;
}

/**
 * Words after which a sentence cannot end, even when the STT put a full stop after them
 * (conjunctions, prepositions, articles, possessives, hesitations).
 */
const HANGING_WORDS = new Set(
  (
    'and or but so because cause if than whose whom ' +
    'to of in on at for with from by about into onto under after before between through ' +
    'the a an my your our their his her its some any ' +
    'um uh er erm hmm uhm like also plus as very just ' +
    // Spanish, French and German hesitations and conjunctions STT commonly ends on.
    'y o pero porque que este eh et ou mais parce euh und oder aber weil dass ähm äh'
  ).split(' '),
);

/**
 * Auxiliaries and subject pronouns: hanging without punctuation ("my name is"), but a final with
 * a full stop ("Yes, it is.", "Yes I can.") is complete.
 */
const WEAK_HANGING_WORDS = new Set(
  'is are was were am be been being have has had do does did will would can could should i we he she they then that which who where when while not'.split(' '),
);

const NUMBER_WORDS = new Set('zero oh o one two three four five six seven eight nine'.split(' '));

/** Lengths at which a dictated number is usually whole: phone (10/11/12 with country), card (16). */
const COMPLETE_DIGIT_COUNTS = new Set([10, 11, 12, 16]);

const STREET_WORDS = new Set(
  'street st road rd avenue ave lane ln drive dr boulevard blvd way court ct place pl square close crescent terrace highway hwy'.split(' '),
);

export function heuristicEndOfTurn(transcript: string): HeuristicResult {
  const text = transcript.trim();
  if (!text) return { probability: 0.5, hint: 'empty' };
  const words = text
    .toLowerCase()
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter((w) => w.length > 0);

  const digits = trailingDigitCount(words);
  if (digits >= 3 && !COMPLETE_DIGIT_COUNTS.has(digits)) return { probability: 0.1, hint: 'digits' };
  if (isPartialAddress(words)) return { probability: 0.25, hint: 'address' };

  const last = words[words.length - 1] ?? '';
  const punctuated = /[.!?。！？]["'”’)]*$/.test(text);
  if (/[,;:\-–—]$|\.\.\.$|…$/.test(text) || HANGING_WORDS.has(last) || (!punctuated && WEAK_HANGING_WORDS.has(last))) {
    return { probability: 0.15, hint: 'unfinished' };
  }
  if (/[?？¿]["'”’)]*$/.test(text)) return { probability: 0.95, hint: 'question' };
  if (/[.!。！]["'”’)]*$/.test(text)) return { probability: 0.85, hint: 'complete' };
  return { probability: 0.6, hint: 'neutral' };
}

/** Digits in the run of digit tokens / number words at the end ("0 7 7 0 0", "oh seven 7"). */
function trailingDigitCount(words: readonly string[]): number {
  let count = 0;
  for (let i = words.length - 1; i >= 0; i--) {
    const w = words[i]!;
    if (/^\d+$/.test(w)) count += w.length;
    // "double five": the digit after it is already counted once.
    else if (w === 'double') count += 1;
    else if (w === 'triple') count += 2;
    else if (NUMBER_WORDS.has(w)) count += 1;
    else break;
  }
  return count;
}

const ADDRESS_CUES = /\b(live|lives|living|address|located|deliver|delivery|ship|send|street|road|avenue)\b/;

/** "I live at 42", "my address is 42 Baker" — a house number with the street still to come. */
function isPartialAddress(words: readonly string[]): boolean {
  for (let back = 0; back <= 2 && back < words.length; back++) {
    const i = words.length - 1 - back;
    if (!/^\d{1,5}[a-z]?$/.test(words[i]!)) continue;
    if (words.slice(i + 1).some((a) => STREET_WORDS.has(a))) return false;
    // Without a cue a number is a quantity or a time ("a table for 2", "at 3"): a full answer.
    const before = words[i - 1];
    return (before === 'at' || before === 'on' || before === 'is') && ADDRESS_CUES.test(words.slice(0, i).join(' '));
  }
  return false;
}
