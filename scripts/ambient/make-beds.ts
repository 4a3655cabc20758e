/**
 * Generates the ambient beds in assets/ambient/ (16 kHz mono 16-bit WAV, 12 s each):
 *   node --import tsx scripts/ambient/make-beds.ts [outDir]
 * Everything is synthesized from a seeded PRNG, so a run reproduces the committed files byte for
 * byte — except the speech babble (crowded_room, cafe), which comes from espeak-ng when it is
 * installed (Debian package, 1.51 used) and can differ slightly with other espeak-ng versions.
 * Without espeak-ng the babble falls back to formant-filtered noise with a syllable rhythm.
 * No downloads; the output is ours, released CC0 (see assets/ambient/README.md).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readWav, toMono, writeWav } from '../../src/audio/wav.ts';
import { resample } from '../../src/audio/resample.ts';

const SR = 16_000;
const SECONDS = 12;
const N = SR * SECONDS;
/** Every bed is stored at this RMS; the mixer rescales to the call's volume anyway. */
const STORE_RMS_DBFS = -24;

/** mulberry32: tiny, fast and the same on every platform. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Buf = Float64Array;
const buf = (): Buf => new Float64Array(N);

function white(r: () => number, n = N): Buf {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = r() * 2 - 1;
  return out;
}

/** Paul Kellet's economy pink filter over white noise. */
function pink(r: () => number): Buf {
  const out = buf();
  let b0 = 0, b1 = 0, b2 = 0;
  for (let i = 0; i < N; i++) {
    const w = r() * 2 - 1;
    b0 = 0.99765 * b0 + w * 0.099046;
    b1 = 0.963 * b1 + w * 0.2965164;
    b2 = 0.57 * b2 + w * 1.0526913;
    out[i] = (b0 + b1 + b2 + w * 0.1848) * 0.25;
  }
  return out;
}

/** Leaky-integrated white noise: a -6 dB/octave rumble. */
function brown(r: () => number): Buf {
  const out = buf();
  let y = 0;
  for (let i = 0; i < N; i++) {
    y = 0.995 * y + (r() * 2 - 1) * 0.1;
    out[i] = y;
  }
  return out;
}

/** RBJ biquad band-pass (constant 0 dB peak), in place. */
function bandpass(x: Buf, freq: number, q: number): Buf {
  const w = (2 * Math.PI * freq) / SR;
  const alpha = Math.sin(w) / (2 * q);
  const a0 = 1 + alpha;
  const b0 = alpha / a0, b2 = -alpha / a0, a1 = (-2 * Math.cos(w)) / a0, a2 = (1 - alpha) / a0;
  let x1 = 0, x2 = 0, y1 = 0, y2 = 0;
  for (let i = 0; i < x.length; i++) {
    const x0 = x[i]!;
    const y0 = b0 * x0 + b2 * x2 - a1 * y1 - a2 * y2;
    x2 = x1; x1 = x0; y2 = y1; y1 = y0;
    x[i] = y0;
  }
  return x;
}

function lowpass(x: Buf, freq: number): Buf {
  const a = Math.exp((-2 * Math.PI * freq) / SR);
  let y = 0;
  for (let i = 0; i < x.length; i++) x[i] = y = (1 - a) * x[i]! + a * y;
  return x;
}

function highpass(x: Buf, freq: number): Buf {
  const a = Math.exp((-2 * Math.PI * freq) / SR);
  let y = 0, prev = 0;
  for (let i = 0; i < x.length; i++) {
    const x0 = x[i]!;
    y = a * (y + x0 - prev);
    prev = x0;
    x[i] = y;
  }
  return x;
}

function rmsOf(x: Buf): number {
  let s = 0;
  for (const v of x) s += v * v;
  return Math.sqrt(s / Math.max(1, x.length));
}

/** Scale `x` to an RMS relative to full scale (1.0) and add it into `dst` at `at`. */
function addAt(dst: Buf, x: Buf, at: number, gain = 1): void {
  for (let i = 0; i < x.length && at + i < dst.length; i++) if (at + i >= 0) dst[at + i]! += x[i]! * gain;
}

function atLevel(x: Buf, dbfs: number): Buf {
  const g = 10 ** (dbfs / 20) / (rmsOf(x) || 1);
  for (let i = 0; i < x.length; i++) x[i]! *= g;
  return x;
}

/** Slow random amplitude wobble (gusts, traffic density): smoothed noise between lo and hi. */
function wobble(r: () => number, rateHz: number, lo: number, hi: number): Buf {
  const out = buf();
  const step = Math.round(SR / rateHz);
  let a = r(), b = r();
  for (let i = 0; i < N; i++) {
    if (i % step === 0) { a = b; b = r(); }
    const t = (i % step) / step;
    const s = a + (b - a) * (0.5 - 0.5 * Math.cos(Math.PI * t));
    out[i] = lo + (hi - lo) * s;
  }
  return out;
}

function mul(x: Buf, env: Buf): Buf {
  for (let i = 0; i < x.length; i++) x[i]! *= env[i]!;
  return x;
}

