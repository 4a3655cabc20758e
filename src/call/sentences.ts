/**
 * Cuts streamed LLM tokens into speakable chunks for TTS. Latency decides the shape: the first
 * chunk may be cut early at a clause boundary so the first audio starts sooner, later chunks are
 * whole sentences (TTS prosody is better over a sentence), and no chunk grows past a cap.
 *
 * A '.' ends a sentence only when followed by whitespace (or the end of the stream), which keeps
 * decimals (3.14), times (10.30), versions and URLs whole; abbreviations (Mr., e.g., U.S.),
 * single initials (J. Smith) and list markers at the start of a line ("1. ") are not sentence
 * ends either. CJK terminators (。！？) end a sentence without a following space, because CJK text
 * has none. A newline always ends a chunk: LLMs put list items and paragraphs on their own lines.
 *
 * A terminator that is the last thing received so far ("Sure." with the next token not yet in)
 * is a sentence end at once when nothing the next token could bring would change that: it follows
 * a plain word (letters, apostrophes, hyphens; not an abbreviation or an initial). Digits before it
 * ("3." may become 3.5, "10." 10.30) or a word with . / @ : = & in it (a URL, an address, "Ph.D.")
 * keep the old rule: the next token decides. Waiting for that token costs one token interval of the
 * model (one more network read) on every reply whose first sentence ends a token; LLM tokenizers
 * keep the dot of "example.com" or "file.txt" with what follows it (".com"), so a dot received last
 * after a plain word ends a sentence. Should the stream then continue the same sentence end ("?" +
 * "!", "." + "..", a closing quote or bracket), those characters are dropped: the sentence is
 * already on its way to TTS, and on their own they would be a chunk of nothing to say.
 */

export interface SentenceSplitterOptions {
  /** Early first chunk at , ; : — only when at least this long. Default 30; 0 disables. */
  firstClauseMinChars?: number;
  /** Cap: a chunk without a boundary is cut (at a clause or word boundary) at this length. */
  maxChunkChars?: number;
}

const ABBREVIATIONS = new Set(
  (
    'mr mrs ms dr prof sr jr st mt vs etc e.g i.e eg ie u.s u.k u.s.a a.m p.m no nr approx ' +
    'inc ltd co corp dept est fig vol ca cf al jan feb mar apr jun jul aug sep sept oct nov dec ' +
    'mon tue wed thu fri sat sun sra sr srta dra mme mlle m z.b bzw usw ggf ca nr str'
  ).split(' '),
);

const CLOSERS = `"'”’)]}»」』`;
const TERMINATORS = '.!?…';
const CJK_TERMINATORS = '。！？';

export class SentenceSplitter {
  private buf = '';
  private emitted = 0;
  /** The last chunk was cut at the very end of what had arrived (see the header). */
  private cutAtEdge = false;
  private readonly firstClauseMinChars: number;
  private readonly maxChunkChars: number;

  constructor(options: SentenceSplitterOptions = {}) {
    this.firstClauseMinChars = options.firstClauseMinChars ?? 30;
    this.maxChunkChars = options.maxChunkChars ?? 250;
  }

  /** Feed one streamed token; returns the chunks it completed (often none). */
  push(token: string): string[] {
    this.buf += token;
    return this.drain(false);
  }

  /** End of the reply: whatever is left is the last chunk. */
  flush(): string[] {
    const out = this.drain(true);
    const rest = cleanForSpeech(this.buf);
    this.buf = '';
    if (rest) out.push(rest);
    this.emitted = 0;
    return out;
  }

  /** Barge-in: drop the unspoken remainder. */
  reset(): void {
    this.buf = '';
    this.emitted = 0;
    this.cutAtEdge = false;
  }

  private drain(final: boolean): string[] {
    const out: string[] = [];
    if (this.cutAtEdge) this.dropEdgeRest();
    for (;;) {
      let cut = findSentenceEnd(this.buf, final);
      if (cut < 0 && this.emitted === 0 && this.firstClauseMinChars > 0) {
        cut = findClauseEnd(this.buf, this.firstClauseMinChars);
      }
      if (cut < 0 && this.buf.length > this.maxChunkChars) cut = capCut(this.buf, this.maxChunkChars);
      if (cut < 0) return out;
      const chunk = cleanForSpeech(this.buf.slice(0, cut));
      // A sentence end with nothing after it yet (not a newline: that ends a chunk outright).
      this.cutAtEdge = !final && cut === this.buf.length && isEndMark(this.buf[cut - 1]!);
      this.buf = this.buf.slice(cut);
      if (chunk) {
        out.push(chunk);
        this.emitted++;
      }
    }
  }

  /** After a cut at the edge: terminators and closers that arrive next belong to the cut sentence. */
  private dropEdgeRest(): void {
    let i = 0;
    while (i < this.buf.length && isEndMark(this.buf[i]!)) i++;
    if (i > 0) this.buf = this.buf.slice(i);
    // Anything else (a space, a word) settles it; nothing yet leaves the question open.
    if (this.buf !== '') this.cutAtEdge = false;
  }
}

