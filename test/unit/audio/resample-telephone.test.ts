/**
 * The telephone-band 24 → 16 kHz path (`{ band: 'telephone' }`): audio that goes on to 8 kHz
 * through the half-band decimator, as OpenAI speech does on a G.711 call. Checked end to end,
 * 24 → 16 (telephone) → 8 kHz against 24 → 16 (full band) → 8 kHz.
 */
import { describe, expect, it } from 'vitest';
import { Resampler, resample } from '../../../src/audio/resample.ts';
import { besselI0, concat, firstDifference, lcg, noise, sine, snrDb, stream, toneLevel } from './signal.ts';

const TELEPHONE = { band: 'telephone' } as const;

/**
 * Reference: the telephone filter's design (centre 12 at 48 kHz, cutoff 7.3 kHz, Kaiser beta
 * 7.5, float32 taps, each phase normalised to unit DC gain) run one output at a time, newest
 * sample first, as the plain general-path loop does.
 */
function referenceTelephone(input: Int16Array): Int16Array {
  const up = 2;
  const down = 3;
  const centre = 12;
  const taps = 12;
  const cutoff = 7300 / 48000;
  const beta = 7.5;
  const proto = new Float64Array(up * taps);
  for (let m = 0; m < proto.length; m++) {
    const t = m - centre;
    const x = 2 * cutoff * t;
    const sinc = t === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    const r = t / centre;
    proto[m] = sinc * (Math.abs(r) >= 1 ? 0 : besselI0(beta * Math.sqrt(1 - r * r)) / besselI0(beta));
  }
  const phases = [0, 1].map((p) => {
    let sum = 0;
    for (let k = 0; k < taps; k++) sum += proto[p + k * up]!;
    return Float32Array.from({ length: taps }, (_, k) => proto[p + k * up]! / sum);
  });
  const work = new Float64Array(taps - 1 + input.length);
  work.set(input, taps - 1);
  const out = new Int16Array(Math.ceil((input.length * up) / down));
  for (let o = 0, i = 0, p = 0; o < out.length; o++) {
    const newest = taps - 1 + i;
    let acc = 0;
    for (let k = 0; k < taps; k++) acc += work[newest - k]! * phases[p]![k]!;
    out[o] = acc >= 32767 ? 32767 : acc <= -32768 ? -32768 : Math.round(acc);
    for (p += down; p >= up; p -= up) i++;
  }
  return out;
}

/** 24 kHz in, 8 kHz out: 24 → 16 kHz (`band`), then the half-band decimator, in 20 ms frames. */
function toNarrowband(pcm24: Int16Array, band: 'full' | 'telephone'): Int16Array {
  const wide = stream(new Resampler(24000, 16000, { band }), pcm24, [480], true);
  return stream(new Resampler(16000, 8000), wide, [320], true);
}

function db(ratio: number): number {
  return 20 * Math.log10(ratio);
}

