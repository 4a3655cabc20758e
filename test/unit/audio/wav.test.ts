import { describe, expect, it } from 'vitest';
import { WavFormatError, interleaveStereo, readWav, toMono, writeWav } from '../../../src/audio/wav.ts';

function chunk(id: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'ascii');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

function fmt(tag: number, channels: number, rate: number, bits: number): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt16LE(tag, 0);
  b.writeUInt16LE(channels, 2);
  b.writeUInt32LE(rate, 4);
  b.writeUInt32LE((rate * channels * bits) / 8, 8);
  b.writeUInt16LE((channels * bits) / 8, 12);
  b.writeUInt16LE(bits, 14);
  return b;
}

function riff(...chunks: Buffer[]): Buffer {
  const body = Buffer.concat([Buffer.from('WAVE'), ...chunks]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'ascii');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

describe('WAV', () => {
  it('round-trips mono and stereo PCM16 at any rate', () => {
    for (const [rate, channels] of [[16000, 1], [8000, 1], [44100, 2], [22050, 2]] as const) {
      const samples = Int16Array.from({ length: 200 * channels }, (_, i) => (i * 977) % 65536 - 32768);
      const bytes = writeWav({ sampleRate: rate, channels, samples });
      expect(bytes.length).toBe(44 + samples.length * 2);
      const back = readWav(bytes);
      expect(back.sampleRate).toBe(rate);
      expect(back.channels).toBe(channels);
      expect([...back.samples]).toEqual([...samples]);
    }
  });

  it('skips LIST and other chunks, including odd-sized ones', () => {
    const data = Buffer.alloc(8);
    data.writeInt16LE(-5, 0);
    data.writeInt16LE(7, 6);
    const bytes = riff(chunk('LIST', Buffer.from('INFOISFT\x05\x00\x00\x00Lavf\x00')), chunk('fmt ', fmt(1, 1, 16000, 16)), chunk('junk', Buffer.alloc(3)), chunk('data', data));
    const wav = readWav(bytes);
    expect([...wav.samples]).toEqual([-5, 0, 0, 7]);
  });

  it('tolerates a streamed header with an unknown data size', () => {
    const bytes = riff(chunk('fmt ', fmt(1, 1, 8000, 16)), chunk('data', Buffer.alloc(10)));
    bytes.writeUInt32LE(0xffffffff, bytes.length - 14); // data chunk size field
    expect(readWav(bytes).samples.length).toBe(5);
  });

  it('accepts WAVE_FORMAT_EXTENSIBLE with a PCM sub-format', () => {
    const ext = Buffer.alloc(40);
    fmt(0xfffe, 1, 48000, 16).copy(ext);
    ext.writeUInt16LE(22, 16);
    ext.writeUInt16LE(1, 24); // KSDATAFORMAT_SUBTYPE_PCM starts with 0x0001
    expect(readWav(riff(chunk('fmt ', ext), chunk('data', Buffer.alloc(4)))).sampleRate).toBe(48000);
  });

  it('rejects non-PCM encodings and sample sizes with a clear error', () => {
    const float = riff(chunk('fmt ', fmt(3, 1, 16000, 32)), chunk('data', Buffer.alloc(8)));
    expect(() => readWav(float)).toThrow(/IEEE float.*only 16-bit PCM/);
    const mulaw = riff(chunk('fmt ', fmt(7, 1, 8000, 8)), chunk('data', Buffer.alloc(8)));
    expect(() => readWav(mulaw)).toThrow(WavFormatError);
    const pcm24 = riff(chunk('fmt ', fmt(1, 1, 16000, 24)), chunk('data', Buffer.alloc(9)));
    expect(() => readWav(pcm24)).toThrow(/24 bits/);
    expect(() => readWav(Buffer.from('not a wav file at all'))).toThrow(/RIFF/);
    expect(() => readWav(riff(chunk('fmt ', fmt(1, 1, 16000, 16))))).toThrow(/no data chunk/);
  });

  it('mixes down to mono and interleaves two tracks', () => {
    const stereo = interleaveStereo(Int16Array.from([100, 200]), Int16Array.from([300]));
    expect([...stereo]).toEqual([100, 300, 200, 0]);
    expect([...toMono({ sampleRate: 8000, channels: 2, samples: stereo })]).toEqual([200, 100]);
  });
});
