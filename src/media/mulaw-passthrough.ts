/**
 * The inbound half of G.711 μ-law pass-through: on a PCMU call, each caller frame the session
 * delivers also carries the μ-law bytes behind it (PassThroughFrame, media-types.ts), so an
 * engine whose model takes μ-law sends them on untouched instead of encoding the 16 kHz frame
 * back down. The frame itself is still decoded as always: VAD, recording and call rules read it.
 *
 * Per playout slot: the payloads the jitter buffer handed out in that slot (reordered, in
 * sequence), a lost packet as its concealment (the decoder's frames, encoded: the only encode on
 * this path, and only for losses), and a slot with nothing to play as 20 ms of μ-law silence.
 * At ptime 20 that is exactly the frame's own payload; at other ptimes the bytes of a slot need
 * not be the frame's samples, but consecutive slots still add up to the caller's stream.
 */
import type { AudioFrame } from '../audio/frame.ts';
import { NarrowbandFrame, narrowOf } from '../audio/narrowband-frame.ts';
import { Resampler } from '../audio/resample.ts';
import type { Codec } from './codecs/codec.ts';
import { ulaw } from './codecs/g711.ts';
import { G711_FRAME_BYTES, type PassThroughFrame } from './media-types.ts';

/** μ-law for 0 (positive zero): what a slot with nothing to play carries. */
const SILENCE = new Uint8Array(G711_FRAME_BYTES).fill(0xff);
const NOTHING = new Uint8Array(0);

export class InboundMulaw {
  /**
   * The slot's payloads are parts[0 .. count). Reused slot after slot: emptying an array with
   * `length = 0` makes V8 drop its backing store, so the next push would allocate a new one.
   */
  private readonly parts: Uint8Array[] = [];
  private count = 0;
  /** False once the slot pulled a payload of another codec: its frame goes without bytes. */
  private whole = true;
  private downsampler: Resampler | undefined;

  /** A new playout slot. */
  begin(): void {
    this.count = 0;
    this.whole = true;
  }

  /** A payload the jitter buffer handed out in this slot, and the codec it decodes with. */
  payload(bytes: Uint8Array, codec: Codec | undefined): void {
    if (codec?.name === 'PCMU') this.parts[this.count++] = bytes;
    else this.whole = false;
  }

  /** Frames standing in for a lost packet. */
  concealed(frames: readonly AudioFrame[]): void {
    for (const f of frames) {
      const narrow = narrowOf(f);
      if (narrow) this.parts[this.count++] = ulaw.encode(narrow);
      else {
        this.downsampler ??= new Resampler(f.sampleRate, 8000);
        this.parts[this.count++] = ulaw.encode(this.downsampler.process(f.samples));
      }
    }
  }

  /** The slot's frame with its bytes (`silent`: nothing was there to play). */
  attach(frame: AudioFrame, silent: boolean): AudioFrame {
    if (!this.whole) return frame;
    let mulaw: Uint8Array;
    if (this.count === 1) mulaw = this.parts[0]!;
    else if (this.count === 0) mulaw = silent ? SILENCE : NOTHING;
    else mulaw = Buffer.concat(this.parts.slice(0, this.count));
    // A telephone-band frame takes the bytes itself: a copy would read (and so make) its 16 kHz samples.
    if (frame instanceof NarrowbandFrame) {
      frame.mulaw = mulaw;
      return frame;
    }
    const out: PassThroughFrame = { samples: frame.samples, sampleRate: frame.sampleRate, mulaw };
    return out;
  }
}
