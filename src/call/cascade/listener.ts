/**
 * The caller's side of the pipeline, one frame at a time: (denoise) → STT → VAD → speech events.
 * Frames are processed strictly in order and the loop only asks for the next frame once the
 * VAD has answered for this one, which keeps the detector's timeline exact and gives a virtual
 * clock driver a clear "idle" point.
 *
 * The denoiser may answer synchronously (in-thread backends) or with a promise (the worker-backed
 * one, src/audio/denoise-worker.ts). The wait is tracked work, so a virtual clock stands still
 * while the worker denoises; STT still gets the clean frames strictly in order, then the VAD.
 *
 * Frame times are the call clock at the first frame plus 20 ms per frame: audio time, not
 * arrival time, so a late burst from the jitter buffer cannot bend the VAD's timeline.
 */
import type { DenoiseStreamLike } from '../../audio/denoise-gate.ts';
import { FRAME_MS, type AudioFrame } from '../../audio/frame.ts';
import type { SpeechDetector, SpeechEvent } from '../../audio/vad/detector.ts';
import type { RecordingSink } from '../recorder.ts';
import type { WorkTracker } from './work.ts';

export interface VadStreamLike {
  push(frame: AudioFrame): Promise<number>;
}

/**
 * Per-call options of the shared caller-side models. `narrowband`: the call's codec carries only
 * the telephone band (G.711, see `isNarrowbandCodec`), so the VAD and the denoiser may run at
 * 8 kHz inside (the same 16 kHz frames in and out) for about half their CPU.
 */
export interface CallerAudioOptions {
  narrowband?: boolean;
}

/** The shared Silero model (SileroVad): one stream per call. */
export interface VadFactory {
  createStream(options?: CallerAudioOptions): VadStreamLike;
}

/** The shared denoiser backend: one stream per call. */
export interface DenoiserFactory {
  createStream(options?: CallerAudioOptions): DenoiseStreamLike;
}

export interface ListenerOptions {
  inbound: AsyncIterable<AudioFrame>;
  vad: VadStreamLike;
  detector: SpeechDetector;
  denoise?: DenoiseStreamLike | undefined;
  /** Where caller audio goes for transcription (the call's STT stream, through SttReader). */
  stt: { write(frame: AudioFrame): void };
  recorder?: RecordingSink | undefined;
  work: WorkTracker;
  /** ms since answer. */
  now: () => number;
  signal: AbortSignal;
  onSpeech(events: SpeechEvent[]): void;
}

const isPromise = (x: AudioFrame | Promise<AudioFrame>): x is Promise<AudioFrame> => typeof (x as Promise<AudioFrame>).then === 'function';

export async function listen(o: ListenerOptions): Promise<void> {
  let audioMs: number | undefined;
  for await (const frame of o.inbound) {
    if (o.signal.aborted) break;
    const frameMs = (frame.samples.length / frame.sampleRate) * 1000 || FRAME_MS;
    // The first frame arrived at its end: it started one frame earlier.
    audioMs ??= Math.max(0, o.now() - frameMs);
    const startMs = audioMs;
    audioMs += frameMs;
    o.recorder?.caller(startMs, frame.samples);
    let clean = o.denoise ? o.denoise.process(frame) : frame;
    if (isPromise(clean)) {
      clean = await o.work.track(clean);
      if (o.signal.aborted) break;
    }
    o.stt.write(clean);
    const probability = await o.work.track(o.vad.push(clean));
    if (o.signal.aborted) break;
    const events = o.detector.push(probability, startMs);
    if (events.length > 0) o.onSpeech(events);
  }
  const tail = o.detector.flush();
  if (tail.length > 0 && !o.signal.aborted) o.onSpeech(tail);
}
