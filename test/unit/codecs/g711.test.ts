import { describe, expect, it } from 'vitest';
import { alaw, ulaw } from '../../../src/media/codecs/g711.ts';
import { pcma } from '../../../src/media/codecs/pcma.ts';
import { pcmu } from '../../../src/media/codecs/pcmu.ts';
import { sine, snrDb } from '../audio/signal.ts';

// Expected values follow G.711 tables 2a/2b; the non-boundary ones also match CPython's audioop.
describe('G.711 μ-law', () => {
  it('encodes known values', () => {
    const cases: Array<[number, number]> = [
      [0, 0xff], [1, 0xff], [3, 0xff], [4, 0xfe], // 14-bit magnitude 0 → positive zero; 1 → first step
      [-1, 0x7f], [-4, 0x7f], [-5, 0x7e], // one's complement magnitude (ITU G.191)
      [32767, 0x80], [32124, 0x80], [-32768, 0x00], [-32124, 0x00],
      [132, 0xef], [128, 0xef], [120, 0xf0], // segment 0 ends at 14-bit 30 (= 120): G.711 table 2a
      [1000, 0xce], [-1000, 0x4e],
    ];
    for (const [x, code] of cases) expect(ulaw.encodeSample(x), `${x}`).toBe(code);
  });

  it('decodes known values', () => {
    const cases: Array<[number, number]> = [
      [0xff, 0], [0x7f, 0], [0xfe, 8], [0x7e, -8], [0xef, 132], [0xf0, 120],
      [0x80, 32124], [0x00, -32124], [0xce, 988], [0x4e, -988],
    ];
    for (const [code, x] of cases) expect(ulaw.decodeSample(code), `0x${code.toString(16)}`).toBe(x);
  });

  it('round-trips every code except negative zero', () => {
    for (let c = 0; c < 256; c++) {
      const back = ulaw.encodeSample(ulaw.decodeSample(c));
      expect(back, `0x${c.toString(16)}`).toBe(c === 0x7f ? 0xff : c);
    }
  });

  it('is monotonic and odd-symmetric', () => {
    let prev = -Infinity;
    for (let x = -32768; x < 32768; x += 7) {
      const y = ulaw.decodeSample(ulaw.encodeSample(x));
      expect(y).toBeGreaterThanOrEqual(prev);
      prev = y;
    }
    for (let c = 0; c < 128; c++) expect(ulaw.decodeSample(c) + ulaw.decodeSample(c | 0x80)).toBe(0);
  });
});

describe('G.711 A-law', () => {
  it('encodes and decodes known values', () => {
    const enc: Array<[number, number]> = [
      [0, 0xd5], [-1, 0x55], [15, 0xd5], [16, 0xd4], [-16, 0x55], [-17, 0x54],
      [32767, 0xaa], [-32768, 0x2a], [1000, 0xfa], [-1000, 0x7a],
    ];
    for (const [x, code] of enc) expect(alaw.encodeSample(x), `${x}`).toBe(code);
    const dec: Array<[number, number]> = [
      [0xd5, 8], [0x55, -8], [0xaa, 32256], [0x2a, -32256], [0xfa, 1008], [0x7a, -1008], [0xc5, 264],
    ];
    for (const [code, x] of dec) expect(alaw.decodeSample(code), `0x${code.toString(16)}`).toBe(x);
  });

  it('round-trips all 256 codes', () => {
    for (let c = 0; c < 256; c++) expect(alaw.encodeSample(alaw.decodeSample(c))).toBe(c);
  });
});

describe('PCMU / PCMA codecs', () => {
  it('describe RTP static payload types', () => {
    expect([pcmu.name, pcmu.payloadType, pcmu.clockRate, pcmu.sampleRate]).toEqual(['PCMU', 0, 8000, 8000]);
    expect([pcma.name, pcma.payloadType, pcma.clockRate, pcma.sampleRate]).toEqual(['PCMA', 8, 8000, 8000]);
  });

  it('round-trip a speech-level tone with G.711 quality (~38 dB SNR)', () => {
    for (const codec of [pcmu, pcma]) {
      const pcm = sine(1000, 8000, 1600, 8000);
      const payload = codec.encoder().encode(pcm);
      expect(payload.length).toBe(1600);
      const back = codec.decoder().decode(payload);
      expect(snrDb(pcm, back), codec.name).toBeGreaterThan(33);
    }
  });

  it('conceal a loss by repeating the last packet, fading to silence', () => {
    const dec = pcmu.decoder();
    expect(dec.conceal()).toEqual(new Int16Array(160)); // nothing heard yet
    const last = dec.decode(pcmu.encoder().encode(new Int16Array(160).fill(4000)));
    const c1 = dec.conceal();
    expect(c1.length).toBe(160);
    expect(c1[0]).toBe(last[0]);
    expect(Math.abs(c1[159]!)).toBeLessThan(Math.abs(last[159]!));
    const c2 = dec.conceal();
    expect(Math.abs(c2[0]!)).toBeLessThanOrEqual(Math.abs(c1[159]!) + 30);
    dec.conceal();
    expect(dec.conceal().every((s) => s === 0)).toBe(true);
    // A real packet resets the fade.
    dec.decode(pcmu.encoder().encode(new Int16Array(160).fill(4000)));
    expect(dec.conceal()[0]).toBe(last[0]);
  });

  it('decodeShared/concealShared give what decode/conceal give, in one reused buffer each', () => {
    for (const codec of [pcmu, pcma]) {
      const fresh = codec.decoder();
      const shared = codec.decoder();
      const enc = codec.encoder();
      const payloads = [sine(300, 8000, 160, 9000), sine(700, 8000, 160, 4000), sine(500, 8000, 240, 6000)].map((p) => enc.encode(p));
      // Decode, then lose three packets (the fade down to silence and past it), per payload.
      const decodedBuffers = new Set<ArrayBufferLike>();
      const concealBuffers = new Set<ArrayBufferLike>();
      for (const payload of [payloads[0]!, payloads[1]!, payloads[0]!, payloads[2]!]) {
        const a = fresh.decode(payload);
        const b = shared.decodeShared!(payload);
        expect([...b], codec.name).toEqual([...a]);
        decodedBuffers.add(b.buffer);
        for (let k = 0; k < 4; k++) {
          const c = shared.concealShared!();
          expect([...c], `${codec.name} loss ${k}`).toEqual([...fresh.conceal()]);
          concealBuffers.add(c.buffer);
        }
      }
      // One buffer per size grown into (160, then 240 samples), not one per call.
      expect(decodedBuffers.size).toBe(2);
      expect(concealBuffers.size).toBe(2);
    }
  });
});