/** A key press: a short band-passed noise tick with a fast decay. */
function click(r: () => number): Buf {
  const n = Math.round(0.012 * SR);
  const x = bandpass(white(r, n), 2500 + r() * 2000, 1.5);
  for (let i = 0; i < n; i++) x[i]! *= Math.exp(-i / (0.0025 * SR));
  return x;
}

/** A bird chirp: an FM sine sweeping down (or up) with a vibrato, 60–180 ms. */
function chirp(r: () => number): Buf {
  const n = Math.round((0.06 + r() * 0.12) * SR);
  const f0 = 2500 + r() * 2500;
  const sweep = (r() - 0.6) * 2500;
  const vib = 20 + r() * 40;
  const x = new Float64Array(n);
  let phase = 0;
  for (let i = 0; i < n; i++) {
    const t = i / n;
    const f = Math.min(7500, f0 + sweep * t + 300 * Math.sin(2 * Math.PI * vib * (i / SR)));
    phase += (2 * Math.PI * f) / SR;
    x[i] = Math.sin(phase) * Math.sin(Math.PI * t) ** 2;
  }
  return x;
}

/** A cup or spoon clink: inharmonic partials with short exponential decays. */
function clink(r: () => number): Buf {
  const n = Math.round(0.35 * SR);
  const base = 2200 + r() * 1200;
  const x = new Float64Array(n);
  for (const [ratio, decay, amp] of [[1, 0.08, 1], [1.59, 0.05, 0.6], [2.41, 0.03, 0.4], [3.3, 0.02, 0.25]] as const) {
    const f = Math.min(7800, base * ratio);
    for (let i = 0; i < n; i++) x[i]! += amp * Math.sin((2 * Math.PI * f * i) / SR) * Math.exp(-i / (decay * SR));
  }
  return x;
}

/** Bird song: a few phrases of 2–6 chirps at random times. */
function birds(r: () => number, phrases: number, dbfs: number): Buf {
  const out = buf();
  for (let p = 0; p < phrases; p++) {
    let at = Math.floor(r() * (N - SR));
    const count = 2 + Math.floor(r() * 5);
    const gain = 0.3 + r() * 0.7;
    for (let c = 0; c < count; c++) {
      const ch = chirp(r);
      addAt(out, ch, at, gain);
      at += ch.length + Math.round((0.03 + r() * 0.1) * SR);
    }
  }
  return atLevel(out, dbfs);
}

const BABBLE_LINES = [
  'I think we should move the meeting to Thursday afternoon if that works for everyone.',
  'Did you see the game last night? It went into overtime and nobody left the stadium.',
  'The coffee here is much better than the place around the corner, honestly.',
  'She said the report would be ready by Friday, but I have not seen anything yet.',
  'We are going to the coast this weekend, the forecast looks really good.',
  'Could you pass me the menu? I cannot decide between the soup and the salad.',
  'My brother just moved to a new apartment near the station, it is tiny but bright.',
  'Let us split the bill, I will send you my half later tonight.',
];
const BABBLE_VOICES = ['en-us+m3', 'en-gb+f2', 'en-us+f4', 'en-gb-x-rp+m1', 'en-us+m7', 'en-029+f3', 'en-gb-scotland+m2', 'en-us+f1'];

function espeakAvailable(): boolean {
  return spawnSync('espeak-ng', ['--version'], { encoding: 'utf8' }).status === 0;
}

function speak(voice: string, text: string, wpm: number, pitch: number): Buf {
  const res = spawnSync('espeak-ng', ['-v', voice, '-s', String(wpm), '-p', String(pitch), '--stdout', text], { maxBuffer: 64 << 20 });
  if (res.status !== 0) throw new Error(`espeak-ng failed for ${voice}`);
  const wav = readWav(res.stdout);
  const pcm = resample(toMono(wav), wav.sampleRate, SR);
  return Float64Array.from(pcm, (s) => s / 32768);
}

/** Several talkers, each looping its own lines with pauses, mixed at random distances. */
function babble(r: () => number, talkers: number): Buf {
  const out = buf();
  const useEspeak = espeakAvailable();
  for (let t = 0; t < talkers; t++) {
    const voice = BABBLE_VOICES[t % BABBLE_VOICES.length]!;
    let at = Math.floor(r() * SR * 1.5) - SR;
    let line = Math.floor(r() * BABBLE_LINES.length);
    const distance = 0.25 + r() * 0.75;
    while (at < N) {
      const text = BABBLE_LINES[line++ % BABBLE_LINES.length]!;
      const clip = useEspeak ? speak(voice, text, 150 + Math.floor(r() * 40), 30 + Math.floor(r() * 40)) : formantSpeech(r, text.length * 0.06);
      addAt(out, atLevel(clip, -20), at, distance);
      at += clip.length + Math.round((0.3 + r() * 1.2) * SR);
    }
  }
  // Voices from across a room: no crisp consonants, a little smearing.
  return lowpass(lowpass(out, 2500), 3500);
}

