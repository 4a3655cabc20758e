// Narrowband streams (G.711 calls): Silero's 8 kHz mode, given 8 kHz frames or 16 kHz ones. They find
// the speech a wideband stream finds on the same telephone-band audio, keep the window timeline,
// and share batches with wideband streams (one run per rate) without changing anyone's results.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copySamples, type AudioFrame } from '../../../src/audio/frame.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import type { PassThroughFrame } from '../../../src/media/media-types.ts';
import { Resampler } from '../../../src/audio/resample.ts';
import { NarrowbandFrame } from '../../../src/audio/narrowband-frame.ts';
import { SileroVad, SILERO_WINDOW_SAMPLES } from '../../../src/audio/vad/silero.ts';
import type { SpeechEvent } from '../../../src/audio/vad/detector.ts';
import { alone, callAudio, expectClose, together, type Narrowband } from './batch-audio.ts';
import { loadFixture, runVad, telephoneBand, toFrames } from './fixture-audio.ts';

const SPEECH = [
  'utt-opening-hours',
  'utt-book-table',
  'utt-phone-number',
  'utt-address',
  'utt-cancel',
  'utt-yes',
  'utt-no',
  'bc-mm-hmm',
  'bc-okay',
  'bc-uh-huh',
  'bc-yeah',
  'utt-opening-hours-street',
  'voicemail-greeting-beep',
  'noise-babble',
];
const NON_SPEECH = ['silence', 'silence-roomtone', 'noise-street', 'impulse-cough'];
/** A window or two: 32 ms each. */
const SEGMENT_TOLERANCE_MS = 64;

let vad: SileroVad;
beforeAll(async () => {
  vad = await SileroVad.load();
});
afterAll(async () => {
  await vad.close();
});

/** [start, end] of every closed segment. */
const segments = (events: SpeechEvent[]): [number, number][] =>
  events.flatMap((e) => (e.type === 'speech-end' ? [[e.startMs, e.endMs] as [number, number]] : []));

/** Every other call narrowband. */
const alternate: Narrowband = (k) => k % 2 === 1;

describe('narrowband stream on telephone-band fixtures', () => {
  for (const name of SPEECH) {
    it(`finds the speech segments of ${name} a wideband stream finds, within two windows`, async () => {
      const pcm = telephoneBand(loadFixture(name));
      const wide = segments((await runVad(vad.createStream(), pcm)).events);
      const narrow = segments((await runVad(vad.createStream({ narrowband: true }), pcm)).events);
      expect(wide.length).toBeGreaterThanOrEqual(1);
      expect(narrow).toHaveLength(wide.length);
      // Measured: starts 0-40 ms later than wideband's, ends 0-60 ms either way.
      narrow.forEach(([start, end], i) => {
        expect(Math.abs(start - wide[i]![0])).toBeLessThanOrEqual(SEGMENT_TOLERANCE_MS);
        expect(Math.abs(end - wide[i]![1])).toBeLessThanOrEqual(SEGMENT_TOLERANCE_MS);
      });
    });
  }

  for (const name of NON_SPEECH) {
    it(`finds no speech in ${name}`, async () => {
      const { probabilities, events } = await runVad(vad.createStream({ narrowband: true }), telephoneBand(loadFixture(name)));
      expect(events).toEqual([]);
      // Measured maxima: 0.005-0.05.
      expect(Math.max(...probabilities)).toBeLessThan(0.2);
    });
  }
});

