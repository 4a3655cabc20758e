/**
 * Telephone-band caller frames that stay at 8 kHz until something needs 16 kHz.
 *
 * The media seam hands engines 16 kHz frames (frame.ts), and a G.711 call's audio is 8 kHz
 * upsampled at the codec edge. A pipeline call on such a line runs its denoiser, VAD and STT at
 * 8 kHz (src/call/cascade/listener.ts), so it would only decimate what the edge had just
 * upsampled: two half-band filters per frame, a tenth of the event-loop thread's work at 100 calls
 * (docs/bench-history.md, 2026-11-26 22:10). A NarrowbandFrame carries the 8 kHz samples it was decoded to
 * (`narrow`) and makes the 16 kHz `samples` only when they are first read (a recording, an echo,
 * a realtime model that takes PCM): then exactly what the edge's streaming resampler would have
 * made, since it keeps the 8 kHz samples before it (its predecessor's array) for the filter's
 * history.
 */
import { copySamples, SAMPLE_RATE, zeroSamples, type AudioFrame } from './frame.ts';
import { Resampler, upsample2, UPSAMPLE2_HISTORY } from './resample.ts';

/** The 8 kHz rate of a NarrowbandFrame's own samples. */
export const NARROWBAND_RATE = 8000;

/** History before a stream's first frame (and after a silent slot): zeros. */
const NO_HISTORY = new Int16Array(UPSAMPLE2_HISTORY);

export class NarrowbandFrame implements AudioFrame {
  readonly sampleRate = SAMPLE_RATE;
  /** PCMU calls: the μ-law bytes behind the frame (PassThroughFrame, src/media/media-types.ts). */
  mulaw?: Uint8Array;
  private wide: Int16Array | undefined;

  /**
   * `narrow`: the frame's 8 kHz samples, owned by the frame. `previous`: the 8 kHz samples just
   * before them (the last frame's `narrow`; at least UPSAMPLE2_HISTORY of them), not written to.
   * `silent`: the frame is known to be digital silence with silence before it.
   */
  constructor(
    readonly narrow: Int16Array,
    private readonly previous: Int16Array = NO_HISTORY,
    private readonly silent = false,
  ) {}

  /** A slot with nothing to play: 20 ms of digital silence, with none of the past in its filter. */
  static silence(narrowSamples = (NARROWBAND_RATE * 20) / 1000): NarrowbandFrame {
    return new NarrowbandFrame(zeroSamples(narrowSamples), NO_HISTORY, true);
  }

  /** The 16 kHz samples, made on first read. */
  get samples(): Int16Array {
    return (this.wide ??= this.silent ? zeroSamples(2 * this.narrow.length) : upsample2(this.previous, this.narrow));
  }
}

/** The 8 kHz samples behind a caller frame, when it has them (a NarrowbandFrame's `narrow`). */
export function narrowOf(frame: AudioFrame): Int16Array | undefined {
  return frame instanceof NarrowbandFrame ? frame.narrow : undefined;
}

/**
 * One call's caller audio at 8 kHz, frame by frame, for a reader that runs at the line's rate
 * (the cascade's listener, call control's STT taps): a G.711 frame's own samples, an 8 kHz frame
 * as it is, anything else (silence made elsewhere, a codec changed mid-call) decimated with this
 * reader's own filter, so its history carries across frames.
 */
export class NarrowbandReader {
  private decimator: Resampler | undefined;

  frame(frame: AudioFrame): AudioFrame {
    if (frame.sampleRate === NARROWBAND_RATE) return frame;
    const narrow = narrowOf(frame);
    if (narrow) return { samples: narrow, sampleRate: NARROWBAND_RATE };
    this.decimator ??= new Resampler(frame.sampleRate, NARROWBAND_RATE);
    return { samples: copySamples(this.decimator.processShared(frame.samples)), sampleRate: NARROWBAND_RATE };
  }
}
