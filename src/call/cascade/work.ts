/**
 * Real work the engine waits for (VAD inference, a Flite synthesis in its worker, a network
 * provider) as opposed to waits on the call clock. On a live call the distinction does not
 * matter; on a virtual clock it is what makes a replay deterministic: the driver advances time
 * only while no tracked work is in flight, so real work takes zero virtual time and simulated
 * latency (a stand-in sleeping on the clock) takes exactly the time it says.
 */
import type { AudioFrame } from '../../audio/frame.ts';
import type { LlmProvider, LlmRequest, LlmResult } from '../../providers/llm/types.ts';
import type { TtsProvider, TtsSynthesisOptions } from '../../providers/tts/types.ts';

export interface WorkTracker {
  track<T>(work: Promise<T>): Promise<T>;
  /**
   * Work that answers by callback rather than a promise: in flight until the returned function
   * is called. Calling it again does nothing.
   */
  hold(): () => void;
}

const nothingHeld = (): void => {};

/** Production: nothing to track, the wall clock moves on its own. */
export const untracked: WorkTracker = { track: (work) => work, hold: () => nothingHeld };

/** Counts work in flight; the virtual-clock driver waits for `idle`. */
export class BusyCounter implements WorkTracker {
  private pending = 0;

  get idle(): boolean {
    return this.pending === 0;
  }

  track<T>(work: Promise<T>): Promise<T> {
    this.pending++;
    return work.finally(() => {
      this.pending--;
    });
  }

  hold(): () => void {
    this.pending++;
    let held = true;
    return () => {
      if (held) this.pending--;
      held = false;
    };
  }
}

/** A TTS whose every frame wait counts as real work (Flite, or a network vendor in a replay). */
export function trackedTts(inner: TtsProvider, work: WorkTracker): TtsProvider {
  return {
    label: inner.label,
    capabilities: inner.capabilities,
    synthesize(text: string, opts: TtsSynthesisOptions): AsyncIterable<AudioFrame> {
      return {
        [Symbol.asyncIterator]() {
          const it = inner.synthesize(text, opts)[Symbol.asyncIterator]();
          return {
            next: () => work.track(it.next()),
            return: async () => (it.return ? work.track(it.return()) : { value: undefined, done: true as const }),
          };
        },
      };
    },
  };
}

/** An LLM whose whole completion is real work: virtual time stands still while it answers. */
export function trackedLlm(inner: LlmProvider, work: WorkTracker): LlmProvider {
  return {
    label: inner.label,
    capabilities: inner.capabilities,
    complete: (request: LlmRequest): Promise<LlmResult> => work.track(inner.complete(request)),
  };
}
