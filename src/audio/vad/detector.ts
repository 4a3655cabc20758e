/**
 * Turns per-frame speech probabilities into speech-start / speech-end events. Pure: time comes
 * only from the frame times the caller passes in, so tests and replays run on a virtual clock
 * and endpointing sees exactly the same decisions at any speed.
 *
 * Hysteresis in the style of Silero's get_speech_timestamps: speech starts when the probability
 * reaches `startThreshold` and stays at or above `endThreshold` for `minSpeechMs`; once speaking,
 * a frame below `endThreshold` opens a silence that ends the segment after `minSilenceMs` unless a
 * frame at or above `startThreshold` comes first. Probabilities between the two thresholds
 * neither start nor end anything, which keeps a wavering probability from flapping.
 */

export interface SpeechDetectorOptions {
  /** Probability that opens a segment. */
  startThreshold?: number;
  /** Probability below which audio counts as silence (must be <= startThreshold). */
  endThreshold?: number;
  /** Speech shorter than this never starts a segment (clicks, a cough). */
  minSpeechMs?: number;
  /** Silence needed to close a segment; endpointing adds its own wait on top. */
  minSilenceMs?: number;
  /** How far before the detected onset `paddedStartMs` reaches, so STT hears the first phoneme. */
  preRollMs?: number;
  /** Duration of one pushed probability (20 ms frames). */
  frameMs?: number;
}

export interface SpeechStartEvent {
  type: 'speech-start';
  /** Start of the first frame over the start threshold. */
  startMs: number;
  /** startMs minus the pre-roll, never below 0: where audio for STT should begin. */
  paddedStartMs: number;
  /** End of the frame on which the decision was made (startMs + minSpeechMs, roughly). */
  detectedAtMs: number;
}

export interface SpeechEndEvent {
  type: 'speech-end';
  startMs: number;
  /** Start of the first silent frame of the closing silence. */
  endMs: number;
  /** End of the frame on which the decision was made (endMs + minSilenceMs, roughly). */
  detectedAtMs: number;
}

export type SpeechEvent = SpeechStartEvent | SpeechEndEvent;

export const DEFAULT_SPEECH_DETECTOR_OPTIONS: Readonly<Required<SpeechDetectorOptions>> = Object.freeze({
  startThreshold: 0.5,
  endThreshold: 0.35,
  // Two frames: long enough to skip a one-frame blip, short enough that "yes" or "no" counts.
  minSpeechMs: 60,
  minSilenceMs: 300,
  preRollMs: 200,
  frameMs: 20,
});

type Phase =
  | { kind: 'silence' }
  | { kind: 'onset'; startMs: number }
  | { kind: 'speech'; startMs: number }
  | { kind: 'trailing'; startMs: number; silenceFromMs: number };

export class SpeechDetector {
  readonly options: Readonly<Required<SpeechDetectorOptions>>;
  private phase: Phase = { kind: 'silence' };
  private lastFrameEndMs = 0;

  constructor(options: SpeechDetectorOptions = {}) {
    const o = { ...DEFAULT_SPEECH_DETECTOR_OPTIONS, ...options };
    if (!(o.endThreshold <= o.startThreshold)) throw new RangeError('endThreshold must be <= startThreshold');
    if (o.frameMs <= 0) throw new RangeError('frameMs must be positive');
    this.options = Object.freeze(o);
  }

  /** True from speech-start until speech-end. */
  get speaking(): boolean {
    return this.phase.kind === 'speech' || this.phase.kind === 'trailing';
  }

  /**
   * Feed the probability for the frame starting at `frameStartMs` (ms on the stream's clock).
   * Returns the events decided on this frame: none or one (an array so callers can spread it).
   */
  push(probability: number, frameStartMs: number): SpeechEvent[] {
    const o = this.options;
    const frameEndMs = frameStartMs + o.frameMs;
    this.lastFrameEndMs = frameEndMs;
    const p = this.phase;
    switch (p.kind) {
      case 'silence':
        if (probability >= o.startThreshold) {
          this.phase = { kind: 'onset', startMs: frameStartMs };
          return this.confirmOnset(frameEndMs);
        }
        return [];
      case 'onset':
        if (probability < o.endThreshold) {
          this.phase = { kind: 'silence' };
          return [];
        }
        return this.confirmOnset(frameEndMs);
      case 'speech':
        if (probability < o.endThreshold) {
          this.phase = { kind: 'trailing', startMs: p.startMs, silenceFromMs: frameStartMs };
          return this.confirmEnd(frameEndMs);
        }
        return [];
      case 'trailing':
        if (probability >= o.startThreshold) {
          this.phase = { kind: 'speech', startMs: p.startMs };
          return [];
        }
        return this.confirmEnd(frameEndMs);
    }
  }

  /**
   * End of stream (hang-up, or the caller's audio stops): closes an open segment at the last
   * frame's end so every speech-start has its speech-end. A pending onset is dropped.
   */
  flush(): SpeechEvent[] {
    const p = this.phase;
    this.phase = { kind: 'silence' };
    if (p.kind === 'speech') return [{ type: 'speech-end', startMs: p.startMs, endMs: this.lastFrameEndMs, detectedAtMs: this.lastFrameEndMs }];
    if (p.kind === 'trailing') return [{ type: 'speech-end', startMs: p.startMs, endMs: p.silenceFromMs, detectedAtMs: this.lastFrameEndMs }];
    return [];
  }

  reset(): void {
    this.phase = { kind: 'silence' };
    this.lastFrameEndMs = 0;
  }

  private confirmOnset(frameEndMs: number): SpeechEvent[] {
    const p = this.phase;
    if (p.kind !== 'onset' || frameEndMs - p.startMs < this.options.minSpeechMs) return [];
    this.phase = { kind: 'speech', startMs: p.startMs };
    return [
      {
        type: 'speech-start',
        startMs: p.startMs,
        paddedStartMs: Math.max(0, p.startMs - this.options.preRollMs),
        detectedAtMs: frameEndMs,
      },
    ];
  }

  private confirmEnd(frameEndMs: number): SpeechEvent[] {
    const p = this.phase;
    if (p.kind !== 'trailing' || frameEndMs - p.silenceFromMs < this.options.minSilenceMs) return [];
    this.phase = { kind: 'silence' };
    return [{ type: 'speech-end', startMs: p.startMs, endMs: p.silenceFromMs, detectedAtMs: frameEndMs }];
  }
}
