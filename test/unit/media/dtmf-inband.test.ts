import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readWav, toMono } from '../../../src/audio/wav.ts';
import { dtmfFrequencies, InbandDtmfDetector } from '../../../src/media/dtmf-inband.ts';

const ALL = '123A456B789C*0#D';
const AUDIO = resolve(fileURLToPath(import.meta.url), '../../../../fixtures/audio');

/** Deterministic noise (LCG), uniform in ±amplitude. */
function noise(seed: number) {
  let s = seed >>> 0;
  return (amplitude: number): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return ((s / 0xffffffff) * 2 - 1) * amplitude;
  };
}

/** Keys as tones (`toneMs` each, `gapMs` apart), optional noise, as int16 at `rate`. */
function keys(digits: string, rate: number, opts: { toneMs?: number; gapMs?: number; amplitude?: number; noise?: number; twistDb?: number; leadMs?: number } = {}): Int16Array {
  const toneN = Math.round(((opts.toneMs ?? 100) * rate) / 1000);
  const gapN = Math.round(((opts.gapMs ?? 60) * rate) / 1000);
  const leadN = Math.round(((opts.leadMs ?? 30) * rate) / 1000);
  const out = new Int16Array(leadN + digits.length * (toneN + gapN));
  const amp = opts.amplitude ?? 6000;
  const colAmp = amp * 10 ** (-(opts.twistDb ?? 0) / 20);
  let at = leadN;
  for (const d of digits) {
    const [fr, fc] = dtmfFrequencies(d)!;
    for (let i = 0; i < toneN; i++) out[at + i] = Math.round(amp * Math.sin((2 * Math.PI * fr * i) / rate) + colAmp * Math.sin((2 * Math.PI * fc * i) / rate));
    at += toneN + gapN;
  }
  if (opts.noise) {
    const n = noise(7);
    for (let i = 0; i < out.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(out[i]! + n(opts.noise))));
  }
  return out;
}

/** Runs a signal through a detector in 20 ms frames, as the media path does. */
function detect(samples: Int16Array, rate: number): { digits: string; durations: number[] } {
  const det = new InbandDtmfDetector(rate);
  const frame = (rate * 20) / 1000;
  let digits = '';
  const durations: number[] = [];
  for (let at = 0; at + frame <= samples.length + frame; at += frame) {
    const chunk = new Int16Array(frame);
    chunk.set(samples.subarray(at, Math.min(samples.length, at + frame)));
    const d = det.push(chunk);
    if (d !== undefined) {
      digits += d;
      durations.push(det.lastDurationMs);
    }
  }
  // Two silent frames flush a key that ran to the end.
  for (let i = 0; i < 2; i++) {
    const d = det.push(new Int16Array(frame));
    if (d !== undefined) {
      digits += d;
      durations.push(det.lastDurationMs);
    }
  }
  return { digits, durations };
}

describe('InbandDtmfDetector (Goertzel)', () => {
  for (const rate of [8000, 16000]) {
    it(`hears all 16 keys at ${rate} Hz, once each, with about their duration`, () => {
      const { digits, durations } = detect(keys(ALL, rate), rate);
      expect(digits).toBe(ALL);
      for (const d of durations) expect(Math.abs(d - 100)).toBeLessThanOrEqual(30);
    });
  }

  it('hears 40 ms keys with 40 ms gaps (the Q.24 minimum), and no key in a 15 ms blip', () => {
    expect(detect(keys('159#', 8000, { toneMs: 40, gapMs: 40 }), 8000).digits).toBe('159#');
    expect(detect(keys('5', 8000, { toneMs: 15 }), 8000).digits).toBe('');
  });

  it('hears a repeated key as two presses', () => {
    expect(detect(keys('55', 16000, { toneMs: 80, gapMs: 50 }), 16000).digits).toBe('55');
  });

  it('hears keys in noise at about 15 dB SNR, and within the allowed twist', () => {
    expect(detect(keys(ALL, 8000, { noise: 2500 }), 8000).digits).toBe(ALL);
    expect(detect(keys('2580', 8000, { twistDb: 6 }), 8000).digits).toBe('2580');
    expect(detect(keys('2580', 8000, { twistDb: -3 }), 8000).digits).toBe('2580');
  });

  it('refuses a twist past the limit, a quiet tone and a single frequency', () => {
    expect(detect(keys('2580', 8000, { twistDb: 12 }), 8000).digits).toBe('');
    expect(detect(keys('2580', 8000, { amplitude: 150 }), 8000).digits).toBe('');
    const single = new Int16Array(8000);
    for (let i = 0; i < single.length; i++) single[i] = Math.round(8000 * Math.sin((2 * Math.PI * 770 * i) / 8000));
    expect(detect(single, 8000).digits).toBe('');
  });

  it('hears nothing in white noise', () => {
    const n = noise(3);
    const s = new Int16Array(16000 * 5);
    for (let i = 0; i < s.length; i++) s[i] = Math.round(n(8000));
    expect(detect(s, 16000).digits).toBe('');
  });

  it('hears the keys of the recorded DTMF fixture, the held 5 as one press', () => {
    const wav = readWav(readFileSync(join(AUDIO, 'voicemail', 'dtmf-digits.wav')));
    const { digits, durations } = detect(toMono(wav), wav.sampleRate);
    expect(digits).toBe('159#05');
    expect(durations[5]).toBeGreaterThanOrEqual(370);
  });

  it('hears no key in any speech, noise, ringback or voicemail recording of fixtures/audio', () => {
    const files = [...readdirSync(AUDIO).filter((f) => f.endsWith('.wav')).map((f) => join(AUDIO, f)), ...readdirSync(join(AUDIO, 'voicemail')).filter((f) => f.endsWith('.wav') && f !== 'dtmf-digits.wav').map((f) => join(AUDIO, 'voicemail', f))];
    expect(files.length).toBeGreaterThan(15);
    const heard: Record<string, string> = {};
    let seconds = 0;
    for (const file of files) {
      const wav = readWav(readFileSync(file));
      if (wav.sampleRate !== 8000 && wav.sampleRate !== 16000) continue;
      const mono = toMono(wav);
      seconds += mono.length / wav.sampleRate;
      const { digits } = detect(mono, wav.sampleRate);
      if (digits) heard[file] = digits;
    }
    expect(seconds).toBeGreaterThan(30);
    expect(heard).toEqual({});
  });

  it('a key held for 40 s is one press, reported when it stops', () => {
    const det = new InbandDtmfDetector(16000);
    const frame = keys('1', 16000, { toneMs: 20, gapMs: 0, leadMs: 0 });
    for (let i = 0; i < 2000; i++) expect(det.push(frame)).toBeUndefined();
    expect(det.push(new Int16Array(320))).toBe('1');
    expect(det.lastDurationMs).toBeGreaterThan(39_000);
  });
});
