import { describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, SAMPLE_RATE, type AudioFrame } from '../../../../src/audio/frame.ts';
import { EARLY_PREROLL_MS, EarlyAudio, tonalShare } from '../../../../src/call/early-media/early-audio.ts';
import { SitDetector, type SitEvent } from '../../../../src/call/early-media/sit-detector.ts';
import { loadFixture } from '../../vad/fixture-audio.ts';

/** `ms` of the sum of `hz` tones, each at `amplitude`, from sample `start` on. */
function tones(hz: readonly number[], ms: number, amplitude = 6000, start = 0): Int16Array {
  const n = (ms / 1000) * SAMPLE_RATE;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    let v = 0;
    for (const f of hz) v += amplitude * Math.sin((2 * Math.PI * f * (start + i)) / SAMPLE_RATE);
    out[i] = Math.round(v);
  }
  return out;
}

function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function frames(pcm: Int16Array): AudioFrame[] {
  const out: AudioFrame[] = [];
  for (let i = 0; i + FRAME_SAMPLES <= pcm.length; i += FRAME_SAMPLES) out.push({ samples: pcm.slice(i, i + FRAME_SAMPLES), sampleRate: SAMPLE_RATE });
  return out;
}

/** A SIT: three segments (Telcordia frequencies), then an announcement-like noise. */
function sit(first: number, second: number, msEach = [274, 274, 380]): Int16Array {
  return concat(tones([first], msEach[0]!), tones([second], msEach[1]!), tones([1776.7], msEach[2]!));
}

function detect(pcm: Int16Array): SitEvent | undefined {
  const d = new SitDetector();
  let found: SitEvent | undefined;
  for (const f of frames(pcm)) found ??= d.push(f.samples);
  return found;
}

describe('SIT detection in early media', () => {
  it('intercept (913.8 / 1370.6 / 1776.7 Hz) after silence: reported during the third tone', () => {
    const ev = detect(concat(new Int16Array(SAMPLE_RATE / 2), sit(913.8, 1370.6)));
    expect(ev).toBeDefined();
    expect(ev!.class).toBe('intercept');
    expect(ev!.startMs).toBeGreaterThanOrEqual(480);
    expect(ev!.startMs).toBeLessThanOrEqual(520);
    // On the third tone's 10th frame: 500 + 274 + 274 + 200 ms, give or take a frame.
    expect(ev!.atMs).toBeLessThanOrEqual(1300);
    expect(ev!.tonesHz).toEqual([913.8, 1370.6, 1776.7]);
  });

  it('reorder / no circuit (second tone 1428.5 Hz) is the network class', () => {
    expect(detect(sit(985.2, 1428.5, [380, 380, 380]))?.class).toBe('reorder');
  });

  it('not a SIT: ringback, a single beep, the tones out of order, or with a long gap', () => {
    expect(detect(concat(tones([440, 480], 2000), new Int16Array(SAMPLE_RATE * 2), tones([440, 480], 2000)))).toBeUndefined();
    expect(detect(tones([1000], 400))).toBeUndefined();
    expect(detect(concat(tones([1776.7], 274), tones([1370.6], 274), tones([913.8], 380)))).toBeUndefined();
    expect(detect(concat(tones([913.8], 274), new Int16Array(SAMPLE_RATE / 5), tones([1370.6], 274), tones([1776.7], 380)))).toBeUndefined();
    // A steady 1776.7 Hz tone after the first two is still a SIT; a steady first tone is not.
    expect(detect(concat(tones([913.8], 2000), tones([1370.6], 274), tones([1776.7], 380)))).toBeUndefined();
  });

  it('speech is not a SIT', () => {
    expect(detect(loadFixture('voicemail/greeting-no-beep'))).toBeUndefined();
    expect(detect(loadFixture('utt-opening-hours'))).toBeUndefined();
  });
});

