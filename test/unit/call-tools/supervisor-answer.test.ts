import { describe, expect, it } from 'vitest';
import { judgeSupervisorSpeech } from '../../../src/call/control/supervisor.ts';

describe('what a supervisor\'s words mean (warm transfer)', () => {
  it.each([
    ['Yes, put them through.', 'accept'],
    ['yeah sure', 'accept'],
    ['Okay, go ahead.', 'accept'],
    ["I'll take it", 'accept'],
    ['Connect them.', 'accept'],
    ['No problem, put her through', 'accept'],
    ["No, I can't right now.", 'decline'],
    ['Nope.', 'decline'],
    ["I'm busy", 'decline'],
    ['Not now, sorry', 'decline'],
    ["Don't put them through", 'unclear'],
    ['No, wait, yes', 'unclear'],
    ['Hmm, who is it?', 'unclear'],
    ['', 'unclear'],
  ] as const)('%s → %s', (text, meaning) => {
    expect(judgeSupervisorSpeech(text)).toBe(meaning);
  });

  it('our own question, heard back as an echo, decides nothing', () => {
    expect(judgeSupervisorSpeech('Say yes or press 1 to take the call. Say no or press 2 to decline.')).toBe('unclear');
  });
});
