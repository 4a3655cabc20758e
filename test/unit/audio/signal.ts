/** Test signals and measurements shared by the audio and codec tests. */

export function sine(freqHz: number, sampleRate: number, samples: number, amplitude = 10_000, phase = 0): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) out[i] = Math.round(amplitude * Math.sin(phase + (2 * Math.PI * freqHz * i) / sampleRate));
  return out;
}

/** Signal-to-noise ratio in dB of `actual` against `expected` over [from, to). */
export function snrDb(expected: Int16Array, actual: Int16Array, from = 0, to = Math.min(expected.length, actual.length)): number {
  let signal = 0;
  let noise = 0;
  for (let i = from; i < to; i++) {
    const e = expected[i]!;
    signal += e * e;
    noise += (e - actual[i]!) ** 2;
  }
  return noise === 0 ? Infinity : 10 * Math.log10(signal / noise);
}

/** Best SNR over a range of delays of `actual` (codecs and filters add latency). */
export function bestSnrDb(expected: Int16Array, actual: Int16Array, maxDelay: number, skip = 0): { snr: number; delay: number } {
  let best = { snr: -Infinity, delay: 0 };
  for (let d = 0; d <= maxDelay; d++) {
    const n = Math.min(expected.length, actual.length - d);
    const snr = snrDb(expected, actual.subarray(d), skip, n);
    if (snr > best.snr) best = { snr, delay: d };
  }
  return best;
}

/** Amplitude of one frequency component (single-bin DFT), relative to full scale 32768. */
export function toneLevel(pcm: Int16Array, freqHz: number, sampleRate: number, from = 0): number {
  let re = 0;
  let im = 0;
  const n = pcm.length - from;
  for (let i = from; i < pcm.length; i++) {
    const w = (2 * Math.PI * freqHz * i) / sampleRate;
    re += pcm[i]! * Math.cos(w);
    im += pcm[i]! * Math.sin(w);
  }
  return (2 * Math.hypot(re, im)) / n / 32768;
}

export function concat(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Deterministic pseudo-random generator (LCG), so a failure reproduces. */
export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Full-scale white noise, with runs of the extreme values so the clip branches are exercised. */
export function noise(samples: number, seed: number): Int16Array {
  const rnd = lcg(seed);
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) {
    const r = rnd();
    out[i] = r < 0.05 ? 32767 : r < 0.1 ? -32768 : Math.floor(rnd() * 65536) - 32768;
  }
  return out;
}

/** Feed `pcm` in chunks given by `sizes` (cycled), through process() or (`shared`, where there is one) processShared(). */
export function stream(r: { process(x: Int16Array): Int16Array; processShared?(x: Int16Array): Int16Array }, pcm: Int16Array, sizes: readonly number[], shared = false): Int16Array {
  const parts: Int16Array[] = [];
  for (let i = 0, c = 0; i < pcm.length; c++) {
    const size = sizes[c % sizes.length]!;
    const chunk = pcm.subarray(i, i + size);
    i += size;
    parts.push(shared && r.processShared ? r.processShared(chunk).slice() : r.process(chunk));
  }
  return concat(parts);
}

export function firstDifference(a: Int16Array, b: Int16Array): string {
  if (a.length !== b.length) return `lengths ${a.length} vs ${b.length}`;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return `sample ${i}: ${a[i]} vs ${b[i]}`;
  return 'none';
}

/** Modified Bessel function of the first kind, order 0: the reference filters' Kaiser window, written apart from src/. */
export function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}
