/**
 * The codec edge of the media path: RTP payloads on one side, the engine's 16 kHz 20 ms
 * AudioFrames on the other. Resampling happens here and nowhere deeper (ARCHITECTURE.md §2);
 * a telephone-band (8 kHz) codec's frames are NarrowbandFrames, which keep their 8 kHz samples
 * and run this edge's 2× filter only when their 16 kHz samples are read
 * (src/audio/narrowband-frame.ts). Each direction keeps its own codec state, resampler history
 * and partial-frame remainder.
 */
import { copySamples, FRAME_MS, FrameChunker, SAMPLE_RATE, samplesPerFrame, type AudioFrame } from '../../audio/frame.ts';
import { NARROWBAND_RATE, NarrowbandFrame, narrowOf } from '../../audio/narrowband-frame.ts';
import { Resampler } from '../../audio/resample.ts';
import { pcmSamples, rtpTicks, type Codec, type CodecDecoder, type CodecEncoder } from './codec.ts';

/** RTP payloads → AudioFrames. */
export class InboundTranscoder {
  private readonly decoder: CodecDecoder;
  /** Wideband codecs: to the engine rate. Telephone-band ones upsample per frame, on demand. */
  private readonly resampler: Resampler | undefined;
  private readonly chunker: FrameChunker;
  /** Telephone band: the last frame's 8 kHz samples, the next one's filter history. */
  private previous: Int16Array | undefined;

  constructor(readonly codec: Codec) {
    this.decoder = codec.decoder();
    // A G.711 frame keeps its 8 kHz samples and makes the 16 kHz ones only when they are read
    // (NarrowbandFrame): the pipeline's denoiser, VAD and STT run at 8 kHz on such calls.
    const narrow = codec.sampleRate === NARROWBAND_RATE;
    this.resampler = narrow ? undefined : new Resampler(codec.sampleRate, SAMPLE_RATE);
    this.chunker = narrow ? new FrameChunker(samplesPerFrame(NARROWBAND_RATE), NARROWBAND_RATE) : new FrameChunker();
  }

  /** Usually one frame per 20 ms packet; 0 or 2 around odd packet sizes (ptime 30, 10). */
  decode(payload: Uint8Array): AudioFrame[] {
    const frames: AudioFrame[] = [];
    this.decodeInto(payload, frames);
    return frames;
  }

  /**
   * As decode(), appending to the caller's frame queue (returns how many): nothing allocated per
   * packet but the frames themselves. A decode that throws (corrupt payload) appends nothing.
   */
  decodeInto(payload: Uint8Array, frames: AudioFrame[]): number {
    // Shared buffers all the way down to the chunker, which copies what it keeps: the decoded
    // PCM only feeds the resampler (or the chunker), and the resampler's output only the chunker.
    const pcm = this.decoder.decodeShared ? this.decoder.decodeShared(payload) : this.decoder.decode(payload);
    return this.frames(this.resampler ? this.resampler.processShared(pcm) : pcm, frames);
  }

  /** Frames standing in for one lost packet, produced by the codec's concealment. */
  conceal(): AudioFrame[] {
    const pcm = this.decoder.concealShared ? this.decoder.concealShared() : this.decoder.conceal();
    const frames: AudioFrame[] = [];
    this.frames(this.resampler ? this.resampler.processShared(pcm) : pcm, frames);
    return frames;
  }

  close(): void {
    this.decoder.close?.();
  }

  /** `pcm` (at the chunker's rate) cut into frames appended to `frames`; returns how many. */
  private frames(pcm: Int16Array, frames: AudioFrame[]): number {
    const chunker = this.chunker;
    if (chunker.pending === 0 && pcm.length === chunker.frameSamples) {
      // The usual packet (20 ms, nothing held back): exactly the frame the chunker would make,
      // without the view of `pcm` it cuts for it.
      frames.push(this.frame({ samples: copySamples(pcm), sampleRate: chunker.sampleRate }));
      return 1;
    }
    const before = frames.length;
    const n = chunker.pushInto(pcm, frames);
    if (!this.resampler) for (let i = before; i < frames.length; i++) frames[i] = this.frame(frames[i]!);
    return n;
  }

  /** A frame at the chunker's rate as the engine gets it. */
  private frame(chunk: AudioFrame): AudioFrame {
    if (this.resampler) return chunk;
    const frame = new NarrowbandFrame(chunk.samples, this.previous);
    this.previous = chunk.samples;
    return frame;
  }
}

/** A 20 ms frame of silence at the engine rate; never written to, so one serves every call. */
const SILENT_FRAME: AudioFrame = Object.freeze({ samples: new Int16Array(SAMPLE_RATE / (1000 / FRAME_MS)), sampleRate: SAMPLE_RATE });

/** Encoded silence for stateless codecs, per codec and packet time: the same bytes every time. */
const silencePayloads = new WeakMap<Codec, Map<number, Buffer>>();

/**
 * Silence frames after audio before the resampler's history is all zeros again (its filter is
 * far shorter than a frame, so one would do; two leave margin), from which point a packet of
 * silence is exactly the cached payload.
 */
const QUIET_AFTER_FRAMES = 2;

