/**
 * What the media layer needs to know about an RTP audio codec. A Codec is stateless description
 * plus factories; each call direction gets its own encoder/decoder because ADPCM, Opus and
 * concealment all carry state from one packet to the next.
 */
export interface Codec {
  /** Encoding name as written in SDP rtpmap (case preserved: 'PCMU', 'G722', 'opus'). */
  readonly name: string;
  /** Static payload type, or the dynamic one we use when we make the offer. */
  readonly payloadType: number;
  /** RTP timestamp clock (G.722 says 8000 although it samples at 16 kHz: RFC 3551 §4.5.2). */
  readonly clockRate: number;
  /** Channel count as written in SDP (opus is always "/2" per RFC 7587, even for mono). */
  readonly channels: number;
  /** Rate of the PCM that encode() takes and decode() returns. */
  readonly sampleRate: number;
  /** Frame duration the encoder is fed with by default. */
  readonly frameMs: number;
  /** Packet times (ms) the codec can produce; the first is the preferred one. */
  readonly ptimesMs: readonly number[];
  /** a=fmtp parameters we advertise, if any. */
  readonly fmtp?: string;
  /**
   * The encoder keeps no state from one packet to the next (G.711), so the payload for a
   * packet of silence is always the same bytes and may be encoded once and reused.
   */
  readonly stateless?: boolean;
  encoder(): CodecEncoder;
  decoder(): CodecDecoder;
}

export interface CodecEncoder {
  /** Mono PCM at codec.sampleRate, a whole number of codec frames → one RTP payload. */
  encode(pcm: Int16Array): Buffer;
  /**
   * Codecs whose payload size follows from the sample count (G.711, G.722), with encodeInto:
   * the octets the next encode of `samples` samples makes.
   */
  encodedLength?(samples: number): number;
  /**
   * As encode(), written into `out` at `offset` (encodedLength(pcm.length) octets, which the
   * caller has made room for); returns the octets written. Lets the send path encode straight
   * into the datagram. Optional, always together with encodedLength.
   */
  encodeInto?(pcm: Int16Array, out: Uint8Array, offset: number): number;
  close?(): void;
}

export interface CodecDecoder {
  /** One RTP payload → mono PCM at codec.sampleRate. */
  decode(payload: Uint8Array): Int16Array;
  /** PCM standing in for one lost packet of the last seen duration. */
  conceal(): Int16Array;
  /**
   * As decode() and conceal(), but the result is a view of a buffer the decoder reuses, valid
   * only until its next call: for callers that copy what they keep (the inbound transcoder feeds
   * it straight into the resampler). Optional; without them the caller uses decode()/conceal().
   */
  decodeShared?(payload: Uint8Array): Int16Array;
  concealShared?(): Int16Array;
  close?(): void;
}

/** RTP timestamp units per `ms` of audio for this codec. */
export function rtpTicks(codec: Codec, ms: number): number {
  return Math.round((codec.clockRate * ms) / 1000);
}

/** PCM samples (at codec.sampleRate) per `ms` of audio. */
export function pcmSamples(codec: Codec, ms: number): number {
  return Math.round((codec.sampleRate * ms) / 1000);
}

/**
 * A PCM buffer reused from call to call, for results that are only read before the next call:
 * `view(n)` hands back the same view while n stays the same (one frame size per stream), so
 * the steady state allocates nothing.
 */
export class PcmScratch {
  private buf = new Int16Array(0);
  private current = new Int16Array(0);

  /** n samples, contents unspecified; invalidates the previous view. */
  view(n: number): Int16Array {
    if (this.current.length === n) return this.current;
    if (this.buf.length < n) this.buf = new Int16Array(n);
    this.current = this.buf.subarray(0, n);
    return this.current;
  }
}

/**
 * Loss concealment for codecs without their own: replay the last good packet, fading out over a
 * few consecutive losses so a long gap decays to silence instead of buzzing.
 */
export class FadeConcealer {
  /** Only read by conceal*(); may be a decoder's reused buffer, as the decoder re-remembers it on every decode. */
  private last: Int16Array = new Int16Array(0);
  private lost = 0;
  private readonly scratch = new PcmScratch();

  /** Packets after which concealment is pure silence (3 × 20 ms = 60 ms of fade). */
  constructor(
    private readonly defaultSamples: number,
    private readonly fadePackets = 3,
  ) {}

  remember(pcm: Int16Array): void {
    this.last = pcm;
    this.lost = 0;
  }

  conceal(): Int16Array {
    return this.fill(new Int16Array(this.last.length || this.defaultSamples));
  }

  /** As conceal(), into a buffer reused by the next concealShared() call. */
  concealShared(): Int16Array {
    return this.fill(this.scratch.view(this.last.length || this.defaultSamples));
  }

  private fill(out: Int16Array): Int16Array {
    const n = out.length;
    if (this.last.length === 0 || this.lost >= this.fadePackets) {
      this.lost++;
      return out.fill(0);
    }
    // Linear gain ramp across the whole concealment run, continuous from packet to packet.
    const start = 1 - this.lost / this.fadePackets;
    const step = 1 / this.fadePackets / n;
    for (let i = 0; i < n; i++) out[i] = Math.round(this.last[i]! * (start - step * i));
    this.lost++;
    return out;
  }
}
