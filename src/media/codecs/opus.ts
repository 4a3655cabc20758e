import opus from '@discordjs/opus';
import { pcmFromBytes, pcmToBytes } from '../../audio/frame.ts';
import { FadeConcealer, type Codec, type CodecDecoder, type CodecEncoder } from './codec.ts';

/** libopus CTL request numbers (opus_defines.h). */
const SET_APPLICATION = 4000;
const SET_BITRATE = 4002;
const SET_INBAND_FEC = 4012;
const SET_PACKET_LOSS_PERC = 4014;
const SET_SIGNAL = 4024;
const APPLICATION_VOIP = 2048;
const SIGNAL_VOICE = 3001;

const RATE = 48_000;
const SAMPLES_20MS = 960;

export interface OpusOptions {
  /** Target bit rate in bit/s; libopus picks one when unset (about 24-32 kbit/s mono). */
  bitrate?: number;
  /** Send in-band FEC so the far end can rebuild a lost packet from the next one. */
  inbandFec?: boolean;
  /** Expected loss, which tells the encoder how much redundancy FEC is worth. */
  packetLossPercent?: number;
}

/**
 * Opus through libopus (@discordjs/opus), mono at 48 kHz. SDP always says opus/48000/2
 * (RFC 7587); a mono decoder downmixes stereo packets, so we never need a second channel.
 */
export function createOpusCodec(options: OpusOptions = {}): Codec {
  const fec = options.inbandFec ?? true;
  return {
    name: 'opus',
    payloadType: 111,
    clockRate: RATE,
    channels: 2,
    sampleRate: RATE,
    frameMs: 20,
    // Opus frames are 2.5..60 ms; 30 and 50 ms are not frame sizes.
    ptimesMs: [20, 10, 40, 60],
    fmtp: `minptime=10;useinbandfec=${fec ? 1 : 0}`,
    encoder: () => opusEncoder(options, fec),
    decoder: () => opusDecoder(),
  };
}

function opusEncoder(options: OpusOptions, fec: boolean): CodecEncoder {
  const native = new opus.OpusEncoder(RATE, 1);
  // Only possible before the first frame: VOIP mode favours speech intelligibility.
  native.applyEncoderCTL(SET_APPLICATION, APPLICATION_VOIP);
  native.applyEncoderCTL(SET_SIGNAL, SIGNAL_VOICE);
  if (options.bitrate !== undefined) native.applyEncoderCTL(SET_BITRATE, options.bitrate);
  if (fec) {
    native.applyEncoderCTL(SET_INBAND_FEC, 1);
    native.applyEncoderCTL(SET_PACKET_LOSS_PERC, options.packetLossPercent ?? 10);
  }
  return { encode: (pcm) => native.encode(pcmToBytes(pcm)) };
}

function opusDecoder(): CodecDecoder {
  const native = new opus.OpusEncoder(RATE, 1);
  const fallback = new FadeConcealer(SAMPLES_20MS);
  let lastSamples = SAMPLES_20MS;
  let decodedAny = false;
  return {
    decode(payload) {
      const pcm = pcmFromBytes(native.decode(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)));
      lastSamples = pcm.length;
      decodedAny = true;
      fallback.remember(pcm);
      return pcm;
    },
    conceal() {
      if (!decodedAny) return new Int16Array(lastSamples);
      try {
        // An empty packet asks libopus for its own PLC. The binding always requests its maximum
        // frame (120 ms), so we keep the first packet's worth; the decoder's internal clock runs
        // ahead, which libopus absorbs when the next real packet arrives.
        const plc = pcmFromBytes(native.decode(Buffer.alloc(0)));
        if (plc.length >= lastSamples) return plc.slice(0, lastSamples);
      } catch {
        // Fall through to the generic fade when the native PLC refuses.
      }
      return fallback.conceal();
    },
  };
}

/** Default instance with in-band FEC on and libopus's own bit rate choice. */
export const opusCodec: Codec = createOpusCodec();