/** AudioFrames → RTP payloads of `ptimeMs` each. */
export class OutboundTranscoder {
  private readonly encoder: CodecEncoder;
  private resampler: Resampler;
  private readonly packetizer: FrameChunker;
  /** Silence frames encoded since the last audio frame (or reset). */
  private silentRun = QUIET_AFTER_FRAMES;
  private cachedSilence: Buffer[] | undefined;
  /** What encode() returns, and the packetizer's frames: reused per call (one packet a frame, 50 a second). */
  private readonly payloads: Buffer[] = [];
  private readonly packets: AudioFrame[] = [];
  /**
   * What encode() returns in the usual case (one payload): a one-element array whose element is
   * replaced. Not `payloads` emptied with `length = 0`, which makes V8 drop its backing store, so
   * that every push would allocate a new one.
   */
  private readonly one: Buffer[] = [Buffer.alloc(0)];
  private inRoom = false;
  /** The resampler was passed over for a frame at the codec's own rate (see pcmAtCodecRate). */
  private skipped = false;

  /**
   * `headerRoom` > 0 (the send path: RTP_HEADER_LENGTH): where the encoder can write into a
   * caller's buffer, a frame that makes exactly one packet comes back as a new Buffer with
   * `headerRoom` bytes left free before the payload, for the sender to fill in the header and
   * send as it is (no payload Buffer copied into a datagram). `encodedInRoom` tells which.
   */
  constructor(
    readonly codec: Codec,
    readonly ptimeMs = FRAME_MS,
    readonly headerRoom = 0,
  ) {
    this.encoder = codec.encoder();
    this.resampler = new Resampler(SAMPLE_RATE, codec.sampleRate);
    this.packetizer = new FrameChunker(pcmSamples(codec, ptimeMs), codec.sampleRate);
  }

  /**
   * Whether the payloads the last encode() or encodeSilence() returned (then exactly one) start
   * `headerRoom` bytes into their Buffer, after room for the header (see the constructor).
   * Always false without `headerRoom`.
   */
  get encodedInRoom(): boolean {
    return this.inRoom;
  }

  /** RTP timestamp increment per payload returned by encode(). */
  get ticksPerPacket(): number {
    return rtpTicks(this.codec, this.ptimeMs);
  }

  /**
   * Zero or more payloads: with ptime 40 every second frame yields one, with 10 each yields two.
   * The array (not the payloads) is reused by the next call: take the payloads out at once.
   */
  encode(frame: AudioFrame): Buffer[] {
    this.silentRun = 0;
    return this.encodePcm(frame);
  }

  /**
   * One frame of silence. For a stateless codec at a 20 ms packet time, once the resampler and
   * packetizer hold nothing but zeros, this is the cached payload (no resampling, no encoding);
   * until then (the tail of the last audio is still in the filter) it is encoded as usual.
   */
  encodeSilence(): Buffer[] {
    if (this.silentRun >= QUIET_AFTER_FRAMES && this.codec.stateless && this.ptimeMs === FRAME_MS && this.packetizer.pending === 0) {
      this.cachedSilence ??= [this.silencePayload()];
      this.inRoom = false;
      return this.cachedSilence;
    }
    this.silentRun++;
    return this.encodePcm(SILENT_FRAME);
  }

  /**
   * The frame's PCM at the codec's rate. A G.711 caller frame going out on a G.711 call (the echo
   * number, a bridged leg) is its own 8 kHz samples: no 2× up on read and 2× down here, and not
   * even the round trip's 3 ms. The resampler skips those frames, so the first frame after a run
   * of them starts it afresh rather than on history from before the run.
   */
  private pcmAtCodecRate(frame: AudioFrame): Int16Array {
    const narrow = this.codec.sampleRate === NARROWBAND_RATE ? narrowOf(frame) : undefined;
    if (narrow) {
      this.skipped = true;
      return narrow;
    }
    if (frame.sampleRate !== this.resampler.fromRate || this.skipped) {
      // A source at another rate (a provider that skipped the edge) still plays correctly.
      this.resampler = new Resampler(frame.sampleRate, this.codec.sampleRate);
      this.skipped = false;
    }
    // processShared: the packetizer copies what it keeps, so the resampler's buffer is reused.
    return this.resampler.processShared(frame.samples);
  }

  private silencePayload(): Buffer {
    let byPtime = silencePayloads.get(this.codec);
    if (!byPtime) silencePayloads.set(this.codec, (byPtime = new Map()));
    let payload = byPtime.get(this.ptimeMs);
    if (!payload) {
      payload = this.codec.encoder().encode(new Int16Array(pcmSamples(this.codec, this.ptimeMs)));
      byPtime.set(this.ptimeMs, payload);
    }
    return payload;
  }

  private encodePcm(frame: AudioFrame): Buffer[] {
    const pcm = this.pcmAtCodecRate(frame);
    this.inRoom = false;
    if (this.packetizer.pending === 0 && pcm.length === this.packetizer.frameSamples) {
      // The usual case (20 ms in, 20 ms packets): encode straight from the resampler's buffer,
      // into the datagram-to-be when the sender left room for the header.
      const encoder = this.encoder;
      const one = this.one;
      if (this.headerRoom > 0 && encoder.encodeInto && encoder.encodedLength) {
        const room = this.headerRoom;
        const buf = Buffer.allocUnsafe(room + encoder.encodedLength(pcm.length));
        encoder.encodeInto(pcm, buf, room);
        one[0] = buf;
        this.inRoom = true;
        return one;
      }
      one[0] = encoder.encode(pcm);
      return one;
    }
    const out = this.payloads;
    out.length = 0;
    const packets = this.packets;
    packets.length = 0;
    this.packetizer.pushInto(pcm, packets);
    for (const packet of packets) out.push(this.encoder.encode(packet.samples));
    packets.length = 0;
    return out;
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
    this.silentRun = QUIET_AFTER_FRAMES;
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
