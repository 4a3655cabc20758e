/**
 * A call runs many turns on one AbortSignal: each turn (and each realtime TTS utterance) hooks
 * the call's signal only while it produces, so a long call does not pile up abort listeners
 * (Node warns at 11: MaxListenersExceededWarning).
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { SpokenTurn, type SpokenTurnDeps } from '../../../src/call/cascade/spoken-turn.ts';
import type { Speaker } from '../../../src/call/cascade/speaker.ts';
import { TtsUtterance } from '../../../src/call/realtime/tts-utterance.ts';
import type { TtsProvider } from '../../../src/providers/tts/types.ts';
import { ManualClock } from '../../../src/util/clock.ts';

const provider = {
  async *synthesize() {
    yield { samples: new Int16Array(320) };
    yield { samples: new Int16Array(320) };
  },
} as unknown as TtsProvider;

const speaker = { open() {}, push() {}, finish() {} } as unknown as Speaker;

function deps(): SpokenTurnDeps {
  return {
    clock: new ManualClock(0),
    now: () => 0,
    speaker,
    voice: { provider, voice: 'v' },
    llmFirstTokenMs: 10_000,
    ttsFirstFrameMs: 10_000,
    onProviderError() {},
  };
}

const abortListeners = (s: AbortSignal): number => getEventListeners(s, 'abort').length;

describe('per-turn abort listeners on the call signal', () => {
  it('stay bounded over many finished and barged-in turns', async () => {
    const call = new AbortController();
    const base = abortListeners(call.signal);
    for (let i = 1; i <= 30; i++) {
      const turn = new SpokenTurn(i, 'reply', { kind: 'fixed', text: `Reply number ${i}. And more.` }, deps(), call.signal);
      expect(abortListeners(call.signal)).toBe(base + 1);
      const run = turn.run();
      if (i % 3 === 0) turn.abort('barge-in');
      await run;
      expect(abortListeners(call.signal)).toBe(base);
    }
    expect(call.signal.aborted).toBe(false);
  });

  it('a running turn still stops when the call is hung up', async () => {
    const call = new AbortController();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const turn = new SpokenTurn(
      1,
      'reply',
      {
        kind: 'agent',
        run: async (signal) => {
          await gate;
          signal.throwIfAborted();
          return { reply: 'late', ended: false, functionCalls: [] } as never;
        },
      },
      deps(),
      call.signal,
    );
    const run = turn.run();
    call.abort(new Error('hung up'));
    expect(turn.aborted).toBe(true);
    release();
    await run;
    expect(abortListeners(call.signal)).toBe(0);
  });

  it('realtime TTS utterances detach once their audio is with the player', async () => {
    const call = new AbortController();
    const player = { push() {}, finish() {} } as never;
    for (let i = 0; i < 30; i++) {
      const u = new TtsUtterance(`k${i}`, { provider, voice: 'v' }, player, call.signal);
      u.say(`Sentence ${i}.`);
      if (i % 4 === 0) u.abort('barge-in');
      await u.done;
    }
    expect(abortListeners(call.signal)).toBe(0);
  });
});
