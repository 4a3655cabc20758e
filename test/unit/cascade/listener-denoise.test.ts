// The listener with a denoiser that answers by callback (processThen, as the engine's gated
// worker stream does): STT and the VAD get the denoised frames in order, the wait counts as
// tracked work (a virtual clock must not move while the denoiser holds a frame), and a denoiser
// failure ends the listener with that error and leaves no work counted.
import { describe, expect, it } from 'vitest';
import type { DenoiseStreamLike } from '../../../src/audio/denoise-gate.ts';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { SpeechDetector, type SpeechEvent } from '../../../src/audio/vad/detector.ts';
import { listen, LISTENER_FRAMES_IN_FLIGHT, type VadStreamLike } from '../../../src/call/cascade/listener.ts';
import { BusyCounter } from '../../../src/call/cascade/work.ts';
import { DropOldestQueue } from '../../../src/media/rtp-session-queue.ts';

const frame = (n: number): AudioFrame => ({ samples: new Int16Array(320).fill(n), sampleRate: 16_000 });

/** Answers each frame in a later turn with its samples negated; fails at the frame whose level is `failAt`. */
class LaterDenoiser implements DenoiseStreamLike {
  pendingSeen: boolean[] = [];
  /** Frames given and not yet answered, and the most there ever were. */
  outstanding = 0;
  mostOutstanding = 0;
  constructor(
    private readonly work: BusyCounter,
    private readonly failAt = -1,
  ) {}
  process(): AudioFrame {
    throw new Error('the listener must use processThen');
  }
  processThen(f: AudioFrame, done: (f: AudioFrame) => void, fail: (e: Error) => void): void {
    this.mostOutstanding = Math.max(this.mostOutstanding, ++this.outstanding);
    setImmediate(() => {
      this.outstanding--;
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

/**
 * As Silero's stream: every other frame completes a window, answered in a later turn; the others
 * answer at once with the last window's probability. Refuses an overlapping push.
 */
class LaterVad implements VadStreamLike {
  busy = false;
  last = 0;
  /** Frame levels, in the order pushed. */
  pushed: number[] = [];
  push(): Promise<number> {
    throw new Error('the listener must use pushThen');
  }
  pushThen(f: AudioFrame, done: (p: number) => void, fail: (e: Error) => void): void {
    if (this.busy) return fail(new Error('overlapping push'));
    this.pushed.push(-f.samples[0]!);
    if (this.pushed.length % 2 === 1) return done(this.last);
    this.busy = true;
    const n = this.pushed.length;
    setImmediate(() => {
      this.busy = false;
      this.last = n >= 10 && n < 30 ? 0.95 : 0.01;
      done(this.last);
    });
  }
}

/**
 * A burst: all of a second's frames (levels 1-50) at once, then the end while most are still in
 * flight. Returns the levels STT got (denoised back to positive) and the speech events, labelled.
 */
async function hearBurst(
  denoise: DenoiseStreamLike,
  vad: VadStreamLike,
  work: BusyCounter,
  label: (e: SpeechEvent) => string,
): Promise<{ stt: number[]; events: string[] }> {
  const inbound = new DropOldestQueue<AudioFrame>(100);
  const stt: number[] = [];
  const events: string[] = [];
  const done = listen({
    inbound,
    vad,
    detector: new SpeechDetector({ minSpeechMs: 100, minSilenceMs: 200 }),
    denoise,
    stt: { write: (f) => stt.push(-f.samples[0]!) },
    work,
    now: () => 1000,
    signal: new AbortController().signal,
    onSpeech: (e) => events.push(...e.map(label)),
  });
  for (let i = 1; i <= 50; i++) inbound.push(frame(i));
  inbound.end();
  await done;
  return { stt, events };
}

describe('frames in flight', () => {
  it('the denoiser holds several of a call’s frames at once; STT and the VAD still get them one at a time, in order, on the audio timeline', async () => {
    const work = new BusyCounter();
    const denoise = new LaterDenoiser(work);
    const vad = new LaterVad();
    const { stt, events } = await hearBurst(denoise, vad, work, (x) => `${x.type}@${x.startMs}`);
    expect(denoise.mostOutstanding).toBe(LISTENER_FRAMES_IN_FLIGHT);
    expect(stt).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(vad.pushed).toEqual(stt);
    // Frame n starts at 980 + 20 (n − 1) ms: speech from frame 10 (the first loud window's).
    expect(events).toEqual(['speech-start@1160', 'speech-end@1160']);
    expect(work.idle).toBe(true);
  });

  it('an abort with frames in flight ends the listener at once; their late answers are dropped', async () => {
    const work = new BusyCounter();
    const denoise = new LaterDenoiser(work);
    const inbound = new DropOldestQueue<AudioFrame>(100);
    const ac = new AbortController();
    const stt: number[] = [];
    const done = listen({ inbound, vad, detector: new SpeechDetector(), denoise, stt: { write: (f) => stt.push(f.samples[0]!) }, work, now: () => 0, signal: ac.signal, onSpeech: () => {} });
    for (let i = 1; i <= 3; i++) inbound.push(frame(i));
    expect(denoise.outstanding).toBe(3);
    ac.abort();
    inbound.push(frame(4));
    await done;
    expect(work.idle).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(stt).toEqual([]);
  });
});

/** As LaterDenoiser, and answers each frame with a probability too (as the worker that runs the VAD), except frames in `without`. */
class VadDenoiser extends LaterDenoiser {
  constructor(
    work: BusyCounter,
    private readonly without: Set<number>,
  ) {
    super(work);
  }
  override processThen(f: AudioFrame, done: (f: AudioFrame, p?: number) => void, fail: (e: Error) => void): void {
    const n = f.samples[0]!;
    super.processThen(f, (out) => (this.without.has(n) ? done(out) : done(out, n >= 10 && n < 30 ? 0.95 : 0.01)), fail);
  }
}

describe('a denoiser that runs the VAD too', () => {
  it("its probabilities go to the detector; the call's own VAD hears only the frames that come without one, in order", async () => {
    const work = new BusyCounter();
    // Frames 16-19 fall back (a worker lost): the call's VAD takes them.
    const denoise = new VadDenoiser(work, new Set([16, 17, 18, 19]));
    const own = new LaterVad();
    own.last = 0.95;
    const { stt, events } = await hearBurst(denoise, own, work, (x) => `${x.type}@${x.type === 'speech-end' ? x.endMs : x.startMs}`);
    expect(stt).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(own.pushed).toEqual([16, 17, 18, 19]);
    // Speech from frame 10 to 29, as the denoiser's probabilities (and the own VAD's 0.95) say.
    expect(events).toEqual(['speech-start@1160', 'speech-end@1560']);
    expect(work.idle).toBe(true);
  });

  it("the call's own VAD starts afresh when it takes over after frames the worker answered, and only then", async () => {
    const work = new BusyCounter();
    // Frames 1-3 (the worker starting) and 16-19 and 40 (lost, then back) come without a probability.
    const denoise = new VadDenoiser(work, new Set([1, 2, 3, 16, 17, 18, 19, 40]));
    const resets: number[] = [];
    const own = new (class extends LaterVad {
      reset(): void {
        if (this.busy) throw new Error('reset during a push');
        resets.push(this.pushed.length);
      }
    })();
    await hearBurst(denoise, own, work, (x) => x.type);
    expect(own.pushed).toEqual([1, 2, 3, 16, 17, 18, 19, 40]);
    // Before frame 16 (3 pushed so far) and before frame 40 (7 pushed): never at the start, never mid-run.
    expect(resets).toEqual([3, 7]);
    expect(work.idle).toBe(true);
  });
});
