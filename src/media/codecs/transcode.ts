/**
 * The codec edge of the media path: RTP payloads on one side, the engine's 16 kHz 20 ms
 * AudioFrames on the other. Resampling happens here and nowhere deeper (ARCHITECTURE.md §2).
 * Each direction keeps its own codec state, resampler history and partial-frame remainder.
 */
import { FRAME_MS, FrameChunker, SAMPLE_RATE, type AudioFrame } from '../../audio/frame.ts';
import { Resampler } from '../../audio/resample.ts';
import { pcmSamples, rtpTicks, type Codec, type CodecDecoder, type CodecEncoder } from './codec.ts';

/** RTP payloads → AudioFrames. */
export class InboundTranscoder {
  private readonly decoder: CodecDecoder;
  private readonly resampler: Resampler;
  private readonly chunker = new FrameChunker();

  constructor(readonly codec: Codec) {
    this.decoder = codec.decoder();
    this.resampler = new Resampler(codec.sampleRate, SAMPLE_RATE);
  }

  /** Usually one frame per 20 ms packet; 0 or 2 around odd packet sizes (ptime 30, 10). */
  decode(payload: Uint8Array): AudioFrame[] {
    return this.chunker.push(this.resampler.process(this.decoder.decode(payload)));
  }

  /** Frames standing in for one lost packet, produced by the codec's concealment. */
  conceal(): AudioFrame[] {
    return this.chunker.push(this.resampler.process(this.decoder.conceal()));
  }

  close(): void {
    this.decoder.close?.();
  }
}

/** AudioFrames → RTP payloads of `ptimeMs` each. */
export class OutboundTranscoder {
  private readonly encoder: CodecEncoder;
  private resampler: Resampler;
  private readonly packetizer: FrameChunker;

  constructor(
    readonly codec: Codec,
    readonly ptimeMs = FRAME_MS,
  ) {
    this.encoder = codec.encoder();
    this.resampler = new Resampler(SAMPLE_RATE, codec.sampleRate);
    this.packetizer = new FrameChunker(pcmSamples(codec, ptimeMs), codec.sampleRate);
  }

  /** RTP timestamp increment per payload returned by encode(). */
  get ticksPerPacket(): number {
    return rtpTicks(this.codec, this.ptimeMs);
  }

  /** Zero or more payloads: with ptime 40 every second frame yields one, with 10 each yields two. */
  encode(frame: AudioFrame): Buffer[] {
    if (frame.sampleRate !== this.resampler.fromRate) {
      // A source at another rate (a provider that skipped the edge) still plays correctly.
      this.resampler = new Resampler(frame.sampleRate, this.codec.sampleRate);
    }
    const pcm = this.resampler.process(frame.samples);
    return this.packetizer.push(pcm).map((packet) => this.encoder.encode(packet.samples));
  }

  /** Encode what is held back, padded with silence (end of playout before a pause). */
  flush(): Buffer | undefined {
    const last = this.packetizer.flush();
    return last ? this.encoder.encode(last.samples) : undefined;
  }

  /** Forget buffered audio, e.g. on barge-in, so stale speech is not sent late. */
  reset(): void {
    this.packetizer.reset();
    this.resampler.reset();
  }

  close(): void {
    this.encoder.close?.();
  }
}

/** Both directions of one call's media, negotiated to the same codec and packet time. */
export class MediaTranscoder {
  readonly inbound: InboundTranscoder;
  readonly outbound: OutboundTranscoder;

  constructor(codec: Codec, options: { ptimeMs?: number } = {}) {
    this.inbound = new InboundTranscoder(codec);
    this.outbound = new OutboundTranscoder(codec, options.ptimeMs ?? FRAME_MS);
  }

  decode(payload: Uint8Array): AudioFrame[] {
    return this.inbound.decode(payload);
  }

  conceal(): AudioFrame[] {
    return this.inbound.conceal();
  }

  encode(frame: AudioFrame): Buffer[] {
    return this.outbound.encode(frame);
  }

  close(): void {
    this.inbound.close();
    this.outbound.close();
  }
}
