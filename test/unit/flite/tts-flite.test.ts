import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLITE_VOICES, FliteTts } from '../../../src/audio/tts-flite.ts';
import { rmsDbfs } from '../../../src/audio/frame.ts';
import { SileroVad } from '../../../src/audio/vad/silero.ts';
import { runVad } from '../vad/fixture-audio.ts';

let tts: FliteTts;
let vad: SileroVad;
beforeAll(async () => {
  tts = await FliteTts.load();
  vad = await SileroVad.load();
});
afterAll(async () => {
  await tts.close();
  await vad.close();
});

describe('flite (WASI) offline TTS', () => {
  it('lists the voices compiled into the binary', async () => {
    const voices = await tts.listVoices();
    expect([...voices].sort()).toEqual([...FLITE_VOICES].sort());
  });

  it('synthesizes non-silent 16 kHz speech that our VAD detects as speech', async () => {
    const audio = await tts.synthesize('Thanks for calling. We are open from nine to five, Monday to Friday.');
    expect(audio.sampleRate).toBe(16000);
    const seconds = audio.samples.length / 16000;
    expect(seconds).toBeGreaterThan(2);
    expect(seconds).toBeLessThan(8);
    expect(rmsDbfs(audio.samples)).toBeGreaterThan(-35);
    const { probabilities, events } = await runVad(vad.createStream(), audio.samples);
    expect(events.some((e) => e.type === 'speech-start')).toBe(true);
    // Most of an utterance with no pauses to speak of is speech.
    expect(probabilities.filter((p) => p >= 0.5).length / probabilities.length).toBeGreaterThan(0.6);
  });

  for (const voice of ['rms', 'awb', 'kal'] as const) {
    it(`speaks with the ${voice} voice at 16 kHz (kal is 8 kHz inside and resampled)`, async () => {
      const audio = await tts.synthesize('How can I help you today?', { voice });
      expect(audio.samples.length / 16000).toBeGreaterThan(0.8);
      expect(rmsDbfs(audio.samples)).toBeGreaterThan(-40);
    });
  }

  it('speaks faster with speed > 1', async () => {
    const text = 'Your appointment is confirmed for Tuesday.';
    const normal = await tts.synthesize(text);
    const fast = await tts.synthesize(text, { speed: 1.5 });
    expect(fast.samples.length).toBeLessThan(normal.samples.length * 0.8);
  });

  it('handles text that looks like options, quotes and concurrent requests', async () => {
    const [a, b] = await Promise.all([tts.synthesize('-voice "kal" -o it\'s fine'), tts.synthesize('second request')]);
    expect(a.samples.length).toBeGreaterThan(8000);
    expect(b.samples.length).toBeGreaterThan(8000);
  });

  it('returns empty audio for blank text and frames of 20 ms', async () => {
    expect((await tts.synthesize('   ')).samples).toHaveLength(0);
    const frames = [];
    for await (const f of tts.synthesizeFrames('Okay.')) frames.push(f);
    expect(frames.length).toBeGreaterThan(10);
    expect(frames.every((f) => f.samples.length === 320 && f.sampleRate === 16000)).toBe(true);
  });

  it('rejects unknown voices and bad speeds, and honours an aborted signal', async () => {
    // @ts-expect-error deliberately not a voice
    await expect(tts.synthesize('hi', { voice: 'nobody' })).rejects.toThrow(RangeError);
    await expect(tts.synthesize('hi', { speed: 0 })).rejects.toThrow(RangeError);
    await expect(tts.synthesize('hi', { signal: AbortSignal.abort() })).rejects.toThrow();
  });
});

describe('flite crash isolation', () => {
  it('a synthesis whose process crashes is retried once in a fresh process', async () => {
    const tts = await FliteTts.load();
    try {
      await tts.warmUp();
      const child = (tts as unknown as { worker: import('node:child_process').ChildProcess }).worker;
      const pending = tts.synthesize('This sentence is long enough to still be synthesizing when the process dies.');
      child.kill('SIGSEGV');
      const audio = await pending;
      expect(audio.samples.length).toBeGreaterThan(16_000);
      const fresh = (tts as unknown as { worker: import('node:child_process').ChildProcess }).worker;
      expect(fresh.pid).not.toBe(child.pid);
      expect(tts.crashes).toBe(1);
    } finally {
      await tts.close();
    }
  });

  it('survives many syntheses in one process (WASI instances are destroyed at a safe point)', async () => {
    // A bare loop of WASI instances aborts within 10-20 of them (uvwasi_destroy from a GC inside
    // the next instance's WASI call; see tts-flite.ts). In this child the GC timing makes that
    // rare, so this guards the path rather than reproducing the crash on demand.
    const tts = await FliteTts.load();
    try {
      for (let i = 0; i < 40; i++) {
        const audio = await tts.synthesize(['Hello there.', 'Please hold the line.', 'Your booking is confirmed.'][i % 3]!, { voice: (['slt', 'rms', 'awb'] as const)[i % 3] });
        expect(audio.samples.length).toBeGreaterThan(4000);
      }
      expect(tts.crashes).toBe(0);
    } finally {
      await tts.close();
    }
  });
});
