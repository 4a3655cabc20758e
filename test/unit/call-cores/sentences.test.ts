import { describe, expect, it } from 'vitest';
import { SentenceSplitter, cleanForSpeech, type SentenceSplitterOptions } from '../../../src/call/sentences.ts';

/** Stream `text` through a splitter in tokens of `size` characters, then flush. */
function split(text: string, options: SentenceSplitterOptions = { firstClauseMinChars: 0 }, size = 3): string[] {
  const s = new SentenceSplitter(options);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(...s.push(text.slice(i, i + size)));
  out.push(...s.flush());
  return out;
}

/**
 * Cut `text` where an LLM's tokenizer can cut it: the pre-tokenization of OpenAI's cl100k/o200k
 * (and Llama 3's) byte-pair encoders. A token never spans two of these pieces, and a dot before
 * letters travels with them (".com"), while a sentence's final dot, "?!" or `."` is a piece of its own.
 */
function llmTokens(text: string): string[] {
  return text.match(/'(?:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/giu) ?? [];
}

/** Stream `text` through a splitter token by token as an LLM would, then flush. */
function splitLlm(text: string, options: SentenceSplitterOptions = { firstClauseMinChars: 0 }): string[] {
  const s = new SentenceSplitter(options);
  const out: string[] = [];
  for (const t of llmTokens(text)) out.push(...s.push(t));
  out.push(...s.flush());
  return out;
}

/** A chunk without its final terminators and closers (what a cut at the edge may leave behind). */
const words = (chunks: string[]): string[] => chunks.map((c) => c.replace(/[.!?…"'”’)\]}»]+$/, ''));

describe('SentenceSplitter: sentence ends', () => {
  it.each<[string, string[]]>([
    ['Hello there. How are you?', ['Hello there.', 'How are you?']],
    ['Great! See you soon.', ['Great!', 'See you soon.']],
    ['Really?! Wow.', ['Really?!', 'Wow.']],
    ['Well... I am not sure.', ['Well...', 'I am not sure.']],
    ['Well… maybe.', ['Well…', 'maybe.']],
    ['He said "yes." Then he left.', ['He said "yes."', 'Then he left.']],
    ['(See the note.) Next one.', ['(See the note.)', 'Next one.']],
    ['你好。我很好！你呢？', ['你好。', '我很好！', '你呢？']],
    ['こんにちは。元気ですか？', ['こんにちは。', '元気ですか？']],
    ['First line\nSecond line', ['First line', 'Second line']],
    ['no terminator at all', ['no terminator at all']],
    ['', []],
  ])('%j', (text, chunks) => {
    expect(splitLlm(text)).toEqual(chunks);
    expect(split(text, { firstClauseMinChars: 0 }, 1000)).toEqual(chunks);
    // Cut anywhere (not how a model streams), the same sentences come out; a run of terminators or
    // closers split across two tokens may lose its tail ("Really?" + "!"), never a word.
    expect(words(split(text))).toEqual(words(chunks));
    expect(words(split(text, { firstClauseMinChars: 0 }, 1))).toEqual(words(chunks));
  });
});

describe('SentenceSplitter: dots that are not sentence ends', () => {
  it.each<[string, string[]]>([
    ['Mr. Smith will call. Dr. Jones agrees.', ['Mr. Smith will call.', 'Dr. Jones agrees.']],
    ['Bring ID, e.g. a passport. Thanks.', ['Bring ID, e.g. a passport.', 'Thanks.']],
    ['Use i.e. the blue form. Done.', ['Use i.e. the blue form.', 'Done.']],
    ['We ship in the U.S. and Canada.', ['We ship in the U.S. and Canada.']],
    ['Pi is 3.14 roughly. Yes.', ['Pi is 3.14 roughly.', 'Yes.']],
    ['It costs $12.50 today.', ['It costs $12.50 today.']],
    ['We open at 10.30 tomorrow.', ['We open at 10.30 tomorrow.']],
    ['Visit example.com for more.', ['Visit example.com for more.']],
    ['Ask J. Smith about it.', ['Ask J. Smith about it.']],
    ['Meet at 5 p.m. sharp. Bye.', ['Meet at 5 p.m. sharp.', 'Bye.']],
    ['Steps:\n1. Open the app.\n2. Tap login.', ['Steps:', '1. Open the app.', '2. Tap login.']],
    ['I have 3. Then more.', ['I have 3.', 'Then more.']],
    ['Call 555. Or write.', ['Call 555.', 'Or write.']],
    ['It runs on v2. Try it.', ['It runs on v2.', 'Try it.']],
    ['Mail info@example.com. Thanks.', ['Mail info@example.com.', 'Thanks.']],
    ['See www.example.org/help. Bye.', ['See www.example.org/help.', 'Bye.']],
    ['Bring paper, pens, etc. Thanks.', ['Bring paper, pens, etc. Thanks.']],
  ])('%j', (text, chunks) => {
    expect(splitLlm(text)).toEqual(chunks);
    expect(split(text)).toEqual(chunks);
    expect(split(text, { firstClauseMinChars: 0 }, 1000)).toEqual(chunks);
  });

  it.each<[string, string[]]>([
    ['Mr. Smith will call. Dr. Jones agrees.', ['Mr. Smith will call.', 'Dr. Jones agrees.']],
    ['Bring ID, e.g. a passport. Thanks.', ['Bring ID, e.g. a passport.', 'Thanks.']],
    ['We ship in the U.S. and Canada.', ['We ship in the U.S. and Canada.']],
    ['Pi is 3.14 roughly. Yes.', ['Pi is 3.14 roughly.', 'Yes.']],
    ['It costs $12.50 today.', ['It costs $12.50 today.']],
    ['We open at 10.30 tomorrow.', ['We open at 10.30 tomorrow.']],
    ['Ask J. Smith about it.', ['Ask J. Smith about it.']],
    ['Meet at 5 p.m. sharp. Bye.', ['Meet at 5 p.m. sharp.', 'Bye.']],
    ['Steps:\n1. Open the app.\n2. Tap login.', ['Steps:', '1. Open the app.', '2. Tap login.']],
    ['I have 3. Then more.', ['I have 3.', 'Then more.']],
  ])('%j, even streamed one character at a time', (text, chunks) => {
    expect(split(text, { firstClauseMinChars: 0 }, 1)).toEqual(chunks);
  });

  it('one character at a time, a dot right after a plain word is taken as an end (a model never cuts "example." from "com")', () => {
    expect(split('Visit example.com for more.', { firstClauseMinChars: 0 }, 1)).toEqual(['Visit example.', 'com for more.']);
  });

  it('waits for the next token before deciding on a trailing dot after a number', () => {
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    expect(s.push('It is 3.')).toEqual([]);
    expect(s.push('5 percent. ')).toEqual(['It is 3.5 percent.']);
    expect(s.push('Ok')).toEqual([]);
    expect(s.flush()).toEqual(['Ok']);
  });

  it.each(['Dr.', 'Ask Mr.', 'Bring ID, e.g.', 'In the U.S.', 'Ask J.', 'Pens, etc.', 'At 5 p.m.', 'It is 3.', 'Open at 10.', 'Call 555.', 'Call 555?', 'Go to example.com.', 'Mail me@x.org.', 'See https://x.org/a?', 'Hello .'])(
    '%j with nothing after it yet: the next token decides (here, the end of the stream)',
    (text) => {
      const s = new SentenceSplitter({ firstClauseMinChars: 0 });
      expect(s.push(text)).toEqual([]);
      expect(s.flush()).toEqual([text]);
    },
  );

  it('a list marker at the start of a line waits too', () => {
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    expect(s.push('Steps:\n1.')).toEqual(['Steps:']);
    expect(s.push(' Open the app.')).toEqual(['1. Open the app.']);
  });
});

describe('SentenceSplitter: a sentence end received last is emitted at once', () => {
  it('"Sure." goes out with its dot, before the next token', () => {
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    expect(s.push('Sure')).toEqual([]);
    expect(s.push('.')).toEqual(['Sure.']);
    expect(s.push(' I')).toEqual([]);
    expect(s.push(' can help.')).toEqual(['I can help.']);
    expect(s.flush()).toEqual([]);
  });

  it('with the default early-clause setting too', () => {
    const s = new SentenceSplitter();
    expect(s.push('Hello there.')).toEqual(['Hello there.']);
    expect(s.push(' How are you?')).toEqual(['How are you?']);
    expect(s.push('\n')).toEqual([]);
    expect(s.flush()).toEqual([]);
  });

  it.each<[string[], string[]]>([
    [['Really', '?', '!', ' Wow', '.'], ['Really?', 'Wow.']],
    [['Wait', '.', '..', ' what', '?'], ['Wait.', 'what?']],
    [['He said "yes', '.', '"', ' Then he left', '.'], ['He said "yes.', 'Then he left.']],
    [['(See the note', '.', ')', ' Next one', '.'], ['(See the note.', 'Next one.']],
    [['**Note', '.', '**', ' Next', '.'], ['Note.', 'Next.']],
    [['Done', '.', '"'], ['Done.']],
    [['Well', '…', ' maybe', '.'], ['Well…', 'maybe.']],
    [['Привет', '.', ' Как дела', '?'], ['Привет.', 'Как дела?']],
    [["It's well-known", '.', ' Yes', '!'], ["It's well-known.", 'Yes!']],
    [['Great', '!', '\n', '- Next item'], ['Great!', 'Next item']],
  ])('%j → %j, the tail of the terminator run dropped rather than spoken on its own', (tokens, chunks) => {
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    const out: string[] = [];
    for (const t of tokens) out.push(...s.push(t));
    out.push(...s.flush());
    expect(out).toEqual(chunks);
  });

  it('each sentence is out by the token that ends it, streamed as a model streams', () => {
    const text = 'Sure. We open at 9.30 a.m. on weekdays. Dr. Lee sees patients until 5 p.m. Anything else?';
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    const emittedAt: [string, string][] = [];
    for (const t of llmTokens(text)) for (const c of s.push(t)) emittedAt.push([c, t]);
    expect(s.flush()).toEqual([]);
    expect(emittedAt).toEqual([
      ['Sure.', '.'],
      ['We open at 9.30 a.m. on weekdays.', '.'],
      ['Dr. Lee sees patients until 5 p.m. Anything else?', '?'],
    ]);
  });

  it('a line cut at its newline is no sentence end: the next line keeps its opening quote', () => {
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    expect(s.push('Our motto:\n')).toEqual(['Our motto:']);
    expect(s.push('"Fresh')).toEqual([]);
    expect(s.push(' daily."')).toEqual(['"Fresh daily."']);
  });

  it('CJK: a terminator received last goes out at once, a closer after it rides along', () => {
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    expect(s.push('他说「好。')).toEqual(['他说「好。']);
    expect(s.push('」')).toEqual([]);
    expect(s.push('再见！')).toEqual(['再见！']);
    expect(s.flush()).toEqual([]);
  });

  it('reset forgets a cut at the edge: the next reply keeps its opening quote', () => {
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    expect(s.push('Ok.')).toEqual(['Ok.']);
    s.reset();
    expect(s.push('"Quoted" here. ')).toEqual(['"Quoted" here.']);
  });
});

describe('SentenceSplitter: early first clause and the cap', () => {
  it('cuts the first chunk at a clause boundary once long enough, later chunks at sentences', () => {
    const text = 'Thanks for calling the front desk today, I can help you with that. First, tell me your name, please.';
    expect(split(text, { firstClauseMinChars: 30 })).toEqual([
      'Thanks for calling the front desk today,',
      'I can help you with that.',
      'First, tell me your name, please.',
    ]);
  });

  it('does not cut a first clause shorter than the minimum, nor at a thousands separator', () => {
    expect(split('Sure, I can do that for you.', { firstClauseMinChars: 30 })).toEqual(['Sure, I can do that for you.']);
    expect(split('The total comes to 1,250 dollars for the whole group.', { firstClauseMinChars: 10 })).toEqual([
      'The total comes to 1,250 dollars for the whole group.',
    ]);
  });

  it('caps a chunk with no boundary, preferring a clause then a word boundary', () => {
    const long = 'word '.repeat(30).trim();
    const chunks = split(long, { firstClauseMinChars: 0, maxChunkChars: 50 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(50);
      expect(c).toMatch(/^(word ?)+$/);
    }
    expect(chunks.join(' ')).toBe(long);
    const clause = split('alpha beta gamma delta epsilon zeta, eta theta iota kappa lambda mu nu xi omicron', {
      firstClauseMinChars: 0,
      maxChunkChars: 60,
    });
    expect(clause[0]).toBe('alpha beta gamma delta epsilon zeta,');
  });

  it('reset drops the unspoken remainder (barge-in)', () => {
    const s = new SentenceSplitter();
    s.push('I was saying that');
    s.reset();
    expect(s.push('New reply. ')).toEqual(['New reply.']);
  });
});

describe('markdown stripping', () => {
  it.each<[string, string]>([
    ['**Bold** and *italic* and _under_', 'Bold and italic and under'],
    ['## Opening hours', 'Opening hours'],
    ['- first item', 'first item'],
    ['* starred item', 'starred item'],
    ['• bullet', 'bullet'],
    ['Use `npm test` now', 'Use npm test now'],
    ['See [our site](https://example.com) today', 'See our site today'],
    ['> quoted', 'quoted'],
    ['---', ''],
    ['| Day | Hours |', 'Day Hours'],
    ['5 * 3 = 15', '5 * 3 = 15'],
    ['snake_case_name', 'snake_case_name'],
  ])('%j → %j', (md, spoken) => expect(cleanForSpeech(md)).toBe(spoken));

  it('a streamed markdown list becomes clean chunks', () => {
    const md = "Here's what we offer:\n\n- **Haircut**: $30\n- **Colour**: from $80\n\n### Booking\nCall us!";
    expect(split(md, { firstClauseMinChars: 0 }, 4)).toEqual([
      "Here's what we offer:",
      'Haircut: $30',
      'Colour: from $80',
      'Booking',
      'Call us!',
    ]);
  });
});
