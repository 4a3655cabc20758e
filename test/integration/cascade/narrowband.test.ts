/**
 * Telephone-band calls: the cascade asks the shared VAD and denoiser for narrowband (8 kHz)
 * streams when the call's codec is G.711, and wideband ones otherwise (TTS too: `narrowband`
 * in its synthesis options), and a G.711 call's
 * telephone-band audio is still heard, transcribed and answered as on a wideband call.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SpectralDenoiser } from '../../../src/audio/denoise-spectral.ts';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { resample } from '../../../src/audio/resample.ts';
import type { CallerAudioOptions, DenoiserFactory, VadFactory } from '../../../src/call/cascade/listener.ts';
import type { CallerItem } from '../../../src/call/virtual-media.ts';
import { ToneTtsProvider } from '../../../src/replay/stand-ins.ts';
import { runCall, say, sharedVad } from './harness.ts';

/** What a G.711 leg delivers: the fixture through 8 kHz and back. */
function telephoneBand(item: CallerItem): CallerItem {
  return { ...item, samples: resample(resample(item.samples, 16_000, 8_000), 8_000, 16_000) };
}

async function call(codec: string | undefined) {
  const asked: { vad: CallerAudioOptions[]; denoiser: CallerAudioOptions[] } = { vad: [], denoiser: [] };
  const silero = await sharedVad();
  const spectral = new SpectralDenoiser();
  const vad: VadFactory = {
    createStream: (o) => {
      asked.vad.push({ ...o });
      return silero.createStream(o);
    },
  };
  const denoiser: DenoiserFactory = {
    createStream: (o) => {
      asked.denoiser.push({ ...o });
      const s = spectral.createStream(o);
      return { process: (f: AudioFrame) => s.process(f), close: () => s.close() };
    },
  };
  const run = await runCall({
    script: { items: [telephoneBand(say('utt-opening-hours', 4000))], hangUpAtMs: 12_000, ...(codec ? { codec } : {}) },
    config: { enable_noise_cancellation: true },
    deps: { vad, denoiser },
  });
  return { ...run, asked };
}

afterEach(() => vi.restoreAllMocks());

describe('cascade: narrowband caller audio on G.711 calls', () => {
  it.each([
    ['PCMU', true],
    ['PCMA', true],
    ['G722', false],
    ['opus', false],
    [undefined, false],
  ] as const)('codec %s → narrowband %s, and the question is answered', async (codec, narrowband) => {
    const synthesize = vi.spyOn(ToneTtsProvider.prototype, 'synthesize');
    const { asked, events, result } = await call(codec);
    expect(asked.vad).toEqual([{ narrowband }]);
    // The denoiser is asked to run the call's VAD too (its worker does, where it loaded the model).
    expect(asked.denoiser).toEqual([{ narrowband, vad: true }]);
    expect(synthesize.mock.calls.length).toBeGreaterThan(0);
    expect(synthesize.mock.calls.map(([, o]) => o.narrowband)).toEqual(synthesize.mock.calls.map(() => narrowband));
    const [eot] = events('end-of-turn');
    expect(eot).toMatchObject({ reason: 'silence', taken: true, transcript: 'What are your opening hours?' });
    expect(result.transcript.find((e) => e.kind === 'reply')?.text).toBe('We are open from nine to five, Monday to Friday.');
  });

  it('finds the same speech on a G.711 call as on a wideband one, within two VAD windows', async () => {
    const narrow = await call('PCMU');
    const wide = await call('G722');
    const [ns] = narrow.events('vad-speech-start');
    const [ws] = wide.events('vad-speech-start');
    const [ne] = narrow.events('vad-speech-end');
    const [we] = wide.events('vad-speech-end');
    expect(Math.abs(ns!.atMs - ws!.atMs)).toBeLessThanOrEqual(64);
    expect(Math.abs(ne!.atMs - we!.atMs)).toBeLessThanOrEqual(64);
  });
});
