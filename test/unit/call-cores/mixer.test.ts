import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, SAMPLE_RATE, rmsDbfs } from '../../../src/audio/frame.ts';
import { AmbientMixer, ambientLevelDbfs, prepareAmbientLoop } from '../../../src/audio/mixer.ts';
import { AMBIENT_SOUNDS, AmbientLibrary, ambientBedPath, isAmbientSound } from '../../../src/audio/ambient.ts';
import { writeWav } from '../../../src/audio/wav.ts';

/** Deterministic white noise at roughly -20 dBFS. */
function noise(n: number, seed = 1): Int16Array {
  let a = seed;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    out[i] = Math.round(((a / 2 ** 32) * 2 - 1) * 5600);
  }
  return out;
}

function sine(n: number, hz: number, amp: number): Int16Array {
  return Int16Array.from({ length: n }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE)));
}

/** Largest |x[i+1] - x[i]| across the loop, and the one across the wrap (last → first). */
function jumps(x: Int16Array): { inside: number; wrap: number } {
  let inside = 0;
  for (let i = 1; i < x.length; i++) inside = Math.max(inside, Math.abs(x[i]! - x[i - 1]!));
  return { inside, wrap: Math.abs(x[0]! - x[x.length - 1]!) };
}

describe('ambientLevelDbfs (ambient_sound_volume mapping)', () => {
  it.each([
    [1, -20],
    [0.75, -27],
    [0.5, -34],
    [0.25, -41],
    [2, -20],
  ])('%s → %s dBFS', (v, db) => expect(ambientLevelDbfs(v)).toBeCloseTo(db, 9));
  it('0, negatives and NaN mute the bed', () => {
    expect(ambientLevelDbfs(0)).toBeUndefined();
    expect(ambientLevelDbfs(-0.5)).toBeUndefined();
    expect(ambientLevelDbfs(Number.NaN)).toBeUndefined();
  });
  it('a tiny volume sits just above the floor', () => {
    expect(ambientLevelDbfs(0.01)).toBeCloseTo(-47.72, 2);
  });
});

describe('prepareAmbientLoop', () => {
  it('scales the bed to the target level and shortens it by the crossfade', () => {
    const loop = prepareAmbientLoop(noise(SAMPLE_RATE * 4), 0.5)!;
    expect(loop.samples.length).toBe(SAMPLE_RATE * 4 - 8000);
    expect(loop.levelDbfs).toBeCloseTo(-34, 1);
    expect(rmsDbfs(loop.samples)).toBeCloseTo(-34, 1);
  });

  it('is undefined for volume 0 and an empty bed; digital silence stays silent', () => {
    expect(prepareAmbientLoop(noise(1000), 0)).toBeUndefined();
    expect(prepareAmbientLoop(new Int16Array(0), 0.5)).toBeUndefined();
    expect(prepareAmbientLoop(new Int16Array(16_000), 0.5)!.levelDbfs).toBe(-Infinity);
  });

  it('makes the loop point continuous for a bed whose ends do not match', () => {
    // 3.3 cycles of 437 Hz per 0.1 s... the raw wrap jumps by most of the amplitude.
    const raw = sine(SAMPLE_RATE * 2 + 123, 437, 20_000);
    expect(jumps(raw).wrap).toBeGreaterThan(3 * jumps(raw).inside);
    const loop = prepareAmbientLoop(raw, 1)!.samples;
    const j = jumps(loop);
    expect(j.wrap).toBeLessThanOrEqual(j.inside);
  });

  it('keeps the level steady through the crossfade (equal-power on noise)', () => {
    const loop = prepareAmbientLoop(noise(SAMPLE_RATE * 4, 7), 0.5)!.samples;
    const c = 8000;
    const head = rmsDbfs(loop.subarray(0, c));
    const body = rmsDbfs(loop.subarray(c));
    expect(Math.abs(head - body)).toBeLessThan(0.6);
  });
});

