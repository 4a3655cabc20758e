import { describe, expect, it } from 'vitest';
import { pcmFromBytes, pcmToBytes, rms } from '../../../src/audio/frame.ts';
import { resample } from '../../../src/audio/resample.ts';
import { ulaw } from '../../../src/media/codecs/g711.ts';
import { bytesPerMs, InputEncoder, OutputDecoder } from '../../../src/providers/realtime/audio-edge.ts';

function sine(n: number, rate: number, hz = 440, amp = 8000): Int16Array {
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(amp * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

describe('realtime audio edge', () => {
  it('turns each 20 ms 16 kHz frame into 20 ms of 24 kHz PCM16', () => {
    const enc = new InputEncoder('pcm24k');
    const src = sine(16_000, 16_000);
    const out: Int16Array[] = [];
    for (let i = 0; i < 50; i++) {
      const bytes = enc.frame({ samples: src.slice(i * 320, (i + 1) * 320), sampleRate: 16_000 });
      expect(Math.abs(bytes.length - 960)).toBeLessThanOrEqual(2);
      out.push(pcmFromBytes(bytes));
    }
    const total = out.reduce((n, p) => n + p.length, 0);
    expect(total).toBeGreaterThan(23_900);
    expect(rms(out[25]!)).toBeCloseTo(rms(src), 1);
  });

  it('passes μ-law through untouched when the model takes μ-law, and decodes it otherwise', () => {
    const payload = new Uint8Array(160).map((_, i) => (i * 37) & 0xff);
    expect([...new InputEncoder('pcmu').mulaw(payload)]).toEqual([...payload]);
    expect(new InputEncoder('pcm24k').mulaw(payload).length).toBeGreaterThan(900);
    expect(new InputEncoder('pcmu').frame({ samples: sine(320, 16_000), sampleRate: 16_000 }).length).toBe(160);
  });

  it('turns 24 kHz deltas of any length (odd bytes too) into exact 20 ms 16 kHz frames', () => {
    const bytes = pcmToBytes(sine(24_000, 24_000));
    const dec = new OutputDecoder('pcm24k');
    const frames = [];
    for (let at = 0; at < bytes.length; at += 4801) frames.push(...(dec.push(bytes.subarray(at, at + 4801)).frames ?? []));
    frames.push(...(dec.flush().frames ?? []));
    expect(frames.every((f) => f.samples.length === 320 && f.sampleRate === 16_000)).toBe(true);
    expect(frames.length).toBeGreaterThanOrEqual(50);
    expect(frames.length).toBeLessThanOrEqual(51);
    const expected = resample(sine(24_000, 24_000), 24_000, 16_000);
    expect(rms(frames[20]!.samples)).toBeCloseTo(rms(expected), 2);
  });

  it('cuts μ-law output into 160-byte payloads byte for byte, padding only the last', () => {
    const bytes = ulaw.encode(sine(8000, 8000));
    const dec = new OutputDecoder('pcmu');
    const out: Uint8Array[] = [];
    for (let at = 0; at < 1000; at += 333) out.push(...(dec.push(bytes.subarray(at, Math.min(at + 333, 1000))).mulaw ?? []));
    out.push(...(dec.flush().mulaw ?? []));
    expect(out.every((p) => p.length === 160)).toBe(true);
    const joined = Buffer.concat(out);
    expect(joined.subarray(0, 1000).equals(bytes.subarray(0, 1000))).toBe(true);
    expect([...joined.subarray(1000)].every((b) => b === 0xff)).toBe(true);
  });

  it('knows the byte rate of each format', () => {
    expect(bytesPerMs('pcm24k')).toBe(48);
    expect(bytesPerMs('pcmu')).toBe(8);
  });
});
