import { describe, expect, it } from 'vitest';
import {
  InterruptionPolicy,
  countInterruptWords,
  heardText,
  interruptSpeechMs,
  isBackchannel,
} from '../../../src/call/interruption.ts';

describe('interruptSpeechMs (interrupt_sensitivity mapping)', () => {
  it.each([
    [0, 600],
    [0.25, 450],
    [0.5, 300],
    [1, 250],
    [2, 180],
    [3, 130],
    [4, 100],
    [5, 80],
  ])('%s → %s ms', (s, ms) => expect(interruptSpeechMs(s)).toBe(ms));

  it('needs less speech as sensitivity rises, clamped at both ends', () => {
    let prev = Infinity;
    for (let s = 0; s <= 5; s += 0.05) {
      expect(interruptSpeechMs(s)).toBeLessThanOrEqual(prev);
      prev = interruptSpeechMs(s);
    }
    expect(interruptSpeechMs(-1)).toBe(600);
    expect(interruptSpeechMs(10)).toBe(80);
    expect(interruptSpeechMs(Number.NaN)).toBe(300);
  });
});

describe('backchannels', () => {
  it.each(['mm-hmm', 'Mm-hmm.', 'okay', 'yeah, okay', 'uh-huh', 'right', 'sí', 'oui', 'genau', 'I see'])('%j is a backchannel', (t) => {
    expect(isBackchannel(t)).toBe(true);
    expect(countInterruptWords(t)).toBe(0);
  });
  it.each([
    ['wait', 1],
    ['okay wait', 2],
    ['no that is wrong', 4],
    ['yeah but what about Friday', 5],
  ])('%j counts %s words', (t, n) => {
    expect(isBackchannel(t)).toBe(false);
    expect(countInterruptWords(t)).toBe(n);
  });
  it('empty text is neither', () => {
    expect(isBackchannel('')).toBe(false);
    expect(countInterruptWords('  ')).toBe(0);
  });
});

