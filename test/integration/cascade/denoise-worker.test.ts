/**
 * A pipeline call with noise cancellation on the virtual clock, with the engine's worker-backed
 * denoiser and with the in-thread one: the async hop to the worker is tracked work, so the
 * driver's idle detection holds and both runs give the same timeline, to the millisecond. Also
 * with narrowband streams, which a G.711 (PCMU) call asks for and gives its 8 kHz frames: a
 * narrowband stream refuses 16 kHz ones, so the frames counted through the worker below are 8 kHz.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEngineDenoiser, type EngineDenoiser } from '../../../src/audio/denoise.ts';
import { WorkerDenoiser } from '../../../src/audio/denoise-worker.ts';
import { runCall, say } from './harness.ts';

let worker: EngineDenoiser;
let inline: EngineDenoiser;
beforeAll(async () => {
  [worker, inline] = await Promise.all([loadEngineDenoiser(), loadEngineDenoiser({ thread: 'inline' })]);
});
afterAll(async () => {
  await Promise.all([worker.close(), inline.close()]);
});

describe('cascade with the worker-backed denoiser', () => {
  // Without a codec the call asks for wideband streams (16 kHz frames); on PCMU (a G.711 call) for
  // narrowband ones (8 kHz frames).
  it.each([
    ['wideband', undefined],
    ['narrowband (PCMU)', 'PCMU'],
  ] as const)('hears the caller exactly as with the in-thread denoiser, on a virtual clock: %s', async (_name, codec) => {
    expect(worker).toBeInstanceOf(WorkerDenoiser);
    const run = (denoiser: EngineDenoiser) =>
      runCall({
        config: { enable_noise_cancellation: true },
        deps: { denoiser },
        script: {
          items: [say('noise-street', 0), say('utt-opening-hours-street', 2500), say('utt-yes', 9000)],
          hangUpAtMs: 13_000,
          ...(codec ? { codec } : {}),
        },
      });
    const before = (worker as WorkerDenoiser).stats;
    const a = await run(worker);
    const b = await run(inline);
    const stats = (worker as WorkerDenoiser).stats;
    // The frames the silence gate let through (the noise, the speech, a second after each) went
    // through the worker, none fell back; the quiet stretches between did not.
    const frames = stats.frames - before.frames;
    expect(frames).toBeGreaterThan(300);
    expect(frames).toBeLessThan(13_000 / 20 - 50);
    expect(stats.fallbacks).toBe(before.fallbacks);
    const types = a.result.timeline.map((e) => e.type);
    for (const t of ['vad-speech-start', 'vad-speech-end', 'end-of-turn']) expect(types).toContain(t);
    expect(a.result.timeline).toEqual(b.result.timeline);
    expect(a.result.transcript).toEqual(b.result.transcript);
    expect(a.media.played.length).toBe(b.media.played.length);
  }, 60_000);
});
