// The VAD's silence gate: on a quiet line most windows never reach the model, and the speech the
// detector finds is the speech it finds with every window run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concatPcm, SAMPLE_RATE } from '../../../src/audio/frame.ts';
import { SileroVad, VAD_GATE_HANGOVER_WINDOWS } from '../../../src/audio/vad/silero.ts';
import type { SpeechEvent } from '../../../src/audio/vad/detector.ts';
import { energyOnsetMs, loadFixture, runVad, telephoneBand, toFrames } from './fixture-audio.ts';

let gated: SileroVad;
let ungated: SileroVad;
beforeAll(async () => {
  [gated, ungated] = await Promise.all([SileroVad.load(), SileroVad.load({ thread: 'inline', silenceGateDbfs: -Infinity })]);
});
afterAll(async () => {
  await Promise.all([gated.close(), ungated.close()]);
});

const segments = (events: SpeechEvent[]): [number, number][] =>
  events.flatMap((e) => (e.type === 'speech-end' ? [[e.startMs, e.endMs] as [number, number]] : []));

/** Line hiss (−68 dBFS) of `ms`, looped from the fixture. */
function roomTone(ms: number): Int16Array {
  const tone = loadFixture('silence-roomtone');
  const n = (ms * SAMPLE_RATE) / 1000;
  return Int16Array.from({ length: n }, (_, i) => tone[i % tone.length]!);
}

/** A caller who listens, asks, listens, answers, listens: speech at phone level on a quiet line. */
function conversation(first: string, second: string): Int16Array {
  return concatPcm([roomTone(1500), loadFixture(first), roomTone(2000), loadFixture(second), roomTone(1500)]);
}

describe('Silero silence gate', () => {
  const SPEECH = ['utt-opening-hours', 'utt-yes', 'utt-phone-number', 'bc-mm-hmm', 'utt-address', 'utt-no', 'utt-cancel', 'bc-okay'];
  const cases = SPEECH.flatMap((first, i) =>
    [600, 2000].flatMap((gapMs) => [false, true].map((narrowband) => ({ first, second: SPEECH[(i + 3) % SPEECH.length]!, gapMs, narrowband }))),
  );

  it('finds the speech it finds with every window run, onsets no later, and skips most of the quiet line', async () => {
    const late = { gated: [] as number[], everyWindow: [] as number[] };
    for (const { first, second, gapMs, narrowband } of cases) {
      const a = loadFixture(first);
      const b = loadFixture(second);
      const mixed = concatPcm([roomTone(1500), a, roomTone(gapMs), b, roomTone(1500)]);
      const pcm = narrowband ? telephoneBand(mixed) : mixed;
      const label = `${first} / ${second}, gap ${gapMs} ms${narrowband ? ', telephone band' : ''}`;
      const before = gated.stats;
      const withGate = await runVad(gated.createStream({ narrowband }), pcm);
      const skipped = gated.stats.skipped - before.skipped;
      const run = gated.stats.windows - before.windows;
      const everyWindow = await runVad(ungated.createStream({ narrowband }), pcm);

      // Both utterances, each within a few windows of where the model finds it running throughout.
      const g = segments(withGate.events);
      const u = segments(everyWindow.events);
      expect(g, label).toHaveLength(2);
      if (u.length === 2) {
        for (let k = 0; k < 2; k++) {
          expect(Math.abs(g[k]![0] - u[k]![0]), `${label}: start ${k}`).toBeLessThanOrEqual(100);
          expect(Math.abs(g[k]![1] - u[k]![1]), `${label}: end ${k}`).toBeLessThanOrEqual(100);
        }
      }
      const onsets = [1500 + energyOnsetMs(a), 1500 + a.length / 16 + gapMs + energyOnsetMs(b)];
      g.forEach(([start], k) => late.gated.push(start - onsets[k]!));
      u.forEach(([start], k) => late.everyWindow.push(start - onsets[k]!));

      // Every window was either run or skipped; most of the line hiss was skipped.
      expect(skipped + run, label).toBe(Math.floor((Math.ceil(pcm.length / 320) * 320) / 512));
      const quietMs = 3000 + gapMs + 1000; // the hiss plus the fixtures' own 500 ms lead-ins
      expect(skipped * 32, label).toBeGreaterThan(quietMs * 0.6);
      // While the caller speaks every window runs: the probabilities there are the model's.
      const speaking = withGate.probabilities.filter((p) => p > 0.5).length;
      expect(speaking, label).toBeGreaterThan(10);
    }
    // The state kept across a skipped stretch is the one the last quiet window left, which makes
    // the model no slower to notice the next utterance than after running through the silence.
    const mean = (xs: number[]): number => xs.reduce((x, y) => x + y, 0) / xs.length;
    expect(late.gated.length).toBe(cases.length * 2);
    expect(mean(late.gated)).toBeLessThanOrEqual(mean(late.everyWindow));
    expect(Math.max(...late.gated)).toBeLessThan(150);
  });

  it('calls a quiet line silence after the hangover, and runs the first loud window at once', async () => {
    const stream = gated.createStream({ narrowband: true });
    const before = gated.stats;
    for (const f of toFrames(roomTone(1000))) expect(await stream.push(f)).toBeLessThan(0.2);
    expect(gated.stats.skipped - before.skipped).toBe(stream.windows - VAD_GATE_HANGOVER_WINDOWS);
    expect(stream.probability).toBe(0);

    // Loud from the first sample: the first window it completes runs.
    const speech = toFrames(telephoneBand(loadFixture('utt-yes')).subarray(8000 + 1600));
    let decided = stream.windows;
    let { windows: ran, skipped } = gated.stats;
    let heard = 0;
    for (const [i, f] of speech.entries()) {
      heard = Math.max(heard, await stream.push(f));
      if (stream.windows > decided && i < 10) {
        expect(gated.stats.windows - ran).toBe(stream.windows - decided);
        expect(gated.stats.skipped).toBe(skipped);
      }
      decided = stream.windows;
      ({ windows: ran, skipped } = gated.stats);
    }
    expect(heard).toBeGreaterThan(0.9);
  });

  it('runs every window when the gate is off', async () => {
    const stream = ungated.createStream();
    const before = ungated.stats;
    for (const f of toFrames(new Int16Array(SAMPLE_RATE))) await stream.push(f);
    expect(ungated.stats.skipped - before.skipped).toBe(0);
    expect(ungated.stats.windows - before.windows).toBe(stream.windows);
  });
});

describe('SileroStream.quiet', () => {
  it('says silence cannot wake the VAD only once the gate is closed and the window being filled is quiet too', async () => {
    const stream = gated.createStream();
    const zeros = { samples: new Int16Array(320), sampleRate: SAMPLE_RATE };
    expect(stream.quiet).toBe(false);
    for (let i = 0; i < 20; i++) await stream.push(zeros);
    // 6,400 samples: 12 windows and 256 samples of the next; the gate closed after 8 quiet windows.
    expect(stream.quiet).toBe(true);
    // A loud 5 ms in the window being filled: the zeros after it would complete a window that runs.
    const loud = Int16Array.from({ length: 80 }, (_, i) => (i % 2 ? 8000 : -8000));
    await stream.push({ samples: loud, sampleRate: SAMPLE_RATE });
    expect(stream.quiet).toBe(false);
    const before = gated.stats.windows;
    await stream.push(zeros);
    expect(gated.stats.windows).toBe(before + 1);
  });
});
