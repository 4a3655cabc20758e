// On a telephone-band call the listener hands the denoiser, STT and VAD 8 kHz frames: a G.711
// frame's own samples (never upsampled), anything else decimated; the recording keeps 16 kHz.
import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { NarrowbandFrame } from '../../../src/audio/narrowband-frame.ts';
import { Resampler } from '../../../src/audio/resample.ts';
import { SpeechDetector } from '../../../src/audio/vad/detector.ts';
import { listen, type VadStreamLike } from '../../../src/call/cascade/listener.ts';
import { untracked } from '../../../src/call/cascade/work.ts';
import { DropOldestQueue } from '../../../src/media/rtp-session-queue.ts';
import { sine } from '../audio/signal.ts';

/** Records what it is given; calls every frame with some energy speech. */
class SeenVad implements VadStreamLike {
  readonly frames: AudioFrame[] = [];
  push(f: AudioFrame): Promise<number> {
    this.frames.push(f);
    return Promise.resolve(0);
  }
  pushThen(f: AudioFrame, done: (p: number) => void): void {
    this.frames.push(f);
    done(0);
  }
}

async function run(frames: AudioFrame[], narrowband: boolean) {
  const inbound = new DropOldestQueue<AudioFrame>(200);
  const vad = new SeenVad();
  const stt: AudioFrame[] = [];
  const denoised: AudioFrame[] = [];
  const recorded: Int16Array[] = [];
  const done = listen({
    inbound,
    vad,
    detector: new SpeechDetector(),
    denoise: {
      process: (f) => {
        denoised.push(f);
        return f;
      },
    },
    narrowband,
    stt: { write: (f) => void stt.push(f) },
    recorder: { caller: (_at: number, samples: Int16Array) => void recorded.push(samples), assistant: () => {} } as never,
    work: untracked,
    now: () => 0,
    signal: new AbortController().signal,
    onSpeech: () => {},
  });
  for (const f of frames) inbound.push(f);
  inbound.end();
  await done;
  return { vad: vad.frames, stt, denoised, recorded };
}

describe('listener on a narrowband call', () => {
  const tone = sine(700, 8000, 160 * 20, 8000);
  const narrowFrames = (): NarrowbandFrame[] => {
    let previous: Int16Array | undefined;
    return Array.from({ length: 20 }, (_, i) => {
      const samples = tone.slice(i * 160, i * 160 + 160);
      const f = new NarrowbandFrame(samples, previous);
      previous = samples;
      return f;
    });
  };

  it("passes G.711 frames' own 8 kHz samples to the denoiser, STT and VAD, and 16 kHz to the recording", async () => {
    const frames = narrowFrames();
    const seen = await run(frames, true);
    for (const list of [seen.denoised, seen.stt, seen.vad]) {
      expect(list).toHaveLength(20);
      list.forEach((f, i) => {
        expect(f.sampleRate).toBe(8000);
        expect(f.samples).toBe(frames[i]!.narrow);
      });
    }
    expect(seen.recorded.map((s) => s.length)).toEqual(Array(20).fill(320));
    expect(seen.recorded[5]).toEqual(frames[5]!.samples);
  });

  it('decimates 16 kHz frames that are not G.711 ones (as the streaming half-band would)', async () => {
    const wide = new Resampler(8000, 16_000).process(tone);
    const frames: AudioFrame[] = Array.from({ length: 20 }, (_, i) => ({ samples: wide.slice(i * 320, i * 320 + 320), sampleRate: 16_000 }));
    const seen = await run(frames, true);
    const expected = new Resampler(16_000, 8000).process(wide);
    expect(seen.vad.every((f) => f.sampleRate === 8000 && f.samples.length === 160)).toBe(true);
    const got = new Int16Array(3200);
    seen.vad.forEach((f, i) => got.set(f.samples, i * 160));
    expect(got).toEqual(expected);
  });

  it('a wideband call gets the 16 kHz frames as they are', async () => {
    const frames = narrowFrames();
    const seen = await run(frames, false);
    expect(seen.vad.map((f) => f.sampleRate)).toEqual(Array(20).fill(16_000));
    expect(seen.stt[3]).toBe(frames[3]);
  });
});
