/**
 * encodeInto (G.711, G.722) writes exactly what encode() returns, where it is told, and the
 * OutboundTranscoder's header-room mode yields the same payloads as its plain mode.
 */
import { describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, type AudioFrame } from '../../../src/audio/frame.ts';
import type { Codec } from '../../../src/media/codecs/codec.ts';
import { alaw, ulaw } from '../../../src/media/codecs/g711.ts';
import { g722 } from '../../../src/media/codecs/g722.ts';
import { opusCodec } from '../../../src/media/codecs/opus.ts';
import { pcma } from '../../../src/media/codecs/pcma.ts';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import { InboundTranscoder, OutboundTranscoder } from '../../../src/media/codecs/transcode.ts';
import { FrameChunker } from '../../../src/audio/frame.ts';
import { Resampler } from '../../../src/audio/resample.ts';
import { prng } from '../media/prng.ts';

function noise(n: number, seed: number): Int16Array {
  const rnd = prng(seed);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rnd() * 65536) - 32768;
  return out;
}

/** A speech-like signal (tone plus noise) as 16 kHz frames. */
function frames(count: number, seed: number): AudioFrame[] {
  const rnd = prng(seed);
  const out: AudioFrame[] = [];
  for (let f = 0; f < count; f++) {
    const samples = new Int16Array(FRAME_SAMPLES);
    for (let i = 0; i < samples.length; i++) {
      const t = f * FRAME_SAMPLES + i;
      samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * t) / 16000) + (rnd() - 0.5) * 2000);
    }
    out.push({ samples, sampleRate: 16000 });
  }
  return out;
}

describe('G.711 encodeInto', () => {
  for (const [name, law] of [['μ-law', ulaw], ['A-law', alaw]] as const) {
    it(`${name}: the same octets as encode(), at the offset, nothing else touched`, () => {
      const pcm = noise(160, 7);
      const expected = law.encode(pcm);
      const out = new Uint8Array(12 + 160 + 3).fill(0xaa);
      expect(law.encodeInto(pcm, out, 12)).toBe(160);
      expect(Buffer.from(out.subarray(12, 172)).equals(expected)).toBe(true);
      expect([...out.subarray(0, 12), ...out.subarray(172)].every((b) => b === 0xaa)).toBe(true);
      // Every 16-bit value, not just a sample of them.
      const all = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
      const whole = new Uint8Array(65536);
      law.encodeInto(all, whole, 0);
      expect(Buffer.from(whole).equals(law.encode(all))).toBe(true);
    });
  }

  for (const codec of [pcmu, pcma]) {
    it(`${codec.name} encoder: encodedLength and encodeInto agree with encode`, () => {
      const enc = codec.encoder();
      const pcm = noise(160, 11);
      expect(enc.encodedLength?.(160)).toBe(160);
      const out = new Uint8Array(172);
      expect(enc.encodeInto!(pcm, out, 12)).toBe(160);
      expect(Buffer.from(out.subarray(12)).equals(codec.encoder().encode(pcm))).toBe(true);
    });
  }
});

describe('G.722 encodeInto', () => {
  it('continues the ADPCM state exactly as encode() does, packet after packet', () => {
    const a = g722.encoder();
    const b = g722.encoder();
    for (let p = 0; p < 20; p++) {
      const pcm = noise(320, 100 + p).map((v) => v >> 2);
      const expected = a.encode(pcm);
      expect(b.encodedLength!(320)).toBe(160);
      const out = new Uint8Array(12 + 160);
      expect(b.encodeInto!(pcm, out, 12)).toBe(160);
      expect(Buffer.from(out.subarray(12)).equals(expected)).toBe(true);
    }
  });

  it('counts a carried odd sample, as encode() does', () => {
    const a = g722.encoder();
    const b = g722.encoder();
    for (const n of [161, 160, 159, 320]) {
      const pcm = noise(n, n);
      const expected = a.encode(pcm);
      const len = b.encodedLength!(n);
      expect(len).toBe(expected.length);
      const out = new Uint8Array(len + 4);
      expect(b.encodeInto!(pcm, out, 4)).toBe(len);
      expect(Buffer.from(out.subarray(4)).equals(expected)).toBe(true);
    }
  });
});

describe('OutboundTranscoder with header room', () => {
  for (const codec of [pcmu, pcma, g722, opusCodec] as Codec[]) {
    for (const ptime of [20, 10, 40]) {
      it(`${codec.name} ptime ${ptime}: the same payloads as without room, in room only where one packet is encoded in place`, () => {
        const plain = new OutboundTranscoder(codec, ptime);
        const roomy = new OutboundTranscoder(codec, ptime, 12);
        const input = frames(12, 3);
        const plainOut: Buffer[] = [];
        const roomyOut: Buffer[] = [];
        let inRoom = 0;
        for (let f = 0; f < input.length + 6; f++) {
          // Audio, then silence (cached once the filters run empty, for G.711 at 20 ms).
          const a = f < input.length ? plain.encode(input[f]!) : plain.encodeSilence();
          plainOut.push(...a.map((p) => Buffer.from(p)));
          const b = f < input.length ? roomy.encode(input[f]!) : roomy.encodeSilence();
          if (roomy.encodedInRoom) {
            inRoom++;
            expect(b).toHaveLength(1);
            roomyOut.push(Buffer.from(b[0]!.subarray(12)));
          } else roomyOut.push(...b.map((p) => Buffer.from(p)));
          expect(plain.encodedInRoom).toBe(false);
        }
        if (codec.name === 'opus') {
          // No encodeInto: the payloads come as ever (libopus output is not compared byte for byte).
          expect(inRoom).toBe(0);
          expect(roomyOut.map((p) => p.length > 0)).toEqual(plainOut.map((p) => p.length > 0));
          return;
        }
        expect(roomyOut).toEqual(plainOut);
        expect(inRoom).toBe(ptime === 20 ? input.length + (codec.stateless ? 2 : 6) : 0);
      });
    }
  }
});

describe('InboundTranscoder', () => {
  it('decodes the usual packet to the same frame as the chunker path', () => {
    for (const codec of [pcmu, g722]) {
      const enc = codec.encoder();
      const dec = new InboundTranscoder(codec);
      const ref = codec.decoder();
      const resampler = new Resampler(codec.sampleRate, 16000);
      const chunker = new FrameChunker();
      for (let p = 0; p < 10; p++) {
        const payload = enc.encode(noise(codec.sampleRate / 50, p).map((v) => v >> 2));
        // G.711 frames are NarrowbandFrames: compared by what they give (16 kHz samples made on read).
        const got = dec.decode(payload).map((f) => ({ samples: f.samples, sampleRate: f.sampleRate }));
        const want = chunker.push(resampler.process(ref.decode(payload)));
        expect(got).toEqual(want);
        expect(got[0]!.samples.length).toBe(FRAME_SAMPLES);
      }
    }
  });
});
