import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/util/clock.ts';
import { CallRules, callRulesOptions, type CallRuleAction, type CallRulesStep } from '../../../src/call/rules.ts';

/** Drives a core like a CallSession would: one timer at the latest wakeAtMs, actions collected. */
function harness(rules: CallRules, clock = new ManualClock(0)) {
  const log: CallRuleAction[] = [];
  let timer: { cancel(): void } | undefined;
  const apply = (s: CallRulesStep): CallRulesStep => {
    log.push(...s.actions);
    timer?.cancel();
    timer = undefined;
    if (s.wakeAtMs !== undefined) timer = clock.setTimeout(() => apply(rules.tick(clock.now())), s.wakeAtMs - clock.now());
    return s;
  };
  return { clock, log, apply, at: (ms: number) => clock.advance(ms - clock.now()) };
}

describe('callRulesOptions', () => {
  it('converts the spec’s seconds and defaults to ms', () => {
    expect(callRulesOptions({})).toEqual({ maxDurationMs: 600_000, maxSilenceMs: 40_000, reengagementIntervalMs: 30_000, ringingTimeMs: 30_000 });
    expect(callRulesOptions({ max_initial_silence_duration: 10, reengagement_prompt: 'Still there?', max_duration: 20 })).toMatchObject({
      maxInitialSilenceMs: 10_000,
      reengagementPrompt: 'Still there?',
      maxDurationMs: 20_000,
    });
    expect(callRulesOptions({ max_initial_silence_duration: null, reengagement_prompt: null })).not.toHaveProperty('maxInitialSilenceMs');
  });
});

describe('CallRules: max_silence_duration and reengagement_interval', () => {
  it('re-engages at exactly 40 000 ms of silence, then every 30 000 ms', () => {
    const r = new CallRules({ reengagementPrompt: 'Ask if they are still there' });
    expect(r.answered(0).wakeAtMs).toBe(40_000);
    expect(r.tick(39_999).actions).toEqual([]);
    const s = r.tick(40_000);
    expect(s.actions).toEqual([{ type: 'reengage', atMs: 40_000, prompt: 'Ask if they are still there', count: 1 }]);
    expect(s.wakeAtMs).toBe(70_000);
    expect(r.tick(69_999).actions).toEqual([]);
    expect(r.tick(70_000).actions).toEqual([{ type: 'reengage', atMs: 70_000, prompt: 'Ask if they are still there', count: 2 }]);
    expect(r.tick(100_000).actions[0]).toMatchObject({ count: 3 });
  });

  it('counts silence from the later of the caller’s speech end and the assistant’s audio end', () => {
    const r = new CallRules();
    r.answered(0);
    r.assistantAudioStart(0);
    r.callerSpeechStart(1_000); // talking over the greeting
    r.assistantAudioEnd(3_000);
    expect(r.callerSpeechEnd(5_000).wakeAtMs).toBe(45_000);
    r.assistantAudioStart(6_000);
    expect(r.assistantAudioEnd(10_000).wakeAtMs).toBe(50_000);
    expect(r.tick(49_999).actions).toEqual([]);
    expect(r.tick(50_000).actions[0]).toMatchObject({ type: 'reengage', count: 1 });
  });

  it('the next interval counts from the end of the re-engagement’s own audio', () => {
    const r = new CallRules();
    r.answered(0);
    r.tick(40_000);
    r.assistantAudioStart(40_100);
    expect(r.tick(70_000).actions).toEqual([]); // assistant still speaking: silence paused
    expect(r.assistantAudioEnd(43_000).wakeAtMs).toBe(73_000);
    expect(r.tick(72_999).actions).toEqual([]);
    expect(r.tick(73_000).actions[0]).toMatchObject({ type: 'reengage', count: 2 });
  });

  it('caller speech resets the cycle back to max_silence_duration', () => {
    const r = new CallRules();
    r.answered(0);
    r.tick(40_000);
    r.callerSpeechStart(45_000);
    expect(r.tick(200_000).actions).toEqual([]); // speaking pauses the count
    expect(r.callerSpeechEnd(200_000).wakeAtMs).toBe(240_000);
    expect(r.tick(240_000).actions[0]).toMatchObject({ type: 'reengage', count: 1 });
  });

  it('without a prompt the action still fires (prompt undefined)', () => {
    const r = new CallRules({ maxSilenceMs: 1000 });
    r.answered(0);
    expect(r.tick(1000).actions).toEqual([{ type: 'reengage', atMs: 1000, prompt: undefined, count: 1 }]);
  });
});