describe('narrowband stream', () => {
  it('is opt-in: the default and { narrowband: false } run the 16 kHz model', async () => {
    const pcm = loadFixture('utt-yes');
    const byDefault = vad.createStream();
    const wide = vad.createStream({ narrowband: false });
    const narrow = vad.createStream({ narrowband: true });
    expect([byDefault.narrowband, wide.narrowband, narrow.narrowband]).toEqual([false, false, true]);
    const a = (await runVad(byDefault, pcm)).probabilities;
    expect((await runVad(wide, pcm)).probabilities).toEqual(a);
    const b = (await runVad(narrow, pcm)).probabilities;
    expect(b).toHaveLength(a.length);
    expect(b).not.toEqual(a);
  });

  it('completes its 32 ms windows on the same frames as a wideband stream', async () => {
    const frames = toFrames(loadFixture('utt-address'));
    const wide = vad.createStream();
    const narrow = vad.createStream({ narrowband: true });
    for (const [i, f] of frames.entries()) {
      await Promise.all([wide.push(f), narrow.push(f)]);
      expect(narrow.windows).toBe(wide.windows);
      expect(narrow.windows).toBe(Math.floor(((i + 1) * 320) / SILERO_WINDOW_SAMPLES));
    }
  });

  it('takes 16 and 8 kHz frames only, and frames that view a shared slab at an offset', async () => {
    const s = vad.createStream({ narrowband: true });
    await expect(s.push({ samples: new Int16Array(480), sampleRate: 24_000 })).rejects.toThrow(/16000 or 8000 Hz frames, got 24000/);
    await expect(vad.createStream().push({ samples: new Int16Array(160), sampleRate: 8000 })).rejects.toThrow(/needs 16000 Hz frames, got 8000/);
    const pcm = loadFixture('utt-opening-hours');
    const plain = toFrames(pcm);
    // What the media path hands over: views into 64 KiB slabs, at byte offsets.
    const slabbed = plain.map((f) => ({ samples: copySamples(f.samples), sampleRate: f.sampleRate }));
    expect(slabbed.filter((f) => f.samples.byteOffset > 0).length).toBeGreaterThan(slabbed.length / 2);
    // Neighbouring frames share a slab: a read that ignored byteOffset would take another's samples.
    const a = vad.createStream({ narrowband: true });
    const b = vad.createStream({ narrowband: true });
    const pa: number[] = [];
    const pb: number[] = [];
    for (const f of plain) pa.push(await a.push(f));
    for (const f of slabbed) pb.push(await b.push(f));
    expect(pb).toEqual(pa);
    expect(Math.max(...pa)).toBeGreaterThan(0.9);
  });

  it("reads a PCMU frame's own μ-law bytes (PassThroughFrame) instead of decimating the frame", async () => {
    const pcm = loadFixture('utt-opening-hours');
    const mulaw = ulaw.encode(new Resampler(16_000, 8000).process(pcm));
    const speechIn = async (frames: AudioFrame[], narrowband = true): Promise<number> => {
      const s = vad.createStream({ narrowband });
      let best = 0;
      for (const f of frames) best = Math.max(best, await s.push(f));
      return best;
    };
    // The 16 kHz samples are silence; only the μ-law bytes the frames carry hold the utterance.
    const carried: PassThroughFrame[] = toFrames(pcm).map((f, i) => ({ samples: new Int16Array(f.samples.length), sampleRate: 16_000, mulaw: mulaw.subarray(i * 160, i * 160 + 160) }));
    expect(await speechIn(carried)).toBeGreaterThan(0.9);
    // Without them it is silence; bytes of another length (not this frame's 20 ms) are ignored.
    expect(await speechIn(carried.map((f) => ({ samples: f.samples, sampleRate: f.sampleRate })))).toBeLessThan(0.1);
    expect(await speechIn(carried.map((f) => ({ ...f, mulaw: f.mulaw!.subarray(0, 80) })))).toBeLessThan(0.1);
    // A wideband stream never reads them.
    expect(await speechIn(carried, false)).toBeLessThan(0.1);
  });

  it('takes 8 kHz frames as they are, and a NarrowbandFrame by its own 8 kHz samples', async () => {
    const pcm = loadFixture('utt-opening-hours');
    const low = new Resampler(16_000, 8000).process(pcm);
    const lowFrames: AudioFrame[] = [];
    for (let at = 0; at + 160 <= low.length; at += 160) lowFrames.push({ samples: low.subarray(at, at + 160), sampleRate: 8000 });
    const probabilities = async (frames: AudioFrame[]): Promise<number[]> => {
      const s = vad.createStream({ narrowband: true });
      const out: number[] = [];
      for (const f of frames) out.push(await s.push(f));
      return out;
    };
    const direct = await probabilities(lowFrames);
    expect(Math.max(...direct)).toBeGreaterThan(0.9);
    // The same 8 kHz samples inside 16 kHz frames whose own 16 kHz samples are silence: the
    // stream reads the 8 kHz ones (and never makes the 16 kHz ones).
    let previous: Int16Array | undefined;
    const carried = lowFrames.map((f) => {
      const frame = new NarrowbandFrame(f.samples, previous);
      previous = f.samples;
      return frame;
    });
    expect(await probabilities(carried)).toEqual(direct);
    // A wideband stream reads the 16 kHz samples, made on demand: speech too.
    const wide = vad.createStream();
    let best = 0;
    for (const f of carried) best = Math.max(best, await wide.push(f));
    expect(best).toBeGreaterThan(0.9);
  });

  it('reset() forgets the decimator history too: a used stream behaves like a new one', async () => {
    const pcm = loadFixture('utt-yes');
    const fresh = (await runVad(vad.createStream({ narrowband: true }), pcm)).probabilities;
    const s = vad.createStream({ narrowband: true });
    // Stop mid-word, with speech in the filter and a part-filled window.
    await runVad(s, loadFixture('utt-address').subarray(0, 16000 + 100));
    s.reset();
    expect(s.windows).toBe(0);
    expect((await runVad(s, pcm)).probabilities).toEqual(fresh);
  });
});

