import { describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, SAMPLE_RATE, splitPcm } from '../../../src/audio/frame.ts';
import { BeepDetector, analyzeTone, type BeepEvent } from '../../../src/call/voicemail/beep.ts';
import { loadFixture } from '../vad/fixture-audio.ts';

function detect(pcm: Int16Array, detector = new BeepDetector()): BeepEvent[] {
  const out: BeepEvent[] = [];
  for (const f of splitPcm(pcm)) {
    const e = detector.push(f);
    if (e) out.push(e);
  }
  const last = detector.flush();
  if (last) out.push(last);
  return out;
}

/** Sum of sines (amplitude per tone, full scale 1) for `ms`, then `silenceMs` of silence. */
function tones(freqs: number[], ms: number, amp = 0.25, silenceMs = 300): Int16Array {
  const n = (SAMPLE_RATE * ms) / 1000;
  const out = new Int16Array(n + (SAMPLE_RATE * silenceMs) / 1000 + (SAMPLE_RATE * 300) / 1000);
  const off = (SAMPLE_RATE * 300) / 1000;
  for (let i = 0; i < n; i++) {
    let v = 0;
    for (const f of freqs) v += amp * Math.sin((2 * Math.PI * f * i) / SAMPLE_RATE);
    out[off + i] = Math.round(v * 32767);
  }
  return out;
}

const voicemail = (name: string) => loadFixture(`voicemail/${name}`);

describe('analyzeTone', () => {
  it('finds a pure tone to within 2 Hz with purity near 1', () => {
    const a = analyzeTone(tones([1234], 100, 0.3, 0).subarray(4800, 4800 + 960));
    expect(Math.abs(a.freqHz - 1234)).toBeLessThanOrEqual(2);
    expect(a.purity).toBeGreaterThan(0.95);
  });

  it('gives two equal tones 40 Hz apart (ringback) a purity near one half', () => {
    const a = analyzeTone(tones([440, 480], 100, 0.2, 0).subarray(4800, 4800 + 960));
    expect(a.purity).toBeLessThan(0.65);
  });
});

describe('BeepDetector', () => {
  it('finds the 1 kHz beep at the end of the fixture greeting, reported at its end', () => {
    const pcm = loadFixture('voicemail-greeting-beep');
    const beeps = detect(pcm);
    expect(beeps).toHaveLength(1);
    const b = beeps[0]!;
    // The fixture ends with the 500 ms beep then 1 s of silence.
    const totalMs = (pcm.length / SAMPLE_RATE) * 1000;
    expect(Math.abs(b.beepAtMs - (totalMs - 1000))).toBeLessThanOrEqual(60);
    expect(b.beepAtMs).toBeGreaterThanOrEqual(totalMs - 1000); // never before the beep is over
    expect(Math.abs(b.durationMs - 500)).toBeLessThanOrEqual(60);
    expect(b.freqHz).toBeGreaterThanOrEqual(996);
    expect(b.freqHz).toBeLessThanOrEqual(1004);
  });

  it('finds beeps across the voicemail band (400–2200 Hz) and of 150 ms', () => {
    for (const f of [425, 850, 1400, 2100]) {
      const b = detect(tones([f], 300));
      expect(b, `${f} Hz`).toHaveLength(1);
      expect(Math.abs(b[0]!.freqHz - f)).toBeLessThanOrEqual(3);
    }
    expect(detect(tones([1000], 170))).toHaveLength(1);
  });

  it('ignores tones shorter than 150 ms, longer than 2 s, or outside the band', () => {
    expect(detect(tones([1000], 80))).toHaveLength(0);
    expect(detect(tones([1000], 3000))).toHaveLength(0);
    expect(detect(tones([250], 500))).toHaveLength(0);
    expect(detect(tones([3000], 500))).toHaveLength(0);
  });

  it('ignores quiet tones (line noise level)', () => {
    expect(detect(tones([1000], 500, 0.003))).toHaveLength(0);
  });

  it('rejects North American, UK and European ringback', () => {
    expect(detect(voicemail('ringback-na'))).toHaveLength(0);
    expect(detect(voicemail('ringback-uk'))).toHaveLength(0);
    expect(detect(voicemail('ringback-eu'))).toHaveLength(0);
    expect(detect(tones([440], 1500))).toHaveLength(0); // French ringback: 440 Hz, 1.5 s on
    expect(detect(tones([350, 440], 1500))).toHaveLength(0); // dial tone burst
  });

  it('rejects DTMF, including a key held for 400 ms', () => {
    expect(detect(voicemail('dtmf-digits'))).toHaveLength(0);
    expect(detect(tones([770, 1336], 600))).toHaveLength(0);
  });

  it('ignores speech, backchannels, noise and a cough', () => {
    for (const name of ['utt-book-table', 'utt-opening-hours', 'bc-mm-hmm', 'noise-babble', 'noise-street', 'impulse-cough']) {
      expect(detect(loadFixture(name)), name).toHaveLength(0);
    }
    for (const name of ['greeting-no-beep', 'person-hello', 'ivr-menu']) expect(detect(voicemail(name)), name).toHaveLength(0);
  });

  it('finds the beep after ringback heard as early media, and nothing during the ringback', () => {
    const beeps = detect(voicemail('ringback-then-greeting-beep'));
    expect(beeps).toHaveLength(1);
    expect(beeps[0]!.startMs).toBeGreaterThan(3500);
  });

  it('rejects frames of the wrong size', () => {
    expect(() => new BeepDetector().push(new Int16Array(FRAME_SAMPLES - 1))).toThrow(RangeError);
  });
});