describe('early audio pre-roll', () => {
  it('tonal share: ~1 for one or two steady tones', () => {
    for (const hz of [[440, 480], [400, 450], [425], [350, 440], [480, 620]]) {
      expect(tonalShare(tones(hz, 20, 6000, 123).subarray(0, FRAME_SAMPLES))).toBeGreaterThan(0.9);
    }
  });

  it('every audible frame of recorded ringback (NA, UK, EU) is tone; none of spoken greetings', () => {
    const statsOf = (name: string) => {
      const early = new EarlyAudio();
      for (const f of frames(loadFixture(name))) early.push(f);
      return early.stats;
    };
    for (const name of ['voicemail/ringback-na', 'voicemail/ringback-uk', 'voicemail/ringback-eu']) {
      const s = statsOf(name);
      expect(s.audibleFrames).toBeGreaterThan(50);
      expect(s.toneFrames).toBe(s.audibleFrames);
    }
    for (const name of ['voicemail/greeting-no-beep', 'voicemail/person-hello', 'voicemail/ivr-menu', 'utt-opening-hours']) {
      const s = statsOf(name);
      expect(s.audibleFrames).toBeGreaterThan(20);
      expect(s.toneFrames).toBe(0);
    }
  });

  it('ringback is silenced in the pre-roll, speech after it kept, SIT reported once', () => {
    const early = new EarlyAudio();
    const ringback = frames(tones([440, 480], 2000));
    const greeting = frames(loadFixture('voicemail/greeting-no-beep')).slice(0, 150);
    for (const f of [...ringback, ...greeting]) expect(early.push(f)).toBeUndefined();
    const stats = early.stats;
    expect(stats.frames).toBe(ringback.length + greeting.length);
    expect(stats.toneFrames).toBeGreaterThanOrEqual(ringback.length - 2);
    expect(stats.toneFrames).toBeLessThan(ringback.length + 10);
    const pre = early.preroll();
    expect(pre).toHaveLength(ringback.length + greeting.length);
    const loud = (f: AudioFrame) => f.samples.some((s) => Math.abs(s) > 1000);
    expect(pre.slice(0, ringback.length).filter(loud)).toHaveLength(0);
    expect(pre.slice(ringback.length).filter(loud).length).toBeGreaterThan(greeting.filter(loud).length * 0.9);
    // Once: then nothing is kept.
    expect(early.preroll()).toEqual([]);
  });

  it('a ringback burst with a lost frame or two (concealment noise) stays one tone, silenced whole', () => {
    const early = new EarlyAudio();
    const burst = frames(tones([440, 480], 2000));
    // Every 15th frame replaced by noise at the tone's level, as a concealed lost packet can sound.
    let seed = 7;
    const noisy = burst.map((f, i) => {
      if (i % 15 !== 7) return f;
      const samples = new Int16Array(FRAME_SAMPLES);
      for (let k = 0; k < samples.length; k++) samples[k] = ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 16000) - 8000;
      return { samples, sampleRate: SAMPLE_RATE };
    });
    for (const f of noisy) early.push(f);
    expect(early.stats.toneFrames).toBe(noisy.length);
    expect(early.preroll().filter((f) => f.samples.some((x) => Math.abs(x) > 1000))).toHaveLength(0);
  });

  it('keeps only the last EARLY_PREROLL_MS', () => {
    const early = new EarlyAudio();
    const all = frames(loadFixture('voicemail/greeting-no-beep'));
    for (const f of all) early.push(f);
    const pre = early.preroll();
    expect(pre).toHaveLength(Math.min(all.length, EARLY_PREROLL_MS / 20));
    expect(pre.at(-1)).toBe(all.at(-1));
  });

  it('a SIT in early media is reported by push()', () => {
    const early = new EarlyAudio();
    const events = frames(concat(tones([440, 480], 1000), sit(913.8, 1370.6))).map((f) => early.push(f)).filter((e) => e !== undefined);
    expect(events).toHaveLength(1);
    expect(early.sitHeard?.class).toBe('intercept');
  });
});

