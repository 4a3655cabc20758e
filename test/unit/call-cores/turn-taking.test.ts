import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';
import {
  TurnTaking,
  aiWaitMs,
  classifyWithDeadline,
  endpointSilenceMs,
  heuristicEndOfTurn,
  type EndOfTurnClassifier,
} from '../../../src/call/turn-taking.ts';

describe('endpointSilenceMs (endpoint_sensitivity mapping)', () => {
  it.each([
    [0, 1200],
    [0.25, 950],
    [0.5, 700],
    [1, 600],
    [2, 450],
    [3, 330],
    [4, 250],
    [5, 200],
  ])('%s → %s ms', (s, ms) => expect(endpointSilenceMs(s)).toBe(ms));

  it('is monotonic decreasing across the range', () => {
    let prev = Infinity;
    for (let s = 0; s <= 5; s += 0.05) {
      const ms = endpointSilenceMs(s);
      expect(ms).toBeLessThanOrEqual(prev);
      prev = ms;
    }
  });

  it('clamps out-of-range values and treats NaN as the default', () => {
    expect(endpointSilenceMs(-3)).toBe(1200);
    expect(endpointSilenceMs(9)).toBe(200);
    expect(endpointSilenceMs(Number.NaN)).toBe(700);
  });
});

describe('TurnTaking, endpoint_type vad', () => {
  it('ends the turn exactly at silence start + the sensitivity wait, not a ms earlier', () => {
    const t = new TurnTaking({ endpointSensitivity: 0.5 });
    t.speechStart(1000);
    t.transcriptUpdate('what are your opening hours', true, 2100);
    // VAD: silence began at 2000, confirmed 300 ms later.
    const s = t.speechEnd(2000, 2300);
    expect(s.decision).toBeUndefined();
    expect(s.wakeAtMs).toBe(2700);
    expect(t.tick(2699).decision).toBeUndefined();
    const d = t.tick(2700).decision;
    expect(d).toEqual({ type: 'end-of-turn', atMs: 2700, waitedMs: 700, reason: 'silence', transcript: 'what are your opening hours' });
  });

  it('decides on the speech-end itself when the VAD already waited longer than required', () => {
    const t = new TurnTaking({ endpointSensitivity: 5 });
    t.speechStart(0);
    const s = t.speechEnd(1000, 1300);
    expect(s.decision?.atMs).toBe(1300);
    expect(s.decision?.waitedMs).toBe(300);
  });

  it('speech resuming before the decision cancels it (the caller only paused)', () => {
    const t = new TurnTaking({ endpointSensitivity: 0 });
    t.speechStart(0);
    t.transcriptUpdate('I would like', true, 900);
    expect(t.speechEnd(1000, 1300).wakeAtMs).toBe(2200);
    t.speechStart(2100);
    expect(t.tick(2200).decision).toBeUndefined();
    t.transcriptUpdate('to book a table', true, 2900);
    expect(t.speechEnd(3000, 3300).wakeAtMs).toBe(4200);
    const d = t.tick(4200).decision!;
    expect(d.transcript).toBe('I would like to book a table');
    expect(d.waitedMs).toBe(1200);
  });

  it('uses interim text in the transcript and resets after each decision', () => {
    const t = new TurnTaking();
    t.speechStart(0);
    t.transcriptUpdate('hello th', false, 300);
    t.transcriptUpdate('hello there', false, 500);
    expect(t.transcript).toBe('hello there');
    t.speechEnd(600, 900);
    expect(t.tick(1300).decision?.transcript).toBe('hello there');
    expect(t.transcript).toBe('');
    expect(t.tick(5000)).toEqual({});
  });

  it('speech over the assistant that is never taken as an interruption is not a turn', () => {
    const t = new TurnTaking();
    t.assistantStarted(0);
    t.speechStart(500);
    t.transcriptUpdate('mm-hmm', true, 900);
    expect(t.speechEnd(800, 1100)).toEqual({});
    expect(t.assistantStopped(3000, false)).toEqual({});
    expect(t.tick(10_000)).toEqual({});
    expect(t.transcript).toBe('');
  });

  it('a committed interruption makes the overlapping speech the caller’s turn', () => {
    const t = new TurnTaking();
    t.assistantStarted(0);
    t.speechStart(500);
    t.assistantStopped(800, true); // caller still talking
    t.transcriptUpdate('wait, that is wrong', true, 1500);
    const s = t.speechEnd(1400, 1700);
    expect(s.wakeAtMs).toBe(2100);
    expect(t.tick(2100).decision?.transcript).toBe('wait, that is wrong');
  });

  it('an interruption committed after the speech ended counts the silence from the speech end', () => {
    const t = new TurnTaking();
    t.assistantStarted(0);
    t.speechStart(500);
    t.speechEnd(1000, 1300);
    t.transcriptUpdate('stop please', true, 1350);
    const s = t.assistantStopped(1400, true);
    expect(s.wakeAtMs).toBe(1700);
    expect(t.tick(1700).decision?.waitedMs).toBe(700);
  });

  it('the caller still speaking when the assistant finishes naturally is taking a turn', () => {
    const t = new TurnTaking();
    t.assistantStarted(0);
    t.speechStart(900);
    t.assistantStopped(1000, false);
    expect(t.speechEnd(2000, 2300).wakeAtMs).toBe(2700);
  });
});

