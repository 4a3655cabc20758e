import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmsDbfs, type AudioFrame } from '../../../src/audio/frame.ts';
import { FliteTts } from '../../../src/audio/tts-flite.ts';
import { FliteTtsProvider } from '../../../src/providers/tts/flite-tts.ts';
import { ProviderError } from '../../../src/util/errors.ts';

let engine: FliteTts;
let provider: FliteTtsProvider;
beforeAll(async () => {
  engine = await FliteTts.load();
  provider = new FliteTtsProvider(async () => engine);
});
afterAll(async () => {
  await engine.close();
});

async function all(text: string, opts: Partial<Parameters<FliteTtsProvider['synthesize']>[1]> = {}): Promise<AudioFrame[]> {
  const out: AudioFrame[] = [];
  for await (const f of provider.synthesize(text, { voice: 'slt', signal: new AbortController().signal, ...opts })) out.push(f);
  return out;
}

describe('Flite offline TTS provider', () => {
  it('yields non-silent 20 ms 16 kHz frames, and reports time to first frame', async () => {
    let ttff = -1;
    const frames = await all('Hello, thanks for calling. How can I help you today?', { onFirstFrame: (ms) => (ttff = ms) });
    expect(frames.length).toBeGreaterThan(75);
    for (const f of frames) expect([f.sampleRate, f.samples.length]).toEqual([16000, 320]);
    expect(frames.filter((f) => rmsDbfs(f.samples) > -35).length).toBeGreaterThan(frames.length / 3);
    expect(ttff).toBeGreaterThan(0);
  });

  it('speed maps to duration stretch: faster speech is shorter', async () => {
    const text = 'We are open from nine to five, Monday to Friday.';
    const normal = await all(text);
    const fast = await all(text, { speed: 1.5, stability: 0.2, emotion: true });
    expect(fast.length).toBeLessThan(normal.length * 0.8);
  });

  it('stops between frames when aborted', async () => {
    const ac = new AbortController();
    let n = 0;
    for await (const _ of provider.synthesize('This sentence is long enough to produce many frames of audio.', { voice: 'rms', signal: ac.signal })) {
      if (++n === 3) ac.abort();
    }
    expect(n).toBe(3);
  });

  it('rejects an unknown voice with a non-retryable ProviderError', async () => {
    const err = await all('Hi.', { voice: 'alloy' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).retryable).toBe(false);
  });
});
