import { FadeConcealer, type Codec, type CodecDecoder, type CodecEncoder } from './codec.ts';
import { ulaw } from './g711.ts';

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
  encoder: (): CodecEncoder => ({ encode: (pcm) => ulaw.encode(pcm) }),
  decoder: (): CodecDecoder => g711Decoder(ulaw.decode),
};

/** Shared by PCMU and PCMA: stateless decoding plus replay-and-fade concealment. */
export function g711Decoder(decode: (payload: Uint8Array) => Int16Array): CodecDecoder {
  const concealer = new FadeConcealer(160);
  return {
    decode(payload) {
      const pcm = decode(payload);
      concealer.remember(pcm);
      return pcm;
    },
    conceal: () => concealer.conceal(),
  };
}