describe('AmbientMixer', () => {
  const loop = prepareAmbientLoop(noise(SAMPLE_RATE * 2, 3), 0.5)!;

  it('puts the bed under silence frames at the configured level', () => {
    const m = new AmbientMixer(loop);
    const out = new Int16Array(FRAME_SAMPLES);
    const all: number[] = [];
    for (let f = 0; f < 200; f++) {
      m.mix(undefined, out);
      expect(rmsDbfs(out)).toBeGreaterThan(-45);
      all.push(...out);
    }
    expect(rmsDbfs(Int16Array.from(all))).toBeCloseTo(-34, 0);
  });

  it('adds the bed under speech without changing the speech (residual = the bed)', () => {
    const m = new AmbientMixer(loop);
    const speech = sine(FRAME_SAMPLES * 100, 220, 3000);
    const out = new Int16Array(speech.length);
    for (let f = 0; f < 100; f++) {
      const at = f * FRAME_SAMPLES;
      m.mix(speech.subarray(at, at + FRAME_SAMPLES), out.subarray(at, at + FRAME_SAMPLES));
    }
    const residual = Int16Array.from(out, (v, i) => v - speech[i]!);
    expect(rmsDbfs(residual)).toBeCloseTo(-34, 0);
    const n = loop.samples.length;
    expect(residual).toEqual(Int16Array.from(residual, (_, i) => loop.samples[i % n]!));
  });

  it('saturates instead of wrapping around at full scale', () => {
    const loud = prepareAmbientLoop(sine(16_000, 300, 30_000), 1)!;
    const m = new AmbientMixer(loud);
    const hi = new Int16Array(FRAME_SAMPLES * 50).fill(32_767);
    const lo = new Int16Array(FRAME_SAMPLES * 50).fill(-32_768);
    m.mix(hi, hi);
    m.mix(lo, lo);
    expect(Math.min(...hi)).toBeGreaterThan(0); // a wrap would turn these negative
    expect(Math.max(...hi)).toBe(32_767);
    expect(Math.max(...lo)).toBeLessThan(0);
    expect(Math.min(...lo)).toBe(-32_768);
  });

  it('mixes in place into the caller’s buffer and returns it', () => {
    const m = new AmbientMixer(loop);
    const frame = new Int16Array(FRAME_SAMPLES).fill(100);
    expect(m.mix(frame, frame)).toBe(frame);
    expect(frame[0]).toBe(100 + loop.samples[0]!);
  });

  it('loops seamlessly: frame-by-frame output equals the loop repeated, across the wrap', () => {
    const short = prepareAmbientLoop(noise(12_345, 9), 0.5)!;
    const n = short.samples.length;
    const m = new AmbientMixer(short, n - 500);
    const out = new Int16Array(FRAME_SAMPLES * 10);
    for (let f = 0; f < 10; f++) m.mix(undefined, out.subarray(f * FRAME_SAMPLES, (f + 1) * FRAME_SAMPLES));
    for (let i = 0; i < out.length; i++) expect(out[i]).toBe(short.samples[(n - 500 + i) % n]);
    expect(m.position).toBe((n - 500 + out.length) % n);
  });

  it('normalises the start offset into the loop', () => {
    expect(new AmbientMixer(loop, -1).position).toBe(loop.samples.length - 1);
    expect(new AmbientMixer(loop, loop.samples.length * 3 + 5).position).toBe(5);
  });
});

describe('shipped ambient beds (assets/ambient)', () => {
  const library = new AmbientLibrary();

  it('knows the six beds and treats off / unset / volume 0 as no bed', async () => {
    expect([...AMBIENT_SOUNDS]).toEqual(['office', 'city', 'forest', 'crowded_room', 'cafe', 'nature']);
    expect(isAmbientSound('off')).toBe(false);
    await expect(library.loop('off', 0.5)).resolves.toBeUndefined();
    await expect(library.loop(null, 0.5)).resolves.toBeUndefined();
    await expect(library.loop(undefined, 0.5)).resolves.toBeUndefined();
    await expect(library.mixer('office', 0)).resolves.toBeUndefined();
  });

  it.each([...AMBIENT_SOUNDS])('%s: small, 16 kHz, at the configured level, present in every frame, seamless', async (name) => {
    expect(statSync(ambientBedPath(name)).size).toBeLessThan(700 * 1024);
    const loop = (await library.loop(name, 0.5))!;
    expect(loop.sampleRate).toBe(SAMPLE_RATE);
    expect(loop.samples.length).toBeGreaterThan(10 * SAMPLE_RATE);
    expect(loop.levelDbfs).toBeCloseTo(-34, 1);
    const mixer = (await library.mixer(name, 0.5))!;
    const frame = new Int16Array(FRAME_SAMPLES);
    let quietest = 0;
    for (let f = 0; f < loop.samples.length / FRAME_SAMPLES + 10; f++) {
      quietest = Math.min(quietest === 0 ? Infinity : quietest, rmsDbfs(mixer.mix(undefined, frame)));
    }
    // Never digital silence, never far below the bed's level (no dropouts).
    expect(quietest).toBeGreaterThan(-60);
    // The wrap step is no bigger than the bed's ordinary sample-to-sample steps.
    const diffs = Array.from({ length: loop.samples.length - 1 }, (_, i) => Math.abs(loop.samples[i + 1]! - loop.samples[i]!)).sort(
      (a, b) => a - b,
    );
    const p999 = diffs[Math.floor(diffs.length * 0.999)]!;
    expect(jumps(loop.samples).wrap).toBeLessThanOrEqual(p999);
  });

  it('shares one prepared loop per (bed, volume) between calls', async () => {
    const a = await library.loop('city', 0.3);
    const b = await library.loop('city', 0.3);
    expect(a).toBe(b);
    expect(await library.loop('city', 0.8)).not.toBe(a);
  });

  it('accepts a bed at another rate or in stereo, and retries after a failed read', async () => {
    let calls = 0;
    const stereo44k = writeWav({ sampleRate: 44_100, channels: 2, samples: noise(44_100 * 2 * 2) });
    const lib = new AmbientLibrary('/nowhere', async () => {
      calls++;
      if (calls === 1) throw new Error('ENOENT');
      return stereo44k;
    });
    await expect(lib.loop('forest', 0.5)).rejects.toThrow('ENOENT');
    const loop = (await lib.loop('forest', 0.5))!;
    expect(loop.samples.length).toBeCloseTo(2 * SAMPLE_RATE - 8000, -2);
    expect(loop.levelDbfs).toBeCloseTo(-34, 1);
  });
});
