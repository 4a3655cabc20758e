/**
 * RIFF/WAVE reading and writing for 16-bit PCM only: fixtures, recordings and TTS output. Other
 * encodings are rejected loudly rather than misread as noise.
 */

export interface WavAudio {
  sampleRate: number;
  channels: number;
  /** Interleaved when channels > 1. */
  samples: Int16Array;
}

export class WavFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WavFormatError';
  }
}

const FORMAT_PCM = 1;
const FORMAT_EXTENSIBLE = 0xfffe;
const FORMAT_NAMES: Record<number, string> = { 3: 'IEEE float', 6: 'A-law', 7: 'μ-law', 0x11: 'IMA ADPCM', 0x55: 'MP3' };

export function readWav(bytes: Uint8Array): WavAudio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number): string => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') {
    throw new WavFormatError('not a RIFF/WAVE file');
  }
  let format: { sampleRate: number; channels: number } | undefined;
  let at = 12;
  while (at + 8 <= bytes.length) {
    const id = tag(at);
    const declared = view.getUint32(at + 4, true);
    const bodyAt = at + 8;
    // Streamed writers leave 0 or 0xFFFFFFFF as the data size: clamp to what is actually there.
    const size = Math.min(declared, bytes.length - bodyAt);
    if (id === 'fmt ') {
      format = parseFormat(view, bodyAt, size);
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('WAV data chunk comes before its fmt chunk');
      const frameBytes = 2 * format.channels;
      const available = declared === 0 ? bytes.length - bodyAt : size;
      const usable = available - (available % frameBytes);
      const samples = new Int16Array(usable / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(bodyAt + i * 2, true);
      return { ...format, samples };
    }
    // Chunks are word-aligned: an odd-sized chunk (LIST, bext, ...) is followed by a pad byte.
    at = bodyAt + size + (size & 1);
  }
  throw new WavFormatError(format ? 'WAV file has no data chunk' : 'WAV file has no fmt chunk');
}

function parseFormat(view: DataView, at: number, size: number): { sampleRate: number; channels: number } {
  if (size < 16) throw new WavFormatError('WAV fmt chunk is truncated');
  let formatTag = view.getUint16(at, true);
  const channels = view.getUint16(at + 2, true);
  const sampleRate = view.getUint32(at + 4, true);
  const bitsPerSample = view.getUint16(at + 14, true);
  if (formatTag === FORMAT_EXTENSIBLE) {
    // The real format is the first two bytes of the SubFormat GUID.
    if (size < 40) throw new WavFormatError('WAVE_FORMAT_EXTENSIBLE fmt chunk is truncated');
    formatTag = view.getUint16(at + 24, true);
  }
  if (formatTag !== FORMAT_PCM) {
    const name = FORMAT_NAMES[formatTag] ?? `format tag 0x${formatTag.toString(16)}`;
    throw new WavFormatError(`unsupported WAV encoding ${name}: only 16-bit PCM is supported`);
  }
  if (bitsPerSample !== 16) {
    throw new WavFormatError(`unsupported WAV sample size ${bitsPerSample} bits: only 16-bit PCM is supported`);
  }
  if (channels < 1) throw new WavFormatError('WAV file declares no channels');
  if (sampleRate < 1) throw new WavFormatError('WAV file declares a zero sample rate');
  return { sampleRate, channels };
}

export function writeWav(audio: WavAudio): Buffer {
  const { sampleRate, channels, samples } = audio;
  if (!Number.isInteger(channels) || channels < 1) throw new RangeError(`invalid channel count ${channels}`);
  if (samples.length % channels !== 0) throw new RangeError('sample count is not a multiple of the channel count');
  const dataBytes = samples.length * 2;
  const out = Buffer.alloc(44 + dataBytes);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write('WAVE', 8, 'ascii');
  out.write('fmt ', 12, 'ascii');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(FORMAT_PCM, 20);
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * channels * 2, 28);
  out.writeUInt16LE(channels * 2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, 44 + i * 2);
  return out;
}

/** Average interleaved channels down to mono (a stereo fixture fed to a mono pipeline). */
export function toMono(audio: WavAudio): Int16Array {
  const { channels, samples } = audio;
  if (channels === 1) return samples.slice();
  const out = new Int16Array(samples.length / channels);
  for (let i = 0; i < out.length; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += samples[i * channels + c]!;
    out[i] = Math.round(sum / channels);
  }
  return out;
}

/** Two mono tracks → interleaved stereo (caller left, agent right in call recordings). */
export function interleaveStereo(left: Int16Array, right: Int16Array): Int16Array {
  const n = Math.max(left.length, right.length);
  const out = new Int16Array(n * 2);
  for (let i = 0; i < n; i++) {
    out[i * 2] = left[i] ?? 0;
    out[i * 2 + 1] = right[i] ?? 0;
  }
  return out;
}