/** Fallback "speech": noise through vowel-like formants, syllables at ~4 Hz. */
function formantSpeech(r: () => number, seconds: number): Buf {
  const n = Math.round(seconds * SR);
  const x = new Float64Array(n);
  for (const [f, q] of [[500 + r() * 300, 5], [1200 + r() * 600, 6], [2500 + r() * 400, 8]] as const) {
    const band = bandpass(white(r, n), f, q);
    for (let i = 0; i < n; i++) x[i]! += band[i]!;
  }
  const syl = 3.5 + r();
  for (let i = 0; i < n; i++) x[i]! *= Math.max(0, Math.sin((2 * Math.PI * syl * i) / SR)) ** 2;
  return x;
}

const BEDS: Record<string, (r: () => number) => Buf> = {
  office(r) {
    const out = atLevel(lowpass(pink(r), 3000), -30);
    // HVAC: mains-related hum plus a low air rush.
    const hum = buf();
    for (let i = 0; i < N; i++) hum[i] = Math.sin((2 * Math.PI * 100 * i) / SR) + 0.5 * Math.sin((2 * Math.PI * 150 * i) / SR) + 0.25 * Math.sin((2 * Math.PI * 200 * i) / SR);
    addAt(out, atLevel(hum, -38), 0);
    addAt(out, atLevel(lowpass(white(r), 300), -32), 0);
    // Typing in bursts: 3–12 keys at 6–12 keys/s, a few bursts over the bed.
    for (let b = 0; b < 7; b++) {
      let at = Math.floor(r() * (N - 2 * SR));
      const keys = 3 + Math.floor(r() * 10);
      for (let k = 0; k < keys; k++) {
        addAt(out, click(r), at, 0.05 + r() * 0.05);
        at += Math.round((0.08 + r() * 0.1) * SR);
      }
    }
    return out;
  },
  city(r) {
    const out = atLevel(mul(lowpass(brown(r), 800), wobble(r, 0.3, 0.6, 1)), -26);
    // Passing cars: band-limited noise under a bell-shaped swell, 2–5 s each.
    for (let c = 0; c < 5; c++) {
      const len = Math.round((2 + r() * 3) * SR);
      const car = lowpass(highpass(white(r, len), 60), 900 + r() * 600);
      for (let i = 0; i < len; i++) car[i]! *= Math.exp(-(((i / len - 0.5) * 4) ** 2));
      addAt(out, atLevel(car, -26 - r() * 6), Math.floor(r() * (N - len)));
    }
    addAt(out, atLevel(highpass(pink(r), 1500), -42), 0);
    return out;
  },
  forest(r) {
    const wind = mul(lowpass(highpass(white(r), 150), 900), wobble(r, 0.25, 0.2, 1));
    const out = atLevel(wind, -27);
    addAt(out, atLevel(mul(bandpass(white(r), 2500, 0.7), wobble(r, 2, 0, 1)), -44), 0); // leaves
    addAt(out, birds(r, 6, -33), 0);
    return out;
  },
  crowded_room(r) {
    const out = atLevel(babble(r, 8), -25);
    addAt(out, atLevel(lowpass(pink(r), 1000), -34), 0);
    return out;
  },
  cafe(r) {
    const out = atLevel(babble(r, 4), -27);
    addAt(out, atLevel(lowpass(pink(r), 1500), -34), 0);
    for (let c = 0; c < 6; c++) addAt(out, clink(r), Math.floor(r() * (N - SR)), 0.02 + r() * 0.03);
    return out;
  },
  nature(r) {
    // A stream: mid-band noise with fast random "bubbling" modulation over a low wash.
    const stream = mul(bandpass(white(r), 1200, 0.6), wobble(r, 18, 0.4, 1));
    const out = atLevel(stream, -27);
    addAt(out, atLevel(lowpass(pink(r), 500), -32), 0);
    addAt(out, birds(r, 8, -31), 0);
    return out;
  },
};

function toPcm(x: Buf): Int16Array {
  atLevel(x, STORE_RMS_DBFS);
  let peak = 0;
  for (const v of x) peak = Math.max(peak, Math.abs(v));
  // Keep rare peaks (clicks, clinks) from clipping: at most -1 dBFS.
  const limit = 10 ** (-1 / 20);
  const g = peak > limit ? limit / peak : 1;
  return Int16Array.from(x, (v) => Math.max(-32768, Math.min(32767, Math.round(v * g * 32767))));
}

const outDir = process.argv[2] ?? fileURLToPath(new URL('../../assets/ambient/', import.meta.url));
mkdirSync(outDir, { recursive: true });
let seed = 20240601;
for (const [name, make] of Object.entries(BEDS)) {
  const samples = toPcm(make(rng(seed++)));
  writeFileSync(join(outDir, `${name}.wav`), writeWav({ sampleRate: SR, channels: 1, samples }));
  console.log(`${name}.wav ${(samples.length / SR).toFixed(1)} s`);
}
