import { describe, expect, it } from 'vitest';
import { g722 } from '../../../src/media/codecs/g722.ts';
import { G722Decoder, G722Encoder } from '../../../src/media/codecs/g722-core.ts';
import { bestSnrDb, concat, sine } from '../audio/signal.ts';

/** Encode and decode in 20 ms packets, as on the wire. */
function roundTrip(pcm: Int16Array): { payloads: Buffer[]; out: Int16Array } {
  const enc = g722.encoder();
  const dec = g722.decoder();
  const payloads: Buffer[] = [];
  const parts: Int16Array[] = [];
  for (let i = 0; i < pcm.length; i += 320) {
    const p = enc.encode(pcm.subarray(i, i + 320));
    payloads.push(p);
    parts.push(dec.decode(p));
  }
  return { payloads, out: concat(parts) };
}

describe('G.722', () => {
  it('uses payload type 9 with the RFC 3551 8000 Hz clock over 16 kHz audio', () => {
    expect([g722.name, g722.payloadType, g722.clockRate, g722.sampleRate]).toEqual(['G722', 9, 8000, 16000]);
  });

  it('packs two samples per octet: 20 ms is 160 octets', () => {
    const { payloads } = roundTrip(new Int16Array(320 * 5));
    expect(payloads.every((p) => p.length === 160)).toBe(true);
  });

  it('reproduces tones across the wideband range with high SNR', () => {
    for (const [freq, minSnr] of [[300, 40], [1000, 35], [3000, 30], [4000, 30], [6000, 15]] as const) {
      const pcm = sine(freq, 16000, 16000, 10000);
      const { out } = roundTrip(pcm);
      const { snr, delay } = bestSnrDb(pcm, out, 40, 1600);
      expect(snr, `${freq} Hz`).toBeGreaterThan(minSnr);
      // QMF analysis + synthesis delay: 22 samples with the pair-aligned filter banks.
      if (freq === 300) expect(delay, `${freq} Hz`).toBe(22);
    }
  });

  it('passes a mixed low/high tone above 20 dB SNR (both sub-bands in use)', () => {
    const low = sine(800, 16000, 16000, 7000);
    const high = sine(5200, 16000, 16000, 2000);
    const pcm = low.map((s, i) => s + high[i]!);
    const { out } = roundTrip(pcm);
    expect(bestSnrDb(pcm, out, 40, 1600).snr).toBeGreaterThan(20);
  });

  it('encodes silence stably: minimum step size, tiny idle noise, no growth', () => {
    const { payloads, out } = roundTrip(new Int16Array(16000 * 10));
    // From reset, zero input first sits at low code 58, high code 3 (0xFA) at the minimum step.
    expect(payloads[0]!.subarray(0, 40).every((b) => b === 0xfa)).toBe(true);
    // ADPCM idles in a small limit cycle; it must stay inaudible and never build up.
    expect(out.reduce((m, s) => Math.max(m, Math.abs(s)), 0)).toBeLessThan(16);
    expect(payloads.every((p) => p.every((b) => b >> 6 === 3))).toBe(true);
  });

  it('is deterministic and chunk-size independent, including odd splits', () => {
    const pcm = sine(1234, 16000, 3200, 9000);
    const whole = new G722Encoder().encode(pcm);
    const enc = new G722Encoder();
    const parts = [enc.encode(pcm.subarray(0, 161)), enc.encode(pcm.subarray(161, 1000)), enc.encode(pcm.subarray(1000))];
    expect(Buffer.concat(parts).equals(whole)).toBe(true);
    const a = new G722Decoder().decode(whole);
    const b = new G722Decoder().decode(whole);
    expect(a).toEqual(b);
  });

  it('survives full-scale input without wrapping', () => {
    const square = Int16Array.from({ length: 8000 }, (_, i) => (Math.floor(i / 40) % 2 ? 32767 : -32768));
    const { out } = roundTrip(square);
    expect(out.length).toBe(8000);
    const { snr } = bestSnrDb(square, out, 40, 800);
    expect(snr).toBeGreaterThan(10);
  });

  it('conceals a lost packet with a fade of the last one', () => {
    const dec = g722.decoder();
    const enc = g722.encoder();
    dec.decode(enc.encode(sine(500, 16000, 320, 8000)));
    const c = dec.conceal();
    expect(c.length).toBe(320);
    expect(Math.max(...c.map(Math.abs))).toBeGreaterThan(1000);
  });
});
