import { describe, expect, it } from 'vitest';
import { createOpusCodec, opusCodec } from '../../../src/media/codecs/opus.ts';
import { bestSnrDb, concat, sine, toneLevel } from '../audio/signal.ts';

describe('Opus', () => {
  it('is described per RFC 7587', () => {
    expect([opusCodec.name, opusCodec.clockRate, opusCodec.channels, opusCodec.sampleRate]).toEqual(['opus', 48000, 2, 48000]);
    expect(opusCodec.fmtp).toContain('useinbandfec=1');
    expect(createOpusCodec({ inbandFec: false }).fmtp).toContain('useinbandfec=0');
  });

  it('round-trips 20 ms frames of a tone', () => {
    const enc = opusCodec.encoder();
    const dec = opusCodec.decoder();
    const pcm = sine(440, 48000, 48000, 10000);
    const out: Int16Array[] = [];
    for (let i = 0; i < pcm.length; i += 960) {
      const packet = enc.encode(pcm.subarray(i, i + 960));
      expect(packet.length).toBeGreaterThan(0);
      expect(packet.length).toBeLessThan(400);
      const frame = dec.decode(packet);
      expect(frame.length).toBe(960);
      out.push(frame);
    }
    const all = concat(out);
    // Perceptual codec: compare the tone's level rather than expecting sample accuracy.
    expect(toneLevel(all, 440, 48000, 9600)).toBeGreaterThan((10000 / 32768) * 0.8);
    expect(bestSnrDb(pcm, all, 800, 9600).snr).toBeGreaterThan(10);
  });

  it('conceals loss with libopus PLC, one packet length at a time', () => {
    const enc = opusCodec.encoder();
    const dec = opusCodec.decoder();
    expect(dec.conceal().length).toBe(960); // before any packet: silence of the right length
    const pcm = sine(300, 48000, 9600, 8000);
    for (let i = 0; i < pcm.length; i += 960) dec.decode(enc.encode(pcm.subarray(i, i + 960)));
    const plc = dec.conceal();
    expect(plc.length).toBe(960);
    expect(toneLevel(plc, 300, 48000)).toBeGreaterThan(0.05);
    // Decoding carries on normally after the gap.
    const next = dec.decode(enc.encode(sine(300, 48000, 960, 8000)));
    expect(next.length).toBe(960);
  });

  it('encodes longer packets for ptime 40 and 60', () => {
    const enc = opusCodec.encoder();
    const dec = opusCodec.decoder();
    expect(dec.decode(enc.encode(new Int16Array(1920))).length).toBe(1920);
    expect(dec.decode(enc.encode(new Int16Array(2880))).length).toBe(2880);
  });
});