function isEndMark(c: string): boolean {
  return TERMINATORS.includes(c) || CJK_TERMINATORS.includes(c) || CLOSERS.includes(c);
}

/** Index just past the first sentence end (terminator + closers), or -1 if none is certain yet. */
export function findSentenceEnd(text: string, final = false): number {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') {
      if (text.slice(0, i).trim()) return i + 1;
      continue;
    }
    if (CJK_TERMINATORS.includes(c)) return skipClosers(text, i + 1);
    if (!TERMINATORS.includes(c)) continue;
    // Collapse runs like "?!" and "..." into one terminator.
    let run = i + 1;
    while (run < text.length && TERMINATORS.includes(text[run]!)) run++;
    const j = skipClosers(text, run);
    if (j >= text.length) {
      // A lone dot after an abbreviation or an initial ("Dr.", "J.") is never an end here.
      if (c === '.' && run === i + 1 && !isSentenceDot(text, i)) return -1;
      // Nothing after it yet: at the end of the stream it is an end; before that, only after a
      // plain word (else the next token decides: a digit would make "3." a decimal).
      return final || afterPlainWord(text, i) ? j : -1;
    }
    if (!/\s/.test(text[j]!)) {
      i = j - 1;
      continue;
    }
    if (c === '.' && j === i + 1 && !isSentenceDot(text, i)) continue;
    return j;
  }
  return -1;
}

function skipClosers(text: string, at: number): number {
  while (at < text.length && CLOSERS.includes(text[at]!)) at++;
  return at;
}

/** Openers and emphasis before a word, closers and emphasis after it: not part of the word. */
const WORD_OPENERS = /^[("'“‘«「『[¿¡*_]+/;
const WORD_CLOSERS = /["'”’)\]}»」』*_]+$/;
/** Letters (any script, with combining marks), inner apostrophes and hyphens: nothing a next token could extend into a number, URL or address. */
const PLAIN_WORD = /^\p{L}[\p{L}\p{M}'’-]*$/u;

/** Is the terminator at `at`, with nothing after it yet, preceded by a plain word? */
function afterPlainWord(text: string, at: number): boolean {
  let start = at;
  while (start > 0 && !/\s/.test(text[start - 1]!)) start--;
  const word = text.slice(start, at).replace(WORD_OPENERS, '').replace(WORD_CLOSERS, '');
  return PLAIN_WORD.test(word);
}

/** Is the '.' at `dot` (followed by whitespace) a sentence end rather than an abbreviation? */
function isSentenceDot(text: string, dot: number): boolean {
  let start = dot;
  while (start > 0 && !/\s/.test(text[start - 1]!)) start--;
  const word = text.slice(start, dot).replace(/^[("'“‘*_]+/, '');
  const lower = word.toLowerCase();
  if (ABBREVIATIONS.has(lower)) return false;
  // A single letter: an initial ("J. R. R. Tolkien").
  if (/^\p{L}$/u.test(word)) return false;
  // "1." at the start of a line (after optional markdown): a numbered-list marker.
  if (/^\d{1,3}$/.test(word)) {
    const lineStart = text.lastIndexOf('\n', start - 1) + 1;
    if (!text.slice(lineStart, start).replace(/[#>*\-\s]/g, '')) return false;
  }
  return true;
}

/** First clause boundary (, ; : — followed by a space) at or after `minChars`, or -1. */
function findClauseEnd(text: string, minChars: number): number {
  const re = /[,;:—–](\s)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const end = m.index + 1;
    if (end >= minChars) return end;
  }
  return -1;
}

/** Where to cut an over-long chunk: last clause boundary, else last space, before the cap. */
function capCut(text: string, cap: number): number {
  const head = text.slice(0, cap);
  const clause = Math.max(head.lastIndexOf(', '), head.lastIndexOf('; '), head.lastIndexOf(': '));
  if (clause > cap / 2) return clause + 1;
  const space = head.lastIndexOf(' ');
  return space > 0 ? space + 1 : cap;
}

/**
 * Remove markdown a TTS would read out: emphasis markers, headings, bullets, code ticks, links
 * (keep the label), rules, table pipes. Whitespace collapsed. Numbers in lists are kept:
 * "1. Open the app" reads naturally.
 */
export function cleanForSpeech(text: string): string {
  return text
    .split('\n')
    .map((line) =>
      line
        .replace(/^\s*#{1,6}\s+/, '')
        .replace(/^\s*>\s?/, '')
        .replace(/^\s*[-*+•]\s+/, '')
        .replace(/^\s*([-*_]\s*){3,}$/, '')
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/\*\*|__|~~|`+/g, '')
        .replace(/(^|[\s(])[*_](\S)/g, '$1$2')
        .replace(/(\S)[*_](?=$|[\s.,;:!?)])/g, '$1')
        .replace(/\s*\|\s*/g, ' '),
    )
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}
