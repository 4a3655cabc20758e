// The listener with a denoiser that answers by callback (processThen, as the engine's gated
// worker stream does): STT and the VAD get the denoised frames in order, the wait counts as
// tracked work (a virtual clock must not move while the denoiser holds a frame), and a denoiser
// failure ends the listener with that error and leaves no work counted.
import { describe, expect, it } from 'vitest';
import type { DenoiseStreamLike } from '../../../src/audio/denoise-gate.ts';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { SpeechDetector } from '../../../src/audio/vad/detector.ts';
import { listen, type VadStreamLike } from '../../../src/call/cascade/listener.ts';
import { BusyCounter } from '../../../src/call/cascade/work.ts';
import { DropOldestQueue } from '../../../src/media/rtp-session-queue.ts';

const frame = (n: number): AudioFrame => ({ samples: new Int16Array(320).fill(n), sampleRate: 16_000 });

/** Answers each frame in a later turn with its samples negated; fails at the frame whose level is `failAt`. */
class LaterDenoiser implements DenoiseStreamLike {
  pendingSeen: boolean[] = [];
  constructor(
    private readonly work: BusyCounter,
    private readonly failAt = -1,
  ) {}
  process(): AudioFrame {
    throw new Error('the listener must use processThen');
  }
  processThen(f: AudioFrame, done: (f: AudioFrame) => void, fail: (e: Error) => void): void {
    setImmediate(() => {
      this.pendingSeen.push(!this.work.idle);
      if (f.samples[0] === this.failAt) return fail(new Error('denoiser broke'));
      done({ samples: f.samples.map((x) => -x), sampleRate: f.sampleRate });
    });
  }
}

const vad: VadStreamLike = {
  push: () => Promise.resolve(0),
  pushThen: (_f, done) => done(0.01),
};

function run(denoise: LaterDenoiser, work: BusyCounter, frames: number): { done: Promise<void>; stt: number[] } {
  const inbound = new DropOldestQueue<AudioFrame>(100);
  const stt: number[] = [];
  const done = listen({
    inbound,
    vad,
    detector: new SpeechDetector(),
    denoise,
    stt: { write: (f) => stt.push(f.samples[0]!) },
    work,
    now: () => 0,
    signal: new AbortController().signal,
    onSpeech: () => {},
  });
  for (let i = 1; i <= frames; i++) inbound.push(frame(i));
  inbound.end();
  return { done, stt };
}

describe('listener with a denoiser answering by callback', () => {
  it('hands STT the denoised frames in order and counts each wait as work', async () => {
    const work = new BusyCounter();
    const denoise = new LaterDenoiser(work);
    const { done, stt } = run(denoise, work, 12);
    await done;
    expect(stt).toEqual(Array.from({ length: 12 }, (_, i) => -(i + 1)));
    // Every frame was in flight as tracked work until its answer came.
    expect(denoise.pendingSeen).toEqual(Array(12).fill(true));
    expect(work.idle).toBe(true);
  });

  it('a denoiser failure ends the listener with its error, and no work stays counted', async () => {
    const work = new BusyCounter();
    const { done, stt } = run(new LaterDenoiser(work, 4), work, 8);
    await expect(done).rejects.toThrow('denoiser broke');
    expect(stt).toEqual([-1, -2, -3]);
    expect(work.idle).toBe(true);
  });
});
