/**
 * `narrowband` reaches the TTS provider from the call's codec, read for each sentence (a
 * re-INVITE may change the codec between two).
 */
import { describe, expect, it } from 'vitest';
import { SpokenTurn } from '../../../src/call/cascade/spoken-turn.ts';
import type { Speaker } from '../../../src/call/cascade/speaker.ts';
import { TtsUtterance } from '../../../src/call/realtime/tts-utterance.ts';
import type { TtsProvider, TtsSynthesisOptions } from '../../../src/providers/tts/types.ts';
import { ManualClock } from '../../../src/util/clock.ts';

/** A provider that notes each sentence's `narrowband` and flips the codec after each. */
function recording(codec: { narrow: boolean }): { provider: TtsProvider; seen: (boolean | undefined)[] } {
  const seen: (boolean | undefined)[] = [];
  const provider = {
    async *synthesize(_text: string, opts: TtsSynthesisOptions) {
      seen.push(opts.narrowband);
      codec.narrow = !codec.narrow;
      yield { samples: new Int16Array(320), sampleRate: 16000 };
    },
  } as unknown as TtsProvider;
  return { provider, seen };
}

describe('TTS narrowband option', () => {
  it('SpokenTurn asks the call for each sentence', async () => {
    const codec = { narrow: true };
    const { provider, seen } = recording(codec);
    const speaker = { open() {}, push() {}, finish() {} } as unknown as Speaker;
    const turn = new SpokenTurn(
      1,
      'reply',
      { kind: 'fixed', text: 'One sentence. Another one. A third.' },
      {
        clock: new ManualClock(0),
        now: () => 0,
        speaker,
        voice: { provider, voice: 'v' },
        llmFirstTokenMs: 10_000,
        ttsFirstFrameMs: 10_000,
        narrowband: () => codec.narrow,
        onProviderError() {},
      },
      new AbortController().signal,
    );
    await turn.run();
    expect(seen).toEqual([true, false, true]);
  });

  it('TtsUtterance asks for each sentence; without the callback it is false', async () => {
    const codec = { narrow: true };
    const { provider, seen } = recording(codec);
    const player = { push() {}, finish() {} } as never;
    const u = new TtsUtterance('k', { provider, voice: 'v' }, player, new AbortController().signal, () => codec.narrow);
    u.say('One sentence. Another one.');
    await u.done;
    expect(seen).toEqual([true, false]);
    const plain = recording(codec);
    const v = new TtsUtterance('k2', { provider: plain.provider, voice: 'v' }, player, new AbortController().signal);
    v.say('Just one.');
    await v.done;
    expect(plain.seen).toEqual([false]);
  });
});
