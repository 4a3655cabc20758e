// G.711 caller frames keep their 8 kHz samples and upsample only when read (NarrowbandFrame):
// what they give must be exactly what the codec edge's streaming resampler gave before, whatever
// the order frames are read in, the packet time, or a lost packet in between.
import { describe, expect, it } from 'vitest';
import { SAMPLE_RATE, type AudioFrame } from '../../../src/audio/frame.ts';
import { NarrowbandFrame, narrowOf } from '../../../src/audio/narrowband-frame.ts';
import { Resampler, upsample2, UPSAMPLE2_HISTORY } from '../../../src/audio/resample.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { pcma } from '../../../src/media/codecs/pcma.ts';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import { InboundTranscoder, OutboundTranscoder } from '../../../src/media/codecs/transcode.ts';
import { g722 } from '../../../src/media/codecs/g722.ts';
import { lcg, sine } from './signal.ts';

/** Speech-like 8 kHz test audio: tones plus noise, loud enough to use the whole μ-law range. */
function line(samples: number): Int16Array {
  const a = sine(440, 8000, samples, 9000);
  const b = sine(2900, 8000, samples, 5000, 1);
  const rnd = lcg(7);
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) out[i] = a[i]! + b[i]! + Math.round((rnd() - 0.5) * 4000);
  return out;
}

const concat = (frames: readonly AudioFrame[]): Int16Array => {
  const out = new Int16Array(frames.reduce((n, f) => n + f.samples.length, 0));
  let at = 0;
  for (const f of frames) {
    out.set(f.samples, at);
    at += f.samples.length;
  }
  return out;
};

describe('upsample2', () => {
  it('is the streaming 2× resampler, chunk by chunk, given the samples before each chunk', () => {
    const input = line(8000);
    const streaming = new Resampler(8000, 16_000);
    let previous = new Int16Array(UPSAMPLE2_HISTORY);
    for (const size of [160, 80, 240, 17, 1, 160, 333]) {
      for (let at = 0; at + size <= 2000; at += size) {
        const chunk = input.subarray(at, at + size);
        expect(upsample2(previous, chunk)).toEqual(streaming.process(chunk));
        const joined = new Int16Array(previous.length + size);
        joined.set(previous);
        joined.set(chunk, previous.length);
        previous = joined.subarray(joined.length - Math.max(UPSAMPLE2_HISTORY, size));
      }
    }
    expect(() => upsample2(new Int16Array(3), input.subarray(0, 160))).toThrow(RangeError);
  });
});

describe('NarrowbandFrame from the G.711 edge', () => {
  for (const codec of [pcmu, pcma]) {
    it(`${codec.name}: frames carry the 8 kHz samples, and their 16 kHz ones are the streaming resampler's, read in any order`, () => {
      const pcm = line(8000 * 2);
      const encoder = codec.encoder();
      const payloads: Uint8Array[] = [];
      for (let at = 0; at < pcm.length; at += 160) payloads.push(Uint8Array.from(encoder.encode(pcm.subarray(at, at + 160))));
      // The reference: the codec's decoder and a streaming 8 → 16 kHz resampler, as the edge did before.
      const decoder = codec.decoder();
      const up = new Resampler(8000, SAMPLE_RATE);
      const decoded = payloads.map((p) => Int16Array.from(decoder.decode(p)));
      const expected = decoded.map((d) => up.process(d));

      const edge = new InboundTranscoder(codec);
      const frames = payloads.flatMap((p) => edge.decode(p));
      expect(frames).toHaveLength(payloads.length);
      frames.forEach((f, i) => {
        expect(f).toBeInstanceOf(NarrowbandFrame);
        expect(f.sampleRate).toBe(SAMPLE_RATE);
        expect(narrowOf(f)).toEqual(decoded[i]);
      });
      // Backwards, then again: each frame's own history makes the order irrelevant, and a second read is the same array.
      for (let i = frames.length - 1; i >= 0; i--) expect(frames[i]!.samples).toEqual(expected[i]);
      for (const f of frames) expect(f.samples).toBe(f.samples);
    });
  }

  it('packets of 30 ms and a lost packet still make 20 ms frames equal to the streaming path', () => {
    const pcm = line(8000);
    const bytes = ulaw.encode(pcm);
    const edge = new InboundTranscoder(pcmu);
    const reference = new Resampler(8000, SAMPLE_RATE);
    const frames: AudioFrame[] = [];
    const narrowIn: Int16Array[] = [];
    for (let at = 0; at + 240 <= 4800; at += 240) {
      const payload = bytes.subarray(at, at + 240);
      edge.decodeInto(payload, frames);
      narrowIn.push(ulaw.decode(payload));
    }
    // A lost packet: the codec's concealment, through the same frames.
    const concealed = edge.conceal();
    frames.push(...concealed);
    expect(concealed.every((f) => f instanceof NarrowbandFrame)).toBe(true);
    const narrow = concat(frames.map((f) => ({ samples: narrowOf(f)!, sampleRate: 8000 })));
    expect(frames.every((f) => narrowOf(f)!.length === 160)).toBe(true);
    expect(narrow.subarray(0, 4800)).toEqual(concat(narrowIn.map((samples) => ({ samples, sampleRate: 8000 }))));
    expect(concat(frames)).toEqual(reference.process(narrow));
  });

  it('a wideband codec gives plain 16 kHz frames; a silent slot is digital silence', () => {
    const edge = new InboundTranscoder(g722);
    const frames = edge.decode(g722.encoder().encode(new Int16Array(320)));
    expect(frames.every((f) => narrowOf(f) === undefined)).toBe(true);
    const silence = NarrowbandFrame.silence();
    expect(narrowOf(silence)).toEqual(new Int16Array(160));
    expect(silence.samples).toEqual(new Int16Array(320));
  });
});

describe('NarrowbandFrame to a G.711 outbound (echo, a bridged leg)', () => {
  it('is encoded from its own 8 kHz samples; 16 kHz frames after it start the resampler afresh', () => {
    const pcm = line(160 * 10);
    const edge = new InboundTranscoder(pcmu);
    const frames = edge.decode(ulaw.encode(pcm));
    const out = new OutboundTranscoder(pcmu);
    for (const f of frames) expect(Buffer.concat(out.encode(f))).toEqual(Buffer.from(ulaw.encode(narrowOf(f)!)));
    // Nothing of the caller's audio lingers in a filter: silence after it is silence at once.
    const silence = { samples: new Int16Array(320), sampleRate: SAMPLE_RATE };
    expect(Buffer.concat(out.encode(silence))).toEqual(Buffer.from(ulaw.encode(new Int16Array(160))));
    // And a 16 kHz frame then goes through the resampler as on a fresh outbound.
    const tone = { samples: sine(500, SAMPLE_RATE, 320, 8000), sampleRate: SAMPLE_RATE };
    const fresh = new OutboundTranscoder(pcmu);
    fresh.encode(silence);
    expect(Buffer.concat(out.encode(tone))).toEqual(Buffer.concat(fresh.encode(tone)));
    // On a wideband outbound the frame is its 16 kHz samples, as any frame.
    const wide = new OutboundTranscoder(g722);
    const reference = new OutboundTranscoder(g722);
    expect(Buffer.concat(wide.encode(frames[3]!))).toEqual(Buffer.concat(reference.encode({ samples: frames[3]!.samples, sampleRate: SAMPLE_RATE })));
  });
});
