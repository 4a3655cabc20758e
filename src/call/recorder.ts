/**
 * The call recording (`record`): a stereo WAV, caller on the left, assistant (with its ambient
 * bed) on the right, both placed by their time on the call clock rather than appended, so a gap
 * on one side (silence, an underrun, a dropped frame) can never shift the other side.
 */
import { writeFileAtomic } from '../util/write-file-atomic.ts';
import { join } from 'node:path';
import { SAMPLE_RATE } from '../audio/frame.ts';
import { Resampler } from '../audio/resample.ts';
import { interleaveStereo, writeWav } from '../audio/wav.ts';

/**
 * Where an engine run writes what it records, in ms on the run's own clock: the run's own
 * StereoRecorder, or (under the call runner) a shifted view onto the call's one recording, so
 * every engine run of a call (assistant swaps) lands on one timeline from answer.
 */
export interface RecordingSink {
  /** `samples` may be a buffer the caller reuses: copy what you keep. */
  caller(atMs: number, samples: Int16Array): void;
  assistant(atMs: number, samples: Int16Array): void;
}

/** `sink` as seen by a run that started `offsetMs` after the recording's zero. */
export function shiftedSink(sink: RecordingSink, offsetMs: number): RecordingSink {
  return {
    caller: (atMs, samples) => sink.caller(atMs + offsetMs, samples),
    assistant: (atMs, samples) => sink.assistant(atMs + offsetMs, samples),
  };
}

/**
 * `sink` whose assistant side is limited to the telephone band, for a G.711 call: what its caller
 * heard. The assistant's 16 kHz frames go through the 16 → 8 → 16 kHz half-band pair (as the
 * RTP encoder and a decoder would), placed earlier by the pair's delay (about 2 ms) so they stay
 * on the call clock. Without it the right channel would keep whatever the speech source had above
 * 4 kHz, including the aliases a telephone-band TTS resampler (Resampler `band: 'telephone'`)
 * leaves there because the encoder drops that band anyway.
 */
export function telephoneBandSink(sink: RecordingSink): RecordingSink {
  const down = new Resampler(SAMPLE_RATE, 8000);
  const up = new Resampler(8000, SAMPLE_RATE);
  const lagMs = ((down.delay * 2 + up.delay) / SAMPLE_RATE) * 1000;
  return {
    caller: (atMs, samples) => sink.caller(atMs, samples),
    assistant: (atMs, samples) => sink.assistant(Math.max(0, atMs - lagMs), up.processShared(down.processShared(samples))),
  };
}

/** Where a call's recording lives under SWITCHBOARD_DATA_DIR. */
export function recordingPath(dataDir: string, callUuid: string): string {
  return join(dataDir, 'recordings', `${callUuid}.wav`);
}

class Track {
  private buf = new Int16Array(SAMPLE_RATE * 10);
  /** Samples up to the furthest write. */
  length = 0;

  put(at: number, samples: Int16Array): void {
    if (at < 0) return;
    const end = at + samples.length;
    if (end > this.buf.length) {
      // Doubling keeps a 20-minute call at a few dozen copies in total.
      let size = this.buf.length;
      while (size < end) size *= 2;
      const next = new Int16Array(size);
      next.set(this.buf.subarray(0, this.length));
      this.buf = next;
    }
    this.buf.set(samples, at);
    this.length = Math.max(this.length, end);
  }

  take(length: number): Int16Array {
    const out = new Int16Array(length);
    out.set(this.buf.subarray(0, Math.min(length, this.length)));
    return out;
  }
}

export class StereoRecorder implements RecordingSink {
  private readonly left = new Track();
  private readonly right = new Track();

  constructor(readonly sampleRate = SAMPLE_RATE) {}

  /** Caller audio that started `atMs` after answer. */
  caller(atMs: number, samples: Int16Array): void {
    this.left.put(this.offset(atMs), samples);
  }

  /** Assistant audio as sent, starting to play `atMs` after answer. */
  assistant(atMs: number, samples: Int16Array): void {
    this.right.put(this.offset(atMs), samples);
  }

  get durationMs(): number {
    return (Math.max(this.left.length, this.right.length) / this.sampleRate) * 1000;
  }

  /** Both channels, equal length (the longer side wins, the other is padded with silence). */
  channels(): { left: Int16Array; right: Int16Array } {
    const n = Math.max(this.left.length, this.right.length);
    return { left: this.left.take(n), right: this.right.take(n) };
  }

  toWav(): Buffer {
    const { left, right } = this.channels();
    return writeWav({ sampleRate: this.sampleRate, channels: 2, samples: interleaveStereo(left, right) });
  }

  async save(path: string): Promise<void> {
    await writeFileAtomic(path, this.toWav());
  }

  private offset(atMs: number): number {
    return Math.round((atMs * this.sampleRate) / 1000);
  }
}
