/**
 * Speech-to-text: one provider per vendor, one stream per call. Audio goes in as the engine's
 * 20 ms frames at the stream's rate: 16 kHz, or 8 kHz on a telephone-band (G.711) call, whose
 * audio has nothing above 4 kHz to send (any resampling happened at the codec edge); transcripts
 * come out as an async iterable of events, so the turn-taking code reads them on its own schedule.
 */
import type { AudioFrame } from '../../audio/frame.ts';
import type { ProviderError } from '../../util/errors.ts';

export interface SttCapabilities {
  /** Emits `interim` events while the caller is still speaking (used for barge-in word counts). */
  interim: boolean;
  /** Audio is sent as it is written; false means it is buffered until finalize() (segment upload). */
  streaming: boolean;
}

export interface SttOpenOptions {
  /** BCP 47 tag from the catalog (`en-US`); providers narrow it to what they accept. */
  language: string;
  /** Aborting tears the stream down at once: sockets and requests closed, events end. */
  signal: AbortSignal;
  /** The rate of every frame written to the stream. */
  sampleRate: SttSampleRate;
}

/** What every provider takes: the engine's rate, or G.711's own. */
export type SttSampleRate = 16000 | 8000;

/** Throws a RangeError naming the provider unless `rate` is one an STT stream takes. */
export function checkSttRate(rate: number, provider: string): asserts rate is SttSampleRate {
  if (rate !== 16000 && rate !== 8000) throw new RangeError(`${provider} STT streams take 16000 or 8000 Hz audio, not ${rate}`);
}

/** Times are milliseconds of audio written to (or skipped on) this stream, so they line up with the call's frames. */
export type SttEvent =
  | { type: 'interim'; text: string; startMs?: number; endMs?: number }
  | {
      type: 'final';
      text: string;
      startMs?: number;
      endMs?: number;
      /** The provider (or a finalize() call) says the utterance is over, not just this segment. */
      speechFinal?: boolean;
    }
  | { type: 'error'; error: ProviderError };

export interface SttStream extends AsyncIterable<SttEvent> {
  /** Never blocks: a stream that is (re)connecting buffers a bounded amount of audio. */
  write(frame: AudioFrame): void;
  /**
   * True when `write` is done with the frame's samples once it returns (sent or copied), so the
   * caller may refill the same array for its next write. Absent or false: the stream may keep
   * the array (a segment buffered until finalize), so each write needs an array of its own.
   */
  readonly copiesOnWrite?: boolean;
  /**
   * `ms` of the call's audio left out at this point, not written (a quiet line the engine does not
   * send, see src/call/cascade/stt-reader.ts): the stream's times move on by that much, so they
   * still line up with the call's frames. Optional: a stream without it is written every frame.
   */
  skip?(ms: number): void;
  /** The engine's own endpointing decided the utterance is over: flush it to a final now. */
  finalize(): void;
  /** Flush what was written, wait (bounded) for the last finals, then end the events. Idempotent. */
  close(): Promise<void>;
}

export interface SttProvider {
  readonly label: string;
  readonly capabilities: SttCapabilities;
  open(opts: SttOpenOptions): SttStream;
}

/** `en-US` → `en`: the ISO-639-1 code that Whisper-style APIs want. */
export function primaryLanguage(tag: string): string {
  return tag.split('-')[0]!.toLowerCase();
}