describe('batches with narrowband and wideband windows', () => {
  it('run one ONNX run per rate and give every stream its probabilities from running alone', async () => {
    const audio = callAudio(12);
    const solo = await alone(vad, audio, alternate);
    const before = vad.stats;
    const mixed = await together(vad, audio, alternate);
    const batches = vad.stats.batches - before.batches;
    const runs = vad.stats.runs - before.runs;
    const windows = vad.stats.windows - before.windows;
    // Every turn's batch holds six windows of each rate: two runs per batch.
    expect(runs).toBe(2 * batches);
    expect(windows / batches).toBeGreaterThan(10);
    expectClose(mixed, solo, 1e-5);
  });

  it('splits a mixed turn at maxBatch, whatever mix each batch gets', async () => {
    const own = await SileroVad.load({ maxBatch: 5 });
    try {
      const audio = callAudio(11);
      // Narrowband calls in a run of four, so batches hold 0, 1, 2 or all of them.
      const narrowband: Narrowband = (k) => k >= 3 && k < 7;
      const solo = await alone(own, audio, narrowband);
      const before = own.stats;
      const mixed = await together(own, audio, narrowband);
      const batches = own.stats.batches - before.batches;
      const windows = own.stats.windows - before.windows;
      expect(windows / batches).toBeLessThanOrEqual(5);
      expect(own.stats.runs - before.runs).toBeGreaterThan(batches);
      expectClose(mixed, solo, 1e-5);
    } finally {
      await own.close();
    }
  });

  for (const thread of ['worker', 'inline'] as const) {
    it(`grows its buffers for a mixed batch of 40 then 90 calls (${thread})`, async () => {
      const own = await SileroVad.load({ thread });
      try {
        for (const n of [40, 90]) {
          const audio = callAudio(n);
          const solo = await alone(vad, audio, alternate);
          const before = own.stats;
          const mixed = await together(own, audio, alternate);
          expect((own.stats.windows - before.windows) / (own.stats.batches - before.batches)).toBeGreaterThan(n / 2);
          expectClose(mixed, solo, 1e-5);
        }
      } finally {
        await own.close();
      }
    });
  }

  it('gives exactly the same probabilities on the worker and the inline backend', async () => {
    const inline = await SileroVad.load({ thread: 'inline' });
    try {
      const audio = callAudio(8);
      const onWorker = await together(vad, audio, alternate);
      const onInline = await together(inline, audio, alternate);
      expect(onWorker.flat().length).toBeGreaterThan(200);
      expect(onInline).toEqual(onWorker);
      const pcm = telephoneBand(loadFixture('utt-opening-hours'));
      const a = (await runVad(vad.createStream({ narrowband: true }), pcm)).probabilities;
      const b = (await runVad(inline.createStream({ narrowband: true }), pcm)).probabilities;
      expect(Math.max(...a)).toBeGreaterThan(0.9);
      expect(b).toEqual(a);
    } finally {
      await inline.close();
    }
  });
});
