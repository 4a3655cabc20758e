import type OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { concatPcm, type AudioFrame } from '../../../src/audio/frame.ts';
import { resample, Resampler } from '../../../src/audio/resample.ts';
import { OpenAiTts } from '../../../src/providers/tts/openai-tts.ts';

/** 24 kHz test audio: a few harmonics, loud enough that any misalignment shows. */
function speech24k(ms: number): Int16Array {
  const n = (24_000 * ms) / 1000;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const t = i / 24_000;
    out[i] = Math.round(6000 * (Math.sin(2 * Math.PI * 210 * t) + 0.5 * Math.sin(2 * Math.PI * 1130 * t + 1)));
  }
  return out;
}

function bytesOf(pcm: Int16Array): Uint8Array {
  return new Uint8Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
}

/**
 * A client whose speech endpoint answers with `chunks` as the body, all there at once (a burst);
 * with `cancelled`, the body stays open after them (the service still sending) and notes a cancel.
 */
function clientWith(chunks: Uint8Array[], cancelled?: { value: boolean }): OpenAI {
  const create = async (): Promise<Response> =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(c) {
          for (const ch of chunks) c.enqueue(ch);
          if (!cancelled) c.close();
        },
        cancel() {
          if (cancelled) cancelled.value = true;
        },
      }),
    );
  return { audio: { speech: { create } } } as unknown as OpenAI;
}

/** Counts turns of the event loop (check phase) while `run` goes on. */
async function countingLoopTurns<T>(run: (turns: () => number) => Promise<T>): Promise<T> {
  let turns = 0;
  let on = true;
  const spin = (): void => {
    turns++;
    if (on) setImmediate(spin);
  };
  setImmediate(spin);
  try {
    return await run(() => turns);
  } finally {
    on = false;
  }
}

afterEach(() => vi.restoreAllMocks());

describe('OpenAI speech: resampling a burst of audio', () => {
  it('the first frame comes after resampling just enough input for it, not the whole read', async () => {
    const pcm = speech24k(2000);
    const tts = new OpenAiTts({ client: clientWith([bytesOf(pcm)]) });
    const spy = vi.spyOn(Resampler.prototype, 'processShared');
    let inputBeforeFirst = -1;
    for await (const _ of tts.synthesize('Hello there.', { voice: 'alloy', signal: new AbortController().signal })) {
      inputBeforeFirst = spy.mock.calls.reduce((n, [input]) => n + input.length, 0);
      break;
    }
    // 320 samples at 16 kHz plus the trimmed 22-sample warm-up, at 24 kHz: 513 input samples.
    expect(inputBeforeFirst).toBe(513);
  });

  it('one read holding 2 s of audio is resampled in slices, the event loop running between bursts of at most 100 ms', async () => {
    const pcm = speech24k(2000);
    const tts = new OpenAiTts({ client: clientWith([bytesOf(pcm)]) });
    const turnAtFrame = await countingLoopTurns(async (turns) => {
      const at: number[] = [];
      for await (const _ of tts.synthesize('Hello there.', { voice: 'alloy', signal: new AbortController().signal })) at.push(turns());
      return at;
    });
    expect(turnAtFrame.length).toBe(100 + 1); // 2 s, plus the filter's tail in a padded last frame
    const perTurn = new Map<number, number>();
    for (const t of turnAtFrame) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
    // 100 ms of audio (5 frames; 6 around the first slice and the tail) between two loop turns.
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(6);
    expect(turnAtFrame.at(-1)! - turnAtFrame[0]!).toBeGreaterThanOrEqual(18);
  });

  it('whatever the chunking (odd bytes, tiny and huge reads), the frames are the audio sent, from its first sample', async () => {
    const pcm = speech24k(1500);
    const bytes = bytesOf(pcm);
    const sizes = [1, 3, 1025, 7, 40_001, 2, 961, 13_337];
    const chunks: Uint8Array[] = [];
    for (let at = 0, k = 0; at < bytes.length; k++) {
      const n = sizes[k % sizes.length]!;
      chunks.push(bytes.subarray(at, at + n));
      at += n;
    }
    const tts = new OpenAiTts({ client: clientWith(chunks) });
    const frames: AudioFrame[] = [];
    for await (const f of tts.synthesize('Hello there.', { voice: 'alloy', signal: new AbortController().signal })) frames.push(f);
    for (const f of frames) expect(f.samples.length).toBe(320);
    const got = concatPcm(frames.map((f) => f.samples));
    const want = resample(pcm, 24_000, 16_000);
    expect(got.length).toBeGreaterThanOrEqual(want.length);
    expect(got.length).toBeLessThanOrEqual(want.length + 320);
    let maxDiff = 0;
    for (let i = 0; i < want.length - 32; i++) maxDiff = Math.max(maxDiff, Math.abs(got[i]! - want[i]!));
    expect(maxDiff).toBeLessThanOrEqual(1);
  });

  it('narrowband: the telephone-band resampler, its shorter warm-up trimmed, the frames the audio sent', async () => {
    const pcm = speech24k(1500);
    const tts = new OpenAiTts({ client: clientWith([bytesOf(pcm)]) });
    const spy = vi.spyOn(Resampler.prototype, 'processShared');
    const frames: AudioFrame[] = [];
    let inputBeforeFirst = -1;
    for await (const f of tts.synthesize('Hello there.', { voice: 'alloy', narrowband: true, signal: new AbortController().signal })) {
      if (frames.length === 0) inputBeforeFirst = spy.mock.calls.reduce((n, [input]) => n + input.length, 0);
      frames.push(f);
    }
    // 320 samples at 16 kHz plus the 4-sample warm-up, at 24 kHz: 486 input samples.
    expect(inputBeforeFirst).toBe(486);
    const got = concatPcm(frames.map((f) => f.samples));
    const want = resample(pcm, 24_000, 16_000, { band: 'telephone' });
    expect(got.length).toBeGreaterThanOrEqual(want.length);
    let maxDiff = 0;
    for (let i = 0; i < want.length - 8; i++) maxDiff = Math.max(maxDiff, Math.abs(got[i]! - want[i]!));
    expect(maxDiff).toBe(0);
  });

  it('a barge-in in the middle of a burst stops the frames and cancels the body', async () => {
    const cancelled = { value: false };
    const tts = new OpenAiTts({ client: clientWith([bytesOf(speech24k(2000))], cancelled) });
    const ac = new AbortController();
    let n = 0;
    for await (const _ of tts.synthesize('Hello there.', { voice: 'alloy', signal: ac.signal })) {
      n++;
      if (n === 3) setImmediate(() => ac.abort());
    }
    expect(n).toBeLessThanOrEqual(6);
    expect(cancelled.value).toBe(true);
  });
});