describe('heuristicEndOfTurn', () => {
  it.each([
    ['', 'empty'],
    ['What time do you open?', 'question'],
    ['I need to cancel my appointment.', 'complete'],
    ['I need to cancel my appointment', 'neutral'],
    ['I want to book a table and', 'unfinished'],
    ['I was thinking about, um', 'unfinished'],
    ['Let me see,', 'unfinished'],
    ['I would like to go to the', 'unfinished'],
    ['So I was wondering...', 'unfinished'],
    ['My name is', 'unfinished'],
    ['Yes, it is.', 'complete'],
    ['What time is it?', 'question'],
    ['Can I pay with that?', 'question'],
    ['My name is.', 'complete'],
    ['I want to.', 'unfinished'],
    ['My number is 0 7 7 0 0', 'digits'],
    ['it is oh seven seven double oh', 'digits'],
    ['my card is 4242 4242', 'digits'],
    ['my number is 07700 900 123', 'neutral'], // 11 digits: a complete UK number
    ['I live at 42', 'address'],
    ['my address is 42 Baker', 'address'],
    ['I live at 42 Baker Street', 'neutral'],
    ['a table for 2', 'neutral'],
    ['the meeting is at 3', 'neutral'],
  ])('%j → %s', (text, hint) => expect(heuristicEndOfTurn(text).hint).toBe(hint));

  it('orders probabilities: digits < unfinished < address < neutral < complete < question', () => {
    const p = (s: string): number => heuristicEndOfTurn(s).probability;
    expect(p('1 2 3')).toBeLessThan(p('and'));
    expect(p('and')).toBeLessThan(p('I live at 4'));
    expect(p('I live at 4')).toBeLessThan(p('yes'));
    expect(p('yes')).toBeLessThan(p('yes.'));
    expect(p('yes.')).toBeLessThan(p('yes?'));
  });
});

describe('aiWaitMs', () => {
  it('maps probability to a wait: 1 → half the base, 0.5 → base, 0 → the ceiling', () => {
    expect(aiWaitMs(1, 700, 3000)).toBe(350);
    expect(aiWaitMs(0.5, 700, 3000)).toBe(700);
    expect(aiWaitMs(0, 700, 3000)).toBe(3000);
    expect(aiWaitMs(0.25, 700, 3000)).toBe(1850);
    expect(aiWaitMs(Number.NaN, 700, 3000)).toBe(700);
    expect(aiWaitMs(7, 700, 3000)).toBe(350);
  });
});