describe('InterruptionPolicy by speech duration (min_interrupt_words unset)', () => {
  it('ignores caller speech while the assistant is silent', () => {
    const p = new InterruptionPolicy();
    expect(p.speechStart(0, 60)).toEqual({ actions: [] });
    expect(p.tick(1000)).toEqual({ actions: [] });
  });

  it('ducks at the first speech and interrupts exactly when the required speech has accumulated', () => {
    const p = new InterruptionPolicy({ interruptSensitivity: 0.5 }); // 300 ms
    p.assistantStarted(0);
    const s = p.speechStart(1000, 1060);
    expect(s.actions).toEqual([{ action: 'duck', atMs: 1060 }]);
    expect(s.wakeAtMs).toBe(1300);
    expect(p.tick(1299).actions).toEqual([]);
    expect(p.tick(1300).actions).toEqual([{ action: 'interrupt', atMs: 1300, speechMs: 300, words: 0, transcript: '' }]);
    expect(p.tick(1400).actions).toEqual([]);
  });

  it('sensitivity 5 interrupts after 80 ms, sensitivity 0 needs 600 ms', () => {
    const fast = new InterruptionPolicy({ interruptSensitivity: 5 });
    fast.assistantStarted(0);
    expect(fast.speechStart(100, 160).wakeAtMs).toBe(180);
    expect(fast.tick(180).actions[0]?.action).toBe('interrupt');
    const slow = new InterruptionPolicy({ interruptSensitivity: 0 });
    slow.assistantStarted(0);
    slow.speechStart(100, 160);
    expect(slow.tick(699).actions).toEqual([]);
    expect(slow.tick(700).actions[0]?.action).toBe('interrupt');
  });

  it('accumulates speech across short segments of one overlap', () => {
    const p = new InterruptionPolicy(); // 300 ms
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    p.speechEnd(1200, 1500); // 200 ms
    const s = p.speechStart(1600, 1660);
    expect(s.actions).toEqual([]); // still the same overlap: no second duck
    // 200 ms closed + 60 ms of the new segment at 1660: 40 ms to go.
    expect(s.wakeAtMs).toBe(1700);
    expect(p.tick(1699).actions).toEqual([]);
    expect(p.tick(1700).actions[0]).toMatchObject({ action: 'interrupt', speechMs: 300 });
  });

  it('too-short speech resumes the ducked assistant after the grace period', () => {
    const p = new InterruptionPolicy({ resumeGraceMs: 500 });
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    const e = p.speechEnd(1150, 1450);
    expect(e.wakeAtMs).toBe(1650);
    expect(p.tick(1649).actions).toEqual([]);
    expect(p.tick(1650).actions).toEqual([
      { action: 'ignore', atMs: 1650, reason: 'too-short', transcript: '' },
      { action: 'resume', atMs: 1650 },
    ]);
    expect(p.tick(3000).actions).toEqual([]);
  });

  it('with onSpeechOverlap "none" there is nothing to resume', () => {
    const p = new InterruptionPolicy({ onSpeechOverlap: 'none' });
    p.assistantStarted(0);
    expect(p.speechStart(1000, 1060).actions).toEqual([]);
    p.speechEnd(1100, 1400);
    expect(p.tick(1900).actions).toEqual([{ action: 'ignore', atMs: 1900, reason: 'too-short', transcript: '' }]);
  });

  it('"pause" mode pauses instead of ducking', () => {
    const p = new InterruptionPolicy({ onSpeechOverlap: 'pause' });
    p.assistantStarted(0);
    expect(p.speechStart(1000, 1060).actions).toEqual([{ action: 'pause', atMs: 1060 }]);
  });

  it('allow_interruptions false: speech over the assistant is ignored', () => {
    const p = new InterruptionPolicy({ allowInterruptions: false });
    p.assistantStarted(0);
    expect(p.speechStart(1000, 1060).actions).toEqual([{ action: 'ignore', atMs: 1060, reason: 'not-allowed', transcript: '' }]);
    expect(p.tick(5000).actions).toEqual([]);
  });

  it('the assistant finishing drops an undecided overlap', () => {
    const p = new InterruptionPolicy();
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    p.assistantStopped(1100);
    expect(p.tick(2000).actions).toEqual([]);
  });

  it('a new speech start after a settled overlap opens a new one (ducks again)', () => {
    const p = new InterruptionPolicy();
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    p.speechEnd(1100, 1400);
    p.tick(1900);
    expect(p.speechStart(3000, 3060).actions).toEqual([{ action: 'duck', atMs: 3060 }]);
  });
});

