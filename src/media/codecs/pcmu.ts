import { FadeConcealer, PcmScratch, type Codec, type CodecDecoder, type CodecEncoder } from './codec.ts';
import { ulaw, type CompandingLaw } from './g711.ts';

/** G.711 μ-law, RTP payload type 0 (RFC 3551). */
export const pcmu: Codec = {
  name: 'PCMU',
  payloadType: 0,
  clockRate: 8000,
  channels: 1,
  sampleRate: 8000,
  frameMs: 20,
  stateless: true,
  ptimesMs: [20, 10, 30, 40, 50, 60],
  encoder: (): CodecEncoder => g711Encoder(ulaw),
  decoder: (): CodecDecoder => g711Decoder(ulaw),
};

/** Shared by PCMU and PCMA: stateless, one octet per sample, so it can encode into the datagram. */
export function g711Encoder(law: CompandingLaw): CodecEncoder {
  return { encode: law.encode, encodedLength: (samples) => samples, encodeInto: law.encodeInto };
}

/** Shared by PCMU and PCMA: stateless decoding plus replay-and-fade concealment. */
export function g711Decoder(law: CompandingLaw): CodecDecoder {
  const concealer = new FadeConcealer(160);
  // decodeShared's buffer; the concealer may hold it as "last", which is fine: every decode
  // that overwrites it remembers it again.
  const scratch = new PcmScratch();
  return {
    decode(payload) {
      const pcm = law.decode(payload);
      concealer.remember(pcm);
      return pcm;
    },
    decodeShared(payload) {
      const pcm = law.decodeInto(payload, scratch.view(payload.length));
      concealer.remember(pcm);
      return pcm;
    },
    conceal: () => concealer.conceal(),
    concealShared: () => concealer.concealShared(),
  };
}
