import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FILLERS,
  FillerPlanner,
  classifyUtterance,
  fillerLanguage,
  fillerPhrases,
  pickFiller,
} from '../../../src/call/fillers.ts';

describe('classifyUtterance', () => {
  it.each([
    ['What are your opening hours', 'en', 'question'],
    ['can you help me', 'en', 'question'],
    ['I wanted to know the price?', 'en', 'question'],
    ['No, that is not right', 'en', 'negative'],
    ["It's not good at all", 'en', 'negative'],
    ['I need to cancel my appointment', 'en', 'negative'],
    ['Yes please, that would be great', 'en', 'positive'],
    ['Thanks so much', 'en', 'positive'],
    ['I live in London', 'en', 'neutral'],
    ['', 'en', 'neutral'],
    ['¿Tienen mesa para dos?', 'es', 'question'],
    ['Cómo llego al centro', 'es', 'question'],
    ['No, está mal', 'es', 'negative'],
    ['Sí, perfecto, gracias', 'es', 'positive'],
    ['Est-ce que vous êtes ouverts', 'fr', 'question'],
    ["Non, ce n'est pas ça", 'fr', 'negative'],
    ['Oui, merci beaucoup', 'fr', 'positive'],
    ['Wann haben Sie geöffnet', 'de', 'question'],
    ['Nein, das ist falsch', 'de', 'negative'],
    ['Ja, danke, super', 'de', 'positive'],
    ['Ich wohne in Berlin', 'de', 'neutral'],
  ])('%j (%s) → %s', (text, lang, cat) => expect(classifyUtterance(text, lang)).toBe(cat));

  it('an unknown language uses the English lexicon', () => {
    expect(classifyUtterance('thanks', 'xx')).toBe('positive');
  });
});

describe('fillerLanguage and fillerPhrases', () => {
  it('reduces locales to a known base language, else English', () => {
    expect(fillerLanguage('en-US')).toBe('en');
    expect(fillerLanguage('DE_de')).toBe('de');
    expect(fillerLanguage('fr')).toBe('fr');
    expect(fillerLanguage('ja')).toBe('en');
    expect(fillerLanguage(undefined)).toBe('en');
  });

  it('prefers filler_config per category and falls back to the defaults for empty ones', () => {
    const config = { question: ['Hmm, let me think.'], negative: [], positive: ['  '] };
    expect(fillerPhrases('question', config, 'en')).toEqual(['Hmm, let me think.']);
    expect(fillerPhrases('negative', config, 'es')).toBe(DEFAULT_FILLERS.es!.negative);
    expect(fillerPhrases('positive', config, 'fr')).toBe(DEFAULT_FILLERS.fr!.positive);
    expect(fillerPhrases('neutral', undefined, 'de')).toBe(DEFAULT_FILLERS.de!.neutral);
  });

  it('has at least two phrases per category for every language (so repeats can be avoided)', () => {
    for (const lang of ['en', 'es', 'fr', 'de']) {
      for (const cat of ['question', 'negative', 'positive', 'neutral'] as const) {
        expect(DEFAULT_FILLERS[lang]![cat].length).toBeGreaterThanOrEqual(2);
      }
    }
  });
});

describe('pickFiller', () => {
  it('never repeats the last filler when there is a choice', () => {
    const phrases = ['A', 'B', 'C'];
    for (const r of [0, 0.3, 0.5, 0.99]) expect(pickFiller(phrases, 'A', () => r)).not.toBe('A');
    expect(pickFiller(phrases, 'B', () => 0)).toBe('A');
    expect(pickFiller(phrases, 'B', () => 0.999)).toBe('C');
  });
  it('repeats a single phrase rather than staying silent; nothing from nothing', () => {
    expect(pickFiller(['Only'], 'Only', () => 0.5)).toBe('Only');
    expect(pickFiller([], undefined, () => 0.5)).toBeUndefined();
  });
});

describe('FillerPlanner timing', () => {
  const planner = (extra = {}): FillerPlanner => new FillerPlanner({ enabled: true, random: () => 0, ...extra });

  it('plays one filler at exactly 600 ms after end of turn when no reply audio came', () => {
    const p = planner();
    expect(p.endOfTurn(1000, 'What time do you open?')).toEqual({ wakeAtMs: 1600 });
    expect(p.tick(1599)).toEqual({ wakeAtMs: 1600 });
    expect(p.tick(1600)).toEqual({
      filler: { type: 'filler', atMs: 1600, text: DEFAULT_FILLERS.en!.question[0], category: 'question' },
    });
    expect(p.tick(5000)).toEqual({}); // at most one per turn
  });

  it('no filler when the reply audio starts before the delay', () => {
    const p = planner();
    p.endOfTurn(1000, 'Hello');
    p.replyAudioStarted(1599);
    expect(p.tick(1600)).toEqual({});
  });

  it('the delay is configurable', () => {
    const p = planner({ delayMs: 1200 });
    expect(p.endOfTurn(0, 'ok').wakeAtMs).toBe(1200);
  });

  it('disabled: never plays', () => {
    const p = new FillerPlanner({ enabled: false });
    expect(p.endOfTurn(0, 'What?')).toEqual({});
    expect(p.tick(10_000)).toEqual({});
  });

  it('cancel (barge-in) drops the pending filler', () => {
    const p = planner();
    p.endOfTurn(0, 'What?');
    p.cancel();
    expect(p.tick(600)).toEqual({});
  });

  it('consecutive turns do not repeat the previous filler', () => {
    const p = planner({ config: { neutral: ['One moment.', 'Just a sec.'] } });
    const seen: string[] = [];
    for (let turn = 0; turn < 4; turn++) {
      p.endOfTurn(turn * 10_000, 'I live in London');
      seen.push(p.tick(turn * 10_000 + 600).filler!.text);
    }
    expect(seen).toEqual(['One moment.', 'Just a sec.', 'One moment.', 'Just a sec.']);
  });

  it('uses the configured language', () => {
    const p = planner({ language: 'de-DE' });
    p.endOfTurn(0, 'Nein, das ist falsch');
    expect(p.tick(600).filler).toMatchObject({ category: 'negative', text: DEFAULT_FILLERS.de!.negative[0] });
  });
});