describe('InterruptionPolicy with min_interrupt_words', () => {
  it('a backchannel never interrupts, however long, and the assistant resumes', () => {
    const p = new InterruptionPolicy({ minInterruptWords: 2 });
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    p.transcriptUpdate('mm-hmm', false, 1300);
    expect(p.tick(1400).actions).toEqual([]); // 400 ms of speech but 0 words
    p.speechEnd(1500, 1800);
    p.transcriptUpdate('Mm-hmm.', true, 1900);
    expect(p.tick(2300).actions).toEqual([
      { action: 'ignore', atMs: 2300, reason: 'backchannel', transcript: 'Mm-hmm.' },
      { action: 'resume', atMs: 2300 },
    ]);
  });

  it('interrupts the moment the transcript reaches the word count (speech already long enough)', () => {
    const p = new InterruptionPolicy({ minInterruptWords: 2 });
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    expect(p.transcriptUpdate('wait', false, 1350).actions).toEqual([]);
    expect(p.transcriptUpdate('wait stop', false, 1420).actions).toEqual([
      { action: 'interrupt', atMs: 1420, speechMs: 420, words: 2, transcript: 'wait stop' },
    ]);
  });

  it('words alone are not enough: the speech duration must also be met', () => {
    const p = new InterruptionPolicy({ minInterruptWords: 1, interruptSensitivity: 0 }); // 600 ms
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    const s = p.transcriptUpdate('stop', false, 1200);
    expect(s.actions).toEqual([]);
    expect(s.wakeAtMs).toBe(1600);
    expect(p.tick(1600).actions[0]).toMatchObject({ action: 'interrupt', words: 1 });
  });

  it('a late final within the grace still commits the interruption', () => {
    const p = new InterruptionPolicy({ minInterruptWords: 2, resumeGraceMs: 500 });
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    p.speechEnd(1500, 1800);
    expect(p.transcriptUpdate('no thanks', true, 1999).actions[0]).toMatchObject({ action: 'interrupt', atMs: 1999, speechMs: 500 });
  });

  it('one word short stays an ignore("too-short") at the grace end', () => {
    const p = new InterruptionPolicy({ minInterruptWords: 3 });
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    p.transcriptUpdate('hold on', true, 1500);
    p.speechEnd(1500, 1800);
    expect(p.tick(2000).actions[0]).toEqual({ action: 'ignore', atMs: 2000, reason: 'too-short', transcript: 'hold on' });
  });

  it('long speech with no words at all is noise, and the assistant resumes', () => {
    const p = new InterruptionPolicy({ minInterruptWords: 1 });
    p.assistantStarted(0);
    p.speechStart(1000, 1060);
    p.speechEnd(1800, 2100);
    expect(p.tick(2300).actions).toEqual([
      { action: 'ignore', atMs: 2300, reason: 'noise', transcript: '' },
      { action: 'resume', atMs: 2300 },
    ]);
  });

  it('steady noise that never stops gives up at maxPendingMs and resumes', () => {
    const p = new InterruptionPolicy({ minInterruptWords: 1, maxPendingMs: 2500 });
    p.assistantStarted(0);
    expect(p.speechStart(1000, 1060).wakeAtMs).toBe(1300);
    expect(p.tick(1300).wakeAtMs).toBe(3500);
    expect(p.tick(3499).actions).toEqual([]);
    expect(p.tick(3500).actions).toEqual([
      { action: 'ignore', atMs: 3500, reason: 'noise', transcript: '' },
      { action: 'resume', atMs: 3500 },
    ]);
    // The same segment brings no new decision; its words no longer count either.
    expect(p.transcriptUpdate('hello there', false, 3600).actions).toEqual([]);
  });
});

describe('heardText', () => {
  const segs = [
    { text: 'Our opening hours are nine to five.', durationMs: 2000 },
    { text: 'On Saturdays we open at ten.', durationMs: 1500 },
    { text: 'Is there anything else?', durationMs: 1000 },
  ];

  it('nothing played → nothing heard', () => {
    expect(heardText(segs, 0)).toEqual({ text: '', complete: false });
  });

  it('everything played → the whole text, complete', () => {
    expect(heardText(segs, 4500)).toEqual({ text: segs.map((s) => s.text).join(' '), complete: true });
    expect(heardText(segs, 9999).complete).toBe(true);
  });

  it('a cut exactly at a segment end keeps whole segments only', () => {
    expect(heardText(segs, 2000)).toEqual({ text: 'Our opening hours are nine to five.', complete: false });
  });

  it('a cut mid-sentence keeps the words whose (character-weighted) end was played', () => {
    // "On Saturdays we open at ten." = 6 words, weights 3+10+3+5+3+5 = 29 units over 1500 ms.
    // 750 ms → 14.5 units: "On"(3) + "Saturdays"(13) would be 13 ≤ 14.5, "we" would reach 16.
    expect(heardText(segs, 2750).text).toBe('Our opening hours are nine to five. On Saturdays');
    expect(heardText(segs, 2000 + (16 / 29) * 1500).text).toBe('Our opening hours are nine to five. On Saturdays we');
    expect(heardText(segs, 2001).text).toBe('Our opening hours are nine to five.');
  });

  it('zero-length segments and empty text do not break it', () => {
    expect(heardText([{ text: '', durationMs: 0 }, { text: 'Hello there', durationMs: 0 }], 0)).toEqual({ text: 'Hello there', complete: true });
    expect(heardText([], 100)).toEqual({ text: '', complete: true });
  });
});
