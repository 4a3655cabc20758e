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
  }

  private drain(final: boolean): string[] {
    const out: string[] = [];
    for (;;) {
      let cut = findSentenceEnd(this.buf, final);
      if (cut < 0 && this.emitted === 0 && this.firstClauseMinChars > 0) {
        cut = findClauseEnd(this.buf, this.firstClauseMinChars);
      }
      if (cut < 0 && this.buf.length > this.maxChunkChars) cut = capCut(this.buf, this.maxChunkChars);
      if (cut < 0) return out;
      const chunk = cleanForSpeech(this.buf.slice(0, cut));
      this.buf = this.buf.slice(cut);
      if (chunk) {
        out.push(chunk);
        this.emitted++;
      }
    }
  }
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
    let j = i + 1;
    while (j < text.length && TERMINATORS.includes(text[j]!)) j++;
    j = skipClosers(text, j);
    if (j >= text.length) {
      // Nothing after it yet: the next token decides (a digit would make it a decimal).
      if (!final) return -1;
      return c === '.' && !isSentenceDot(text, i) ? -1 : j;
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
