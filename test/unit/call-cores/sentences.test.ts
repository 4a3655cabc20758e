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
    expect(split(text)).toEqual(chunks);
    expect(split(text, { firstClauseMinChars: 0 }, 1)).toEqual(chunks);
    expect(split(text, { firstClauseMinChars: 0 }, 1000)).toEqual(chunks);
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
  ])('%j', (text, chunks) => {
    expect(split(text)).toEqual(chunks);
    expect(split(text, { firstClauseMinChars: 0 }, 1)).toEqual(chunks);
  });

  it('waits for the next token before deciding on a trailing dot', () => {
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    expect(s.push('It is 3.')).toEqual([]);
    expect(s.push('5 percent. ')).toEqual(['It is 3.5 percent.']);
    expect(s.push('Ok')).toEqual([]);
    expect(s.flush()).toEqual(['Ok']);
  });

  it('emits a sentence as soon as the space after it arrives', () => {
    const s = new SentenceSplitter({ firstClauseMinChars: 0 });
    expect(s.push('Sure.')).toEqual([]);
    expect(s.push(' ')).toEqual(['Sure.']);
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
