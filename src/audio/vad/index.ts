/**
 * VAD entry point: the shared Silero model, the pure segment detector, and a stream adapter
 * joining them for a call's inbound AsyncIterable<AudioFrame>.
 */
import type { AudioFrame } from '../frame.ts';
import { FRAME_MS } from '../frame.ts';
import { SpeechDetector, type SpeechDetectorOptions, type SpeechEvent } from './detector.ts';
import type { SileroStream } from './silero.ts';

export * from './detector.ts';
export * from './silero.ts';

export interface VadFrameResult {
  /** Start of this frame on the stream's clock (frame index × 20 ms, from `startMs`). */
  frameStartMs: number;
  probability: number;
  events: SpeechEvent[];
}

/**
 * Run one call's frames through its SileroStream and a SpeechDetector, yielding every frame's
 * probability and events. Time is counted in frames, never read from a wall clock, so a replay
 * at any speed gives the same timeline. Open segments are closed when the frames end.
 */
export async function* detectSpeech(
  frames: AsyncIterable<AudioFrame> | Iterable<AudioFrame>,
  stream: SileroStream,
  options: SpeechDetectorOptions & { startMs?: number; signal?: AbortSignal } = {},
): AsyncGenerator<VadFrameResult> {
  const detector = new SpeechDetector(options);
  let at = options.startMs ?? 0;
  let lastStart = at;
  for await (const frame of frames) {
    options.signal?.throwIfAborted();
    const probability = await stream.push(frame);
    lastStart = at;
    yield { frameStartMs: at, probability, events: detector.push(probability, at) };
    at += (frame.samples.length / frame.sampleRate) * 1000 || FRAME_MS;
  }
  const tail = detector.flush();
  if (tail.length > 0) yield { frameStartMs: lastStart, probability: stream.probability, events: tail };
}