describe('CallRules: max_initial_silence_duration', () => {
  it('ends the call at exactly the limit when the caller never spoke', () => {
    const r = new CallRules({ maxInitialSilenceMs: 10_000 });
    expect(r.answered(0).wakeAtMs).toBe(10_000);
    expect(r.tick(9_999).actions).toEqual([]);
    expect(r.tick(10_000)).toEqual({ actions: [{ type: 'end-call', atMs: 10_000, reason: 'initial-silence' }] });
    expect(r.ended).toBe(true);
    expect(r.tick(60_000)).toEqual({ actions: [] });
  });

  it('counts from call start even while the greeting plays', () => {
    const r = new CallRules({ maxInitialSilenceMs: 10_000 });
    r.answered(0);
    r.assistantAudioStart(100);
    expect(r.tick(10_000).actions[0]).toMatchObject({ type: 'end-call' });
  });

  it('never fires once the caller has spoken', () => {
    const r = new CallRules({ maxInitialSilenceMs: 10_000 });
    r.answered(0);
    r.callerSpeechStart(9_999);
    r.callerSpeechEnd(10_500);
    expect(r.tick(10_000).actions).toEqual([]);
    expect(r.tick(50_499).actions).toEqual([]);
    expect(r.tick(50_500).actions[0]).toMatchObject({ type: 'reengage' });
  });

  it('is off when unset: the call just re-engages', () => {
    const r = new CallRules();
    r.answered(0);
    expect(r.tick(40_000).actions[0]).toMatchObject({ type: 'reengage' });
  });

  it('re-engagement before the initial-silence limit, then the hang-up', () => {
    const r = new CallRules({ maxSilenceMs: 20_000, maxInitialSilenceMs: 30_000 });
    r.answered(0);
    expect(r.tick(20_000).actions[0]).toMatchObject({ type: 'reengage' });
    expect(r.tick(30_000).actions).toEqual([{ type: 'end-call', atMs: 30_000, reason: 'initial-silence' }]);
  });
});

describe('CallRules: max_duration', () => {
  it('says goodbye at exactly max_duration, then hangs up at the deadline', () => {
    const r = new CallRules({ maxDurationMs: 600_000, goodbyeGraceMs: 10_000 });
    r.answered(1_000);
    r.callerSpeechStart(2_000);
    expect(r.tick(600_999).actions).toEqual([]);
    const s = r.tick(601_000);
    expect(s).toEqual({ actions: [{ type: 'say-goodbye', atMs: 601_000, reason: 'max-duration', hangUpByMs: 611_000 }], wakeAtMs: 611_000 });
    expect(r.tick(610_999).actions).toEqual([]);
    expect(r.tick(611_000).actions).toEqual([{ type: 'hang-up', atMs: 611_000, reason: 'max-duration' }]);
    expect(r.ended).toBe(true);
  });

  it('hangs up as soon as the goodbye has played', () => {
    const r = new CallRules({ maxDurationMs: 20_000 });
    r.answered(0);
    r.callerSpeechStart(100);
    r.tick(20_000);
    expect(r.goodbyeFinished(22_000).actions).toEqual([{ type: 'hang-up', atMs: 22_000, reason: 'max-duration' }]);
    expect(r.tick(30_000).actions).toEqual([]);
  });

  it('no re-engagement once the goodbye started', () => {
    const r = new CallRules({ maxDurationMs: 40_000, goodbyeGraceMs: 10_000 });
    r.answered(0);
    expect(r.tick(40_000).actions.map((a) => a.type)).toEqual(['say-goodbye']);
    expect(r.tick(45_000).actions).toEqual([]);
  });

  it('goodbyeFinished without a goodbye does nothing', () => {
    const r = new CallRules();
    r.answered(0);
    expect(r.goodbyeFinished(1000).actions).toEqual([]);
  });
});

describe('CallRules: ringing_time (outbound)', () => {
  it('no-answer at exactly the ringing time', () => {
    const r = new CallRules({ ringingTimeMs: 30_000 });
    expect(r.dialing(5_000).wakeAtMs).toBe(35_000);
    expect(r.tick(34_999).actions).toEqual([]);
    expect(r.tick(35_000)).toEqual({ actions: [{ type: 'no-answer', atMs: 35_000 }] });
    expect(r.answered(36_000).actions).toEqual([]);
  });

  it('answering cancels it and starts the in-call rules from the answer', () => {
    const r = new CallRules({ ringingTimeMs: 30_000 });
    r.dialing(0);
    expect(r.answered(34_999).wakeAtMs).toBe(74_999);
    expect(r.tick(35_000).actions).toEqual([]);
    expect(r.tick(74_999).actions[0]).toMatchObject({ type: 'reengage' });
  });

  it('does nothing before dialing or answer', () => {
    const r = new CallRules();
    expect(r.tick(1_000_000)).toEqual({ actions: [] });
  });
});

describe('CallRules: end()', () => {
  it('silences every rule', () => {
    const r = new CallRules({ maxInitialSilenceMs: 5000 });
    r.answered(0);
    r.end();
    expect(r.tick(1_000_000)).toEqual({ actions: [] });
  });
});

describe('CallRules on a ManualClock (a 20-minute call in milliseconds)', () => {
  it('drives re-engagements and the max-duration goodbye from wakeAtMs alone', () => {
    const rules = new CallRules({ maxDurationMs: 1_200_000, maxSilenceMs: 40_000, reengagementIntervalMs: 30_000 });
    const h = harness(rules);
    h.apply(rules.answered(0));
    h.apply(rules.callerSpeechStart(2_000));
    h.apply(rules.callerSpeechEnd(5_000));
    h.at(1_300_000);
    const reengages = h.log.filter((a) => a.type === 'reengage').map((a) => a.atMs);
    expect(reengages[0]).toBe(45_000);
    expect(reengages[1]).toBe(75_000);
    expect(reengages.at(-1)).toBe(1_185_000);
    expect(reengages).toHaveLength(39);
    expect(h.log.filter((a) => a.type !== 'reengage')).toEqual([
      { type: 'say-goodbye', atMs: 1_200_000, reason: 'max-duration', hangUpByMs: 1_210_000 },
      { type: 'hang-up', atMs: 1_210_000, reason: 'max-duration' },
    ]);
    expect(h.clock.pendingCount).toBe(0);
  });
});
