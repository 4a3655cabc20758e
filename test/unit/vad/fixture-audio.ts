// Shared by the VAD, denoise and flite tests: fixture loading and waveform measurements that do
// not depend on the code under test.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SAMPLE_RATE, splitPcm, type AudioFrame } from '../../../src/audio/frame.ts';
import { resample } from '../../../src/audio/resample.ts';
import { readWav } from '../../../src/audio/wav.ts';
import { SpeechDetector, type SpeechDetectorOptions, type SpeechEvent } from '../../../src/audio/vad/detector.ts';
import type { SileroStream } from '../../../src/audio/vad/silero.ts';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/audio/', import.meta.url));

export function loadFixture(name: string): Int16Array {
  const wav = readWav(readFileSync(`${FIXTURES}${name}.wav`));
  if (wav.sampleRate !== SAMPLE_RATE || wav.channels !== 1) throw new Error(`${name}: not 16 kHz mono`);
  return wav.samples;
}

/** What a G.711 call delivers of `pcm`: through 8 kHz and back (the codec's band, no μ-law). */
export function telephoneBand(pcm: Int16Array): Int16Array {
  return resample(resample(pcm, SAMPLE_RATE, 8000), 8000, SAMPLE_RATE);
}

export function toFrames(pcm: Int16Array): AudioFrame[] {
  return splitPcm(pcm).map((samples) => ({ samples, sampleRate: SAMPLE_RATE }));
}

/**
 * Speech onset from the waveform alone: start of the first 5 ms block within 35 dB of the
 * loudest block. The fixtures have 500 ms of digital silence before the speech, so this is exact
 * to a few ms for clean fixtures.
 */
export function energyOnsetMs(pcm: Int16Array): number {
  const block = SAMPLE_RATE / 200;
  const energies: number[] = [];
  for (let at = 0; at + block <= pcm.length; at += block) {
    let e = 0;
    for (let i = at; i < at + block; i++) e += pcm[i]! * pcm[i]!;
    energies.push(e / block);
  }
  const max = Math.max(...energies);
  const idx = energies.findIndex((e) => e >= max * 10 ** (-35 / 10));
  return (idx * block * 1000) / SAMPLE_RATE;
}

export function energy(pcm: Int16Array, from = 0, to = pcm.length): number {
  let e = 0;
  for (let i = from; i < to; i++) e += pcm[i]! * pcm[i]!;
  return e / Math.max(1, to - from);
}

export const db = (ratio: number): number => 10 * Math.log10(ratio);

export async function runVad(
  stream: SileroStream,
  pcm: Int16Array,
  options?: SpeechDetectorOptions,
): Promise<{ probabilities: number[]; events: SpeechEvent[] }> {
  const detector = new SpeechDetector(options);
  const probabilities: number[] = [];
  const events: SpeechEvent[] = [];
  let at = 0;
  for (const frame of toFrames(pcm)) {
    const p = await stream.push(frame);
    probabilities.push(p);
    events.push(...detector.push(p, at));
    at += 20;
  }
  events.push(...detector.flush());
  return { probabilities, events };
}
