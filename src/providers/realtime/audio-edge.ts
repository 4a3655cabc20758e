/**
 * The provider edge of the audio path: the only place realtime audio is resampled or companded.
 * Caller frames (16 kHz) become the model's input format; the model's output becomes 20 ms
 * 16 kHz frames, or stays μ-law in 20 ms payloads so a μ-law call never decodes it at all.
 */
import { FrameChunker, pcmFromBytes, pcmToBytes, SAMPLE_RATE, type AudioFrame } from '../../audio/frame.ts';
import { Resampler } from '../../audio/resample.ts';
import { alaw, ulaw } from '../../media/codecs/g711.ts';
import { G711_FRAME_BYTES } from '../../media/media-types.ts';
import type { RealtimeAudioFormat } from './realtime.ts';

export const PCM24K_RATE = 24_000;
const G711_RATE = 8_000;
export { G711_FRAME_BYTES };
/** μ-law's code for zero, used to pad a final partial payload. */
const ULAW_SILENCE = 0xff;

/** Bytes of the format per millisecond of audio (for received/sent-ms accounting). */
export function bytesPerMs(format: RealtimeAudioFormat): number {
  return format === 'pcm24k' ? (PCM24K_RATE * 2) / 1000 : G711_RATE / 1000;
}

function formatRate(format: RealtimeAudioFormat): number {
  return format === 'pcm24k' ? PCM24K_RATE : G711_RATE;
}

/** Caller audio → bytes in the model's input format. One per connection (keeps filter state). */
export class InputEncoder {
  private readonly fromFrames: Resampler;
  private fromMulaw: Resampler | undefined;

  constructor(readonly format: RealtimeAudioFormat) {
    this.fromFrames = new Resampler(SAMPLE_RATE, formatRate(format));
  }

  frame(frame: AudioFrame): Buffer {
    if (frame.sampleRate !== SAMPLE_RATE) throw new RangeError(`realtime input takes ${SAMPLE_RATE} Hz frames, got ${frame.sampleRate}`);
    const pcm = this.fromFrames.process(frame.samples);
    if (this.format === 'pcm24k') return pcmToBytes(pcm);
    return (this.format === 'pcmu' ? ulaw : alaw).encode(pcm);
  }

  /** μ-law from the caller: untouched when the model takes μ-law, else decoded at the edge. */
  mulaw(payload: Uint8Array): Buffer {
    if (this.format === 'pcmu') return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    const pcm = ulaw.decode(payload);
    if (this.format === 'pcma') return alaw.encode(pcm);
    this.fromMulaw ??= new Resampler(G711_RATE, PCM24K_RATE);
    return pcmToBytes(this.fromMulaw.process(pcm));
  }
}

export interface DecodedAudio {
  frames?: AudioFrame[];
  mulaw?: Uint8Array[];
}

/**
 * Model audio → frames or μ-law payloads. Deltas have arbitrary lengths (and PCM deltas may even
 * split a sample), so remainders are carried across pushes; `flush` ends one item's audio.
 */
export class OutputDecoder {
  private readonly resampler: Resampler | undefined;
  private readonly chunker = new FrameChunker();
  /** A PCM byte left over when a delta ended mid-sample. */
  private oddByte: number | undefined;
  private readonly g711 = Buffer.alloc(G711_FRAME_BYTES);
  private g711Fill = 0;

  constructor(readonly format: RealtimeAudioFormat) {
    this.resampler = format === 'pcmu' ? undefined : new Resampler(formatRate(format), SAMPLE_RATE);
  }

  push(bytes: Uint8Array): DecodedAudio {
    if (this.format === 'pcmu') return { mulaw: this.pushG711(bytes) };
    let pcm: Int16Array;
    if (this.format === 'pcma') {
      pcm = alaw.decode(bytes);
    } else {
      let b = bytes;
      if (this.oddByte !== undefined) {
        b = Buffer.concat([Uint8Array.of(this.oddByte), bytes]);
        this.oddByte = undefined;
      }
      if (b.length % 2 === 1) {
        this.oddByte = b[b.length - 1];
        b = b.subarray(0, b.length - 1);
      }
      pcm = pcmFromBytes(b);
    }
    // The chunker copies what it keeps, so the resampler's reused output buffer will do.
    return { frames: this.chunker.push(this.resampler!.processShared(pcm)) };
  }

  /** End of an item: release what the filter and chunkers hold, padding the last frame. */
  flush(): DecodedAudio {
    if (this.format === 'pcmu') {
      if (this.g711Fill === 0) return { mulaw: [] };
      const last = Buffer.alloc(G711_FRAME_BYTES, ULAW_SILENCE);
      this.g711.copy(last, 0, 0, this.g711Fill);
      this.g711Fill = 0;
      return { mulaw: [last] };
    }
    const frames = this.chunker.push(this.resampler!.flush());
    const last = this.chunker.flush();
    if (last) frames.push(last);
    this.reset();
    return { frames };
  }

  /** Drop everything held (a new item starts, or the answer was interrupted). */
  reset(): void {
    this.resampler?.reset();
    this.chunker.reset();
    this.oddByte = undefined;
    this.g711Fill = 0;
  }

  private pushG711(bytes: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let at = 0;
    if (this.g711Fill > 0) {
      const take = Math.min(G711_FRAME_BYTES - this.g711Fill, bytes.length);
      this.g711.set(bytes.subarray(0, take), this.g711Fill);
      this.g711Fill += take;
      at = take;
      if (this.g711Fill < G711_FRAME_BYTES) return out;
      out.push(Buffer.from(this.g711));
      this.g711Fill = 0;
    }
    // Payloads are copies: the caller may hold them in a jitter/pacing queue after we move on.
    for (; at + G711_FRAME_BYTES <= bytes.length; at += G711_FRAME_BYTES) out.push(Buffer.from(bytes.subarray(at, at + G711_FRAME_BYTES)));
    if (at < bytes.length) {
      this.g711.set(bytes.subarray(at), 0);
      this.g711Fill = bytes.length - at;
    }
    return out;
  }
}
