import { FadeConcealer, type Codec } from './codec.ts';
import { G722Decoder, G722Encoder } from './g722-core.ts';

/**
 * G.722 at 64 kbit/s: 16 kHz wideband, one octet per two samples. Static payload type 9 and,
 * by an erratum kept for compatibility, an RTP clock of 8000 (RFC 3551 §4.5.2): 20 ms is 320
 * samples and 160 octets but only 160 timestamp ticks.
 */
export const g722: Codec = {
  name: 'G722',
  payloadType: 9,
  clockRate: 8000,
  channels: 1,
  sampleRate: 16000,
  frameMs: 20,
  ptimesMs: [20, 10, 30, 40, 50, 60],
  encoder() {
    const enc = new G722Encoder();
    return {
      encode: (pcm) => enc.encode(pcm),
      encodedLength: (samples) => enc.encodedLength(samples),
      encodeInto: (pcm, out, offset) => enc.encodeInto(pcm, out, offset),
    };
  },
  decoder() {
    const dec = new G722Decoder();
    // The ADPCM state is left as it was before the gap: the next real packet re-converges
    // within a few ms, which is gentler than feeding the predictor invented codes.
    const concealer = new FadeConcealer(320);
    return {
      decode(payload) {
        const pcm = dec.decode(payload);
        concealer.remember(pcm);
        return pcm;
      },
      conceal: () => concealer.conceal(),
    };
  },
};
