import type { Codec, CodecEncoder } from './codec.ts';
import { alaw } from './g711.ts';
import { g711Decoder, g711Encoder } from './pcmu.ts';

/** G.711 A-law, RTP payload type 8 (RFC 3551). */
export const pcma: Codec = {
  name: 'PCMA',
  payloadType: 8,
  clockRate: 8000,
  channels: 1,
  sampleRate: 8000,
  frameMs: 20,
  stateless: true,
  ptimesMs: [20, 10, 30, 40, 50, 60],
  encoder: (): CodecEncoder => g711Encoder(alaw),
  decoder: () => g711Decoder(alaw),
};
