// Caller frames are piped in the media clock's turn and the VAD answers from its worker's turn;
// the speech events they set off (a turn, its provider requests) must still run in the call's
// async context (AsyncLocalStorage: tracing, APM), as they did when every hop was awaited.
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import type { AudioFrame } from '../../../src/audio/frame.ts';
import { SpeechDetector, type SpeechEvent } from '../../../src/audio/vad/detector.ts';
import { listen, type VadStreamLike } from '../../../src/call/cascade/listener.ts';
import { untracked } from '../../../src/call/cascade/work.ts';
import { MediaSwitch } from '../../../src/call/control/media-switch.ts';
import { DropOldestQueue } from '../../../src/media/rtp-session-queue.ts';

const als = new AsyncLocalStorage<string>();
const frame = (level: number): AudioFrame => ({ samples: new Int16Array(320).fill(level), sampleRate: 16_000 });

/** A VAD that answers later, from a turn of its own (as the Silero worker's results arrive). */
class LaterVad implements VadStreamLike {
  push(f: AudioFrame): Promise<number> {
    return Promise.resolve(f.samples[0]! > 0 ? 0.9 : 0.05);
  }
  pushThen(f: AudioFrame, done: (p: number) => void): void {
    const p = f.samples[0]! > 0 ? 0.9 : 0.05;
    als.run('the VAD worker', () => setImmediate(() => done(p)));
  }
}

describe('the call’s async context across piped frames', () => {
  it('the listener’s speech events run in the context the call started it in', async () => {
    const inbound = new DropOldestQueue<AudioFrame>(50);
    const outbound = { write: () => true, writeStream: async () => {}, flush: () => 0, playing: false, codec: 'PCMU' } as never;
    const call = { inbound, outbound, sendDtmf: async () => {}, on: () => call, off: () => call };
    let frames = 0;
    const seenBySpeech: (string | undefined)[] = [];
    const events: SpeechEvent[] = [];
    const ac = new AbortController();
    const done = als.run('call A', () => {
      const sw = new MediaSwitch(call);
      sw.tap(() => frames++);
      const view = sw.engineView(async () => {});
      sw.start();
      return listen({
        inbound: view.inbound,
        vad: new LaterVad(),
        detector: new SpeechDetector(),
        stt: { write: () => {} },
        work: untracked,
        now: () => 0,
        signal: ac.signal,
        onSpeech: (e) => {
          seenBySpeech.push(als.getStore());
          events.push(...e);
        },
      });
    });
    // Frames come from the media clock's turn: another context.
    await als.run('media clock', async () => {
      for (let i = 0; i < 60; i++) {
        inbound.push(frame(i >= 10 && i < 40 ? 8000 : 0));
        await new Promise((r) => setTimeout(r, 1));
      }
      inbound.end();
    });
    await done;
    expect(frames).toBe(60);
    expect(events.map((e) => e.type)).toContain('speech-start');
    expect(new Set(seenBySpeech)).toEqual(new Set(['call A']));
  });
});