describe('TurnTaking, endpoint_type ai', () => {
  const ai = (extra = {}): TurnTaking => new TurnTaking({ endpointType: 'ai', endpointSensitivity: 0.5, ...extra });

  it('a finished question ends sooner than plain VAD', () => {
    const t = ai();
    t.speechStart(0);
    t.transcriptUpdate('What are your opening hours?', true, 1100);
    const s = t.speechEnd(1000, 1300);
    // p = 0.95 → 700 × 0.55 = 385 ms
    expect(s.wakeAtMs).toBe(1385);
    expect(t.tick(1384).decision).toBeUndefined();
    expect(t.tick(1385).decision).toMatchObject({ reason: 'heuristic', waitedMs: 385, hint: 'question', probability: 0.95 });
  });

  it('waits longer on digits being dictated, then decides at the heuristic time', () => {
    const t = ai();
    t.speechStart(0);
    t.transcriptUpdate('my number is 0 7 7 0 0', true, 1100);
    const s = t.speechEnd(1000, 1300);
    // p = 0.1 → 700 + 0.8 × 2300 = 2540 ms
    expect(s.wakeAtMs).toBe(3540);
    expect(t.tick(3539).decision).toBeUndefined();
    expect(t.tick(3540).decision).toMatchObject({ reason: 'heuristic', hint: 'digits', waitedMs: 2540 });
  });

  it('the caller continuing the number cancels the wait; the transcript accumulates', () => {
    const t = ai();
    t.speechStart(0);
    t.transcriptUpdate('my number is 0 7 7 0 0', true, 1100);
    t.speechEnd(1000, 1300);
    t.speechStart(2500);
    expect(t.tick(3540).decision).toBeUndefined();
    t.transcriptUpdate('9 0 0 1 2 3', true, 3600);
    const s = t.speechEnd(3500, 3800);
    // 11 digits now: a complete number, no punctuation → neutral 0.6 → 630 ms
    expect(s.wakeAtMs).toBe(4130);
    expect(t.tick(4130).decision?.transcript).toBe('my number is 0 7 7 0 0 9 0 0 1 2 3');
  });

  it('scales the long waits to the configured ceiling', () => {
    const t = ai({ ceilingMs: 2000 });
    t.speechStart(0);
    t.transcriptUpdate('1 2 3', true, 100);
    expect(t.speechEnd(1000, 1300).wakeAtMs).toBe(1000 + 700 + 0.8 * 1300);
  });

  it('never waits past the ceiling, even for a classifier that has not answered', () => {
    const t = ai({ ceilingMs: 2000, useClassifier: true, classifierDeadlineMs: 5000 });
    t.speechStart(0);
    t.transcriptUpdate('and', true, 100);
    const s = t.speechEnd(1000, 1300);
    expect(s.wakeAtMs).toBe(3000);
    expect(t.tick(2999).decision).toBeUndefined();
    expect(t.tick(3000).decision).toMatchObject({ reason: 'ceiling', waitedMs: 2000 });
  });

  it('a classifier saying "not finished" (p = 0) waits exactly to the ceiling', () => {
    const t = ai({ useClassifier: true });
    t.speechStart(0);
    t.transcriptUpdate('I was going to say', true, 100);
    t.speechEnd(1000, 1300);
    expect(t.classification(1, 0, 1400).wakeAtMs).toBe(4000);
    expect(t.tick(4000).decision).toMatchObject({ reason: 'ceiling', waitedMs: 3000 });
  });

  it('a later final that completes the sentence shortens the pending wait', () => {
    const t = ai();
    t.speechStart(0);
    t.transcriptUpdate('I want to', false, 900);
    expect(t.speechEnd(1000, 1300).wakeAtMs).toBe(1000 + aiWaitMs(0.15, 700, 3000));
    const s = t.transcriptUpdate('I want to cancel.', true, 1400);
    expect(s.wakeAtMs).toBe(1455); // p = 0.85 → 455 ms
    expect(t.tick(1455).decision).toMatchObject({ atMs: 1455, hint: 'complete', waitedMs: 455 });
  });

  describe('with an external classifier', () => {
    it('asks for a classification on speech end and holds until its answer', () => {
      const t = ai({ useClassifier: true, classifierDeadlineMs: 300 });
      t.speechStart(0);
      t.transcriptUpdate('I need help with my order', true, 1100);
      const s = t.speechEnd(1000, 1300);
      expect(s.classify).toEqual({ type: 'classify', id: 1, transcript: 'I need help with my order', deadlineAtMs: 1600 });
      expect(s.wakeAtMs).toBe(1630); // heuristic 630 ms after 1000
      const r = t.classification(1, 0.1, 1450);
      expect(r.decision).toBeUndefined();
      expect(r.wakeAtMs).toBe(3540);
      expect(t.tick(3540).decision).toMatchObject({ reason: 'classifier', probability: 0.1, waitedMs: 2540 });
    });

    it('a confident classifier answer ends the turn at once when its wait has passed', () => {
      const t = ai({ useClassifier: true, classifierDeadlineMs: 300 });
      t.speechStart(0);
      t.transcriptUpdate('thanks, that is all', true, 1100);
      t.speechEnd(1000, 1300);
      expect(t.tick(1340).decision).toBeUndefined(); // waiting for the classifier
      expect(t.classification(1, 1, 1400).decision).toMatchObject({ atMs: 1400, reason: 'classifier', waitedMs: 400 });
    });

    it('falls back to the heuristic at the deadline and ignores a late answer', () => {
      const t = ai({ useClassifier: true, classifierDeadlineMs: 300 });
      t.speechStart(0);
      t.transcriptUpdate('What time is it?', true, 1100);
      const s = t.speechEnd(1000, 1300);
      // Heuristic alone would decide at 1385, but the classifier may answer until 1600.
      expect(s.wakeAtMs).toBe(1600);
      expect(t.tick(1599).decision).toBeUndefined();
      expect(t.tick(1600).decision).toMatchObject({ reason: 'heuristic', atMs: 1600 });
      expect(t.classification(1, 0, 1700)).toEqual({});
    });

    it('ignores an answer for a stale request after speech resumed', () => {
      const t = ai({ useClassifier: true });
      t.speechStart(0);
      t.transcriptUpdate('so', true, 100);
      t.speechEnd(1000, 1300);
      t.speechStart(1400);
      expect(t.classification(1, 1, 1450)).toEqual({});
      t.transcriptUpdate('yes.', true, 1700);
      const s = t.speechEnd(1600, 1900);
      expect(s.classify?.id).toBe(2);
    });

    it('does not ask about an empty transcript', () => {
      const t = ai({ useClassifier: true });
      t.speechStart(0);
      const s = t.speechEnd(1000, 1300);
      expect(s.classify).toBeUndefined();
      expect(t.tick(1700).decision).toMatchObject({ hint: 'empty', reason: 'heuristic' });
    });
  });
});

