/**
 * A caller that talks, for the voice benchmarks: on a load-generator leg (loadgen.ts MediaLeg,
 * PCMU 20 ms on the shared deadline clock), room tone by default and a spoken question when
 * told; on receive, every packet's level (µ-law decoded, RMS ≥ 200 = audible, as the e2e tests
 * judge) with its arrival time on the machine-wide clock (lib/mono.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resample } from '../../src/audio/resample.ts';
import { readWav, toMono } from '../../src/audio/wav.ts';
import { ulaw } from '../../src/media/codecs/g711.ts';
import type { MediaLeg } from './loadgen.ts';
import { mono } from './mono.ts';

export const AUDIBLE_RMS = 200;
const decode = ulaw.decode(Uint8Array.from({ length: 256 }, (_, i) => i));

/** A fixture as 20 ms PCMU payloads (8 kHz). */
export function pcmuFrames(name: string): Buffer[] {
  const wav = readWav(readFileSync(fileURLToPath(new URL(`../../fixtures/audio/${name}.wav`, import.meta.url))));
  const pcm8 = resample(toMono(wav), wav.sampleRate, 8000);
  const out: Buffer[] = [];
  for (let i = 0; i < pcm8.length; i += 160) {
    const f = new Int16Array(160);
    f.set(pcm8.subarray(i, i + 160));
    out.push(Buffer.from(ulaw.encode(f)));
  }
  return out;
}

export function isAudible(payload: Uint8Array): boolean {
  if (payload.length === 0) return false;
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    const s = decode[payload[i]!]!;
    sum += s * s;
  }
  return Math.sqrt(sum / payload.length) >= AUDIBLE_RMS;
}

export class Caller {
  /** Arrival times (mono ms) of every audible packet. */
  readonly audible: number[] = [];
  lastAudibleAt = -Infinity;
  private bgAt: number;
  private speech: Buffer[] | undefined;
  private speechAt = 0;
  private spoken: (() => void) | undefined;
  private audibleWaiters: Array<{ after: number; resolve: (at: number) => void }> = [];

  constructor(
    readonly leg: MediaLeg,
    private readonly background: Buffer[],
  ) {
    this.bgAt = Math.floor(Math.random() * background.length);
    leg.source = () => this.next();
    leg.onAudio = (payload) => {
      if (!isAudible(payload)) return;
      const at = mono();
      this.audible.push(at);
      this.lastAudibleAt = at;
      if (this.audibleWaiters.length > 0) {
        const keep: typeof this.audibleWaiters = [];
        for (const w of this.audibleWaiters) (at >= w.after ? w.resolve(at) : keep.push(w));
        this.audibleWaiters = keep;
      }
    };
  }

  private next(): Buffer {
    if (this.speech) {
      const f = this.speech[this.speechAt++]!;
      if (this.speechAt >= this.speech.length) {
        this.speech = undefined;
        const done = this.spoken;
        this.spoken = undefined;
        done?.();
      }
      return f;
    }
    const f = this.background[this.bgAt]!;
    this.bgAt = (this.bgAt + 1) % this.background.length;
    return f;
  }

  /** Plays `frames` once (then room tone again); resolves when the last frame has been sent. */
  say(frames: Buffer[]): Promise<number> {
    return new Promise((resolve) => {
      this.speech = frames;
      this.speechAt = 0;
      this.spoken = () => resolve(mono());
    });
  }

  /** The first audible arrival at or after `after` (mono ms), waiting at most `timeoutMs`. */
  firstAudible(after: number, timeoutMs: number): Promise<number | undefined> {
    const seen = this.audible.find((t) => t >= after);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const w = { after, resolve: (at: number) => (clearTimeout(timer), resolve(at)) };
      const timer = setTimeout(() => {
        this.audibleWaiters = this.audibleWaiters.filter((x) => x !== w);
        resolve(undefined);
      }, timeoutMs);
      this.audibleWaiters.push(w);
    });
  }

  /** Resolves once nothing audible arrived for `quietMs` (false after `timeoutMs`). */
  async quiet(quietMs: number, timeoutMs: number): Promise<boolean> {
    const until = mono() + timeoutMs;
    for (;;) {
      const now = mono();
      const since = now - this.lastAudibleAt;
      if (since >= quietMs) return true;
      if (now > until) return false;
      await new Promise((r) => setTimeout(r, Math.max(10, quietMs - since)));
    }
  }

  detach(): void {
    this.leg.source = undefined;
    this.leg.onAudio = undefined;
  }
}