describe('Resampler, telephone-band 24 → 16 kHz', () => {
  it('takes 24000 → 16000 Hz only; `band: full` is the default path', () => {
    expect(() => new Resampler(16000, 24000, TELEPHONE)).toThrow(RangeError);
    expect(() => new Resampler(48000, 32000, TELEPHONE)).toThrow(RangeError);
    expect(() => new Resampler(16000, 8000, TELEPHONE)).toThrow(RangeError);
    const input = noise(4800, 5);
    expect(firstDifference(new Resampler(24000, 16000, { band: 'full' }).process(input), new Resampler(24000, 16000).process(input))).toBe('none');
    expect(new Resampler(24000, 16000, TELEPHONE).delay).toBe(4);
  });

  it('is sample-identical to the plain one-output-at-a-time loop, in any chunking, process() and processShared()', () => {
    const chunkings: readonly (readonly number[])[] = [[1], [2], [3], [5, 7, 1, 4], [11], [480], [441], [1000], [4096]];
    const inputs = [noise(12000, 11), sine(1234, 24000, 6000, 30000), sine(11900, 24000, 3000, 32767)];
    for (const [n, input] of inputs.entries()) {
      const expected = referenceTelephone(input);
      expect(firstDifference(new Resampler(24000, 16000, TELEPHONE).process(input), expected), `input ${n} whole`).toBe('none');
      for (const sizes of chunkings) {
        for (const shared of [false, true]) {
          const chunked = stream(new Resampler(24000, 16000, TELEPHONE), input, sizes, shared);
          expect(firstDifference(chunked, expected), `input ${n}, chunks ${sizes.join('/')}, shared ${shared}`).toBe('none');
        }
      }
    }
    // Random chunk sizes (network reads) over a long stream, several SCRATCH blocks per chunk.
    const rnd = lcg(3);
    const sizes = Array.from({ length: 61 }, () => 1 + Math.floor(rnd() * 5000));
    const long = concat([noise(48000, 9), sine(440, 24000, 48000, 20000)]);
    expect(firstDifference(stream(new Resampler(24000, 16000, TELEPHONE), long, sizes, true), referenceTelephone(long))).toBe('none');
  });

  it('flush() and reset() release and clear the filter like the full-band path', () => {
    const input = noise(2400, 4);
    const r = new Resampler(24000, 16000, TELEPHONE);
    const body = r.process(input);
    const tail = r.flush();
    const zeros = new Int16Array(Math.ceil((r.delay * 24000) / 16000) + 1);
    expect(firstDifference(concat([body, tail]), referenceTelephone(concat([input, zeros])))).toBe('none');
    r.reset();
    expect(firstDifference(r.process(input), body)).toBe('none');
  });

  it('processShared() allocates nothing per 20 ms frame; alternating output counts reuse two views', () => {
    const r = new Resampler(24000, 16000, TELEPHONE);
    const first = r.processShared(new Int16Array(480));
    expect(first.length).toBe(320);
    for (let i = 0; i < 10; i++) expect(r.processShared(new Int16Array(480))).toBe(first);
    const s = new Resampler(24000, 16000, TELEPHONE);
    const seen = new Set<Int16Array>();
    for (let i = 0; i < 30; i++) seen.add(s.processShared(new Int16Array(10)));
    expect(seen.size).toBe(2);
  });

  it('delay is the lag of an impulse, and resample() lines the output up with the input', () => {
    const impulse = new Int16Array(2400);
    impulse[300] = 30000;
    const out = new Resampler(24000, 16000, TELEPHONE).process(impulse);
    let peak = 0;
    for (let i = 1; i < out.length; i++) if (Math.abs(out[i]!) > Math.abs(out[peak]!)) peak = i;
    expect(peak).toBe(200 + 4);
    const tone = resample(sine(1000, 24000, 24000, 12000), 24000, 16000, TELEPHONE);
    expect(tone.length).toBe(16000);
    expect(snrDb(sine(1000, 16000, 16000, 12000), tone, 100, 15900)).toBeGreaterThan(50);
  });

  it('passband: 300 Hz - 3.4 kHz at 8 kHz within 0.1 dB of the full-band path, and the same waveform', () => {
    for (const f of [300, 500, 1000, 2000, 3000, 3400]) {
      const input = sine(f, 24000, 26400, 10000);
      const full = toNarrowband(input, 'full');
      const tel = toNarrowband(input, 'telephone');
      // 1 s windows after the filters have filled (integer-Hz tones: no leakage).
      const diff = db(toneLevel(tel.subarray(400, 8400), f, 8000) / toneLevel(full.subarray(400, 8400), f, 8000));
      expect(Math.abs(diff), `${f} Hz: ${diff.toFixed(3)} dB`).toBeLessThan(0.1);
    }
    // A passband mix: the two outputs agree sample for sample once each path's delay is taken
    // out (8 kHz samples: full 22 / 2 + 8 = 19, telephone 4 / 2 + 8 = 10).
    const mixed = new Int16Array(24000);
    for (const [k, f] of [350, 1350, 2350].entries()) {
      const s = sine(f, 24000, 24000, 6000, k);
      for (let i = 0; i < s.length; i++) mixed[i]! += s[i]!;
    }
    const full = toNarrowband(mixed, 'full');
    const tel = toNarrowband(mixed, 'telephone');
    expect(snrDb(full.subarray(19), tel.subarray(10), 200, 7900)).toBeGreaterThan(40);
  });

  it('rejects images and aliases: tones at 5-11.5 kHz leave nothing above -60 dB in 0-3.8 kHz at 8 kHz', () => {
    const window = (pcm: Int16Array): Int16Array => pcm.subarray(400, 8400);
    const reference = toneLevel(window(toNarrowband(sine(1000, 24000, 26400, 10000), 'telephone')), 1000, 8000);
    for (const f of [5000, 6000, 7000, 8000, 9000, 10000, 11000, 11500]) {
      const out = window(toNarrowband(sine(f, 24000, 26400, 10000), 'telephone'));
      let worst = 0;
      let worstAt = 0;
      for (let y = 0; y <= 3800; y += 50) {
        const level = toneLevel(out, y, 8000);
        if (level > worst) [worst, worstAt] = [level, y];
      }
      const rel = db(worst / reference);
      expect(rel, `${f} Hz in: ${rel.toFixed(1)} dB at ${worstAt} Hz`).toBeLessThan(-60);
    }
  });
});