describe('classifyWithDeadline', () => {
  const slow = (ms: number, p: number, clock: ManualClock): EndOfTurnClassifier => ({
    label: 'slow',
    classify: (_t, signal) =>
      new Promise((resolve, reject) => {
        const timer = clock.setTimeout(() => resolve(p), ms);
        signal.addEventListener('abort', () => {
          timer.cancel();
          reject(new Error('aborted'));
        });
      }),
  });

  it('returns the answer when it comes in time', async () => {
    const clock = new ManualClock(0);
    const p = classifyWithDeadline(slow(100, 0.8, clock), 'hi', 300, (fn, ms) => clock.setTimeout(fn, ms));
    clock.advance(100);
    await expect(p).resolves.toBe(0.8);
    expect(clock.pendingCount).toBe(0);
  });

  it('aborts the classifier and resolves undefined at the deadline', async () => {
    const clock = new ManualClock(0);
    const p = classifyWithDeadline(slow(500, 0.8, clock), 'hi', 300, (fn, ms) => clock.setTimeout(fn, ms));
    clock.advance(300);
    await expect(p).resolves.toBeUndefined();
    expect(clock.pendingCount).toBe(0);
  });

  it('a throwing classifier resolves undefined and a wild value is clamped', async () => {
    const clock = new ManualClock(0);
    const failing: EndOfTurnClassifier = { label: 'x', classify: () => Promise.reject(new Error('boom')) };
    await expect(classifyWithDeadline(failing, 'hi', 300, (fn, ms) => clock.setTimeout(fn, ms))).resolves.toBeUndefined();
    const wild: EndOfTurnClassifier = { label: 'x', classify: () => Promise.resolve(3) };
    await expect(classifyWithDeadline(wild, 'hi', 300, (fn, ms) => clock.setTimeout(fn, ms))).resolves.toBe(1);
  });
});
