import { describe, expect, it } from 'vitest';
import { SpeechDetector, type SpeechDetectorOptions, type SpeechEvent } from '../../../src/audio/vad/detector.ts';

/** Run a probability sequence (one per 20 ms frame, from t=0) and collect all events. */
function run(probs: number[], options?: SpeechDetectorOptions, flush = false): SpeechEvent[] {
  const d = new SpeechDetector(options);
  const events = probs.flatMap((p, i) => d.push(p, i * 20));
  return flush ? [...events, ...d.flush()] : events;
}
const rep = (p: number, n: number): number[] => Array<number>(n).fill(p);

describe('SpeechDetector', () => {
  it('emits nothing for silence', () => {
    expect(run(rep(0.1, 200))).toEqual([]);
  });

  it('reports a clean segment with onset, pre-roll and decision times', () => {
    // Speech on frames 10..29 (200..600 ms), then silence.
    const events = run([...rep(0.05, 10), ...rep(0.9, 20), ...rep(0.05, 30)]);
    expect(events).toEqual([
      { type: 'speech-start', startMs: 200, paddedStartMs: 0, detectedAtMs: 260 },
      { type: 'speech-end', startMs: 200, endMs: 600, detectedAtMs: 900 },
    ]);
  });

  it('clamps the padded start at 0 and otherwise subtracts the pre-roll', () => {
    const late = run([...rep(0, 25), ...rep(0.9, 5)]);
    expect(late[0]).toMatchObject({ startMs: 500, paddedStartMs: 300 });
    const early = run([...rep(0.9, 5)], { preRollMs: 200 });
    expect(early[0]).toMatchObject({ startMs: 0, paddedStartMs: 0 });
  });

  it('ignores a blip shorter than minSpeechMs', () => {
    expect(run([...rep(0, 5), 0.95, ...rep(0, 20)])).toEqual([]);
    expect(run([...rep(0, 5), 0.95, 0.95, ...rep(0, 20)], { minSpeechMs: 100 })).toEqual([]);
  });

  it('confirms on the first frame when minSpeechMs is one frame or less', () => {
    expect(run([0, 0.8], { minSpeechMs: 20 })).toEqual([{ type: 'speech-start', startMs: 20, paddedStartMs: 0, detectedAtMs: 40 }]);
  });

  it('keeps an onset alive through values between the thresholds', () => {
    // 0.6 then 0.4, 0.4: still >= endThreshold, so the onset confirms after 60 ms.
    const events = run([0, 0.6, 0.4, 0.4, 0.4]);
    expect(events).toEqual([{ type: 'speech-start', startMs: 20, paddedStartMs: 0, detectedAtMs: 80 }]);
  });

  it('never starts on values between the thresholds alone (hysteresis)', () => {
    expect(run(rep(0.45, 100))).toEqual([]);
  });

  it('does not end speech on values between the thresholds', () => {
    const events = run([...rep(0.9, 5), ...rep(0.4, 50)]);
    expect(events.map((e) => e.type)).toEqual(['speech-start']);
  });

  it('bridges a pause shorter than minSilenceMs into one segment', () => {
    const events = run([...rep(0.9, 10), ...rep(0.1, 14), ...rep(0.9, 10), ...rep(0.1, 20)]);
    expect(events).toEqual([
      { type: 'speech-start', startMs: 0, paddedStartMs: 0, detectedAtMs: 60 },
      { type: 'speech-end', startMs: 0, endMs: 680, detectedAtMs: 980 },
    ]);
  });

  it('needs a frame over startThreshold to resume: mid values during a pause still count as silence', () => {
    // 0.4 is not speech enough to cancel the pause once it began.
    const events = run([...rep(0.9, 10), ...rep(0.1, 5), ...rep(0.4, 10), ...rep(0.1, 10)]);
    expect(events[1]).toEqual({ type: 'speech-end', startMs: 0, endMs: 200, detectedAtMs: 500 });
  });

  it('splits at a pause of exactly minSilenceMs', () => {
    const events = run([...rep(0.9, 10), ...rep(0.1, 15), ...rep(0.9, 10)]);
    expect(events.map((e) => [e.type, e.startMs])).toEqual([
      ['speech-start', 0],
      ['speech-end', 0],
      ['speech-start', 500],
    ]);
  });

  it('honours custom thresholds and silence length', () => {
    const opts = { startThreshold: 0.7, endThreshold: 0.2, minSilenceMs: 100 };
    expect(run(rep(0.6, 20), opts)).toEqual([]);
    const events = run([...rep(0.8, 5), ...rep(0.3, 10), ...rep(0.1, 5)], opts);
    expect(events.map((e) => e.type)).toEqual(['speech-start', 'speech-end']);
    expect(events[1]).toMatchObject({ endMs: 300, detectedAtMs: 400 });
  });

  it('uses the frame times it is given, not a count of frames', () => {
    const d = new SpeechDetector();
    const events = [0.9, 0.9, 0.9].flatMap((p, i) => d.push(p, 10_000 + i * 20));
    expect(events).toEqual([{ type: 'speech-start', startMs: 10_000, paddedStartMs: 9_800, detectedAtMs: 10_060 }]);
  });

  it('flush() closes an open segment and drops an unconfirmed onset', () => {
    expect(run(rep(0.9, 10), {}, true).map((e) => e.type)).toEqual(['speech-start', 'speech-end']);
    expect(run(rep(0.9, 10), {}, true)[1]).toMatchObject({ endMs: 200, detectedAtMs: 200 });
    expect(run([...rep(0.9, 10), ...rep(0.1, 3)], {}, true)[1]).toMatchObject({ endMs: 200, detectedAtMs: 260 });
    expect(run([0, 0.9], {}, true)).toEqual([]);
  });

  it('tracks speaking and resets', () => {
    const d = new SpeechDetector();
    for (let i = 0; i < 5; i++) d.push(0.9, i * 20);
    expect(d.speaking).toBe(true);
    d.reset();
    expect(d.speaking).toBe(false);
    expect(d.push(0.1, 0)).toEqual([]);
  });

  it('rejects inconsistent options', () => {
    expect(() => new SpeechDetector({ startThreshold: 0.3, endThreshold: 0.5 })).toThrow(RangeError);
    expect(() => new SpeechDetector({ frameMs: 0 })).toThrow(RangeError);
  });
});
