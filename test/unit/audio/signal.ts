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
