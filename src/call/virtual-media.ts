/**
 * An in-memory call on a ManualClock: the fixture replayer. A scripted caller timeline (audio
 * placed at times, DTMF, a hang-up) becomes the inbound frames; the outbound side is played at
 * one frame per 20 ms of virtual time and kept, so a test can assert what the caller heard and
 * when. It implements CallMedia, so the engine cannot tell it from a CallSession.
 *
 * Determinism: `drive` advances the clock 20 ms at a time, and only once the engine is idle —
 * no tracked real work in flight (VAD inference, Flite synthesis) and its inbound loop waiting
 * for the next frame. Real work therefore takes zero virtual time; latency a stand-in simulates
 * on the clock takes exactly what it says. A call of minutes replays in about a second.
 */
import { FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, rmsDbfs, type AudioFrame } from '../audio/frame.ts';
import type { OutboundAudio } from '../media/media-types.ts';
import type { ManualClock } from '../util/clock.ts';
import { BusyCounter } from './cascade/work.ts';
import type { CallMedia, DtmfEvent, EngineEndCause } from './engine.ts';

export interface CallerItem {
  /** When the audio starts, in ms from answer. */
  atMs: number;
  samples: Int16Array;
  /** What a stand-in STT "hears" in it; empty for noise. */
  transcript?: string;
  label?: string;
}

/**
 * Caller audio that is not a mix of items: a recorded call tape played through the inbound
 * media chain (src/replay/tape-replay.ts). Asked once per 20 ms slot, when the slot has ended.
 */
export interface CallerSource {
  frame(startMs: number): Int16Array | Promise<Int16Array>;
}

export interface CallerScript {
  items: CallerItem[];
  /** The base of every inbound frame; `items` are mixed over it. */
  source?: CallerSource;
  dtmf?: { atMs: number; digit: string }[];
  /** The caller hangs up here (ms from answer); otherwise the call lasts until the engine ends it. */
  hangUpAtMs?: number;
  /**
   * The codec the call would have negotiated (a replayed call tape's): what `outbound.codec`
   * reports, so the engine picks the same narrowband models as on the live call. None by default.
   */
  codec?: string;
}

/** One 20 ms slot of what went out to the caller; `samples` undefined = comfort silence. */
export interface PlayedSlot {
  atMs: number;
  samples: Int16Array | undefined;
}

class VirtualOutbound implements OutboundAudio {
  queue: AudioFrame[] = [];
  closed = false;
  private popWaiters: (() => void)[] = [];

  constructor(
    readonly codec: string | undefined,
    private readonly maxQueuedMs = 2_000,
  ) {}

  write(frame: AudioFrame): boolean {
    if (this.closed || this.queue.length * FRAME_MS >= this.maxQueuedMs) return false;
    this.queue.push(frame);
    return true;
  }

  async writeStream(frames: AsyncIterable<AudioFrame>, signal?: AbortSignal): Promise<void> {
    for await (const frame of frames) {
      if (signal?.aborted || this.closed) break;
      while (this.queue.length >= 5 && !this.closed) await new Promise<void>((r) => this.popWaiters.push(r));
      this.write(frame);
    }
    if (signal?.aborted) this.flush();
  }

  flush(): number {
    const n = this.queue.length;
    this.queue = [];
    return n;
  }

  get playing(): boolean {
    return this.queue.length > 0;
  }

  pop(): AudioFrame | undefined {
    const f = this.queue.shift();
    const waiters = this.popWaiters;
    this.popWaiters = [];
    for (const w of waiters) w();
    return f;
  }
}

export class VirtualMedia implements CallMedia {
  readonly work = new BusyCounter();
  readonly played: PlayedSlot[] = [];
  readonly sentDtmf: { atMs: number; digits: string }[] = [];
  closedAtMs: number | undefined;
  closedCause: EngineEndCause | 'remote-hangup' | undefined;
  private readonly t0: number;
  private readonly out: VirtualOutbound;
  private readonly dtmfListeners = new Set<(e: DtmfEvent) => void>();
  private waiting = false;
  private inboundDone = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly clock: ManualClock,
    readonly script: CallerScript,
  ) {
    this.t0 = clock.now();
    this.out = new VirtualOutbound(script.codec);
    this.schedulePop(1);
    for (const d of script.dtmf ?? []) clock.setTimeout(() => this.dtmf(d.digit, 100), d.atMs);
  }

  /** The caller presses a key now (what an RtpSession's `dtmf` event is to a CallSession). */
  dtmf(digit: string, durationMs: number): void {
    for (const fn of this.dtmfListeners) fn({ digit, durationMs });
  }

  get nowMs(): number {
    return this.clock.now() - this.t0;
  }

  get closed(): boolean {
    return this.closedCause !== undefined;
  }

  get outbound(): OutboundAudio {
    return this.out;
  }

  get inbound(): AsyncIterable<AudioFrame> {
    return { [Symbol.asyncIterator]: () => this.frames() };
  }

  on(_event: 'dtmf', fn: (e: DtmfEvent) => void): this {
    this.dtmfListeners.add(fn);
    return this;
  }

  off(_event: 'dtmf', fn: (e: DtmfEvent) => void): this {
    this.dtmfListeners.delete(fn);
    return this;
  }

  async sendDtmf(digits: string): Promise<void> {
    this.sentDtmf.push({ atMs: this.nowMs, digits });
  }

  async close(cause: EngineEndCause | 'remote-hangup'): Promise<void> {
    if (this.closedCause) return;
    this.closedCause = cause;
    this.closedAtMs = this.nowMs;
    this.out.closed = true;
    this.out.flush();
    this.wake?.();
  }

  /** The caller's transcript at `audioMs` (for a stand-in STT): the script item playing then. */
  transcriptAt(audioMs: number): string {
    const item = this.script.items.find((i) => audioMs >= i.atMs && audioMs < i.atMs + (i.samples.length / SAMPLE_RATE) * 1000);
    return item?.transcript ?? '';
  }

  /**
   * Run `engine` to completion on the virtual clock. `maxMs` is a safety net: the caller hangs
   * up then if nobody ended the call.
   */
  async drive<T>(engine: () => Promise<T>, maxMs = 30 * 60_000): Promise<T> {
    let done = false;
    const run = engine().finally(() => {
      done = true;
    });
    run.catch(() => {});
    while (!done) {
      await this.settle(() => done);
      if (done) break;
      if (this.nowMs >= maxMs && !this.closed) await this.close('remote-hangup');
      this.clock.advance(FRAME_MS);
    }
    return run;
  }

  /** Runs of audible output (speech, not the bed): [start, end) ms, gaps up to `gapMs` merged. */
  audibleRuns(minDbfs = -30, gapMs = 200): { startMs: number; endMs: number }[] {
    const runs: { startMs: number; endMs: number }[] = [];
    for (const slot of this.played) {
      if (!slot.samples || rmsDbfs(slot.samples) < minDbfs) continue;
      const last = runs[runs.length - 1];
      if (last && slot.atMs - last.endMs <= gapMs) last.endMs = slot.atMs + FRAME_MS;
      else runs.push({ startMs: slot.atMs, endMs: slot.atMs + FRAME_MS });
    }
    return runs;
  }

  private async settle(isDone: () => boolean): Promise<void> {
    let quiet = 0;
    for (let spins = 0; quiet < 3; spins++) {
      await new Promise<void>((r) => setImmediate(r));
      if (isDone()) return;
      quiet = this.work.idle && (this.waiting || this.inboundDone) ? quiet + 1 : 0;
      if (spins > 1_000_000) throw new Error('the engine never became idle');
    }
  }

  private schedulePop(slot: number): void {
    this.clock.setTimeout(() => {
      if (this.closed) return;
      const frame = this.out.pop();
      this.played.push({ atMs: this.nowMs, samples: frame?.samples });
      this.schedulePop(slot + 1);
    }, this.t0 + slot * FRAME_MS - this.clock.now());
  }

  private async *frames(): AsyncGenerator<AudioFrame> {
    try {
      for (let k = 0; ; k++) {
        const startMs = k * FRAME_MS;
        if (this.script.hangUpAtMs !== undefined && startMs >= this.script.hangUpAtMs) await this.close('remote-hangup');
        if (this.closed) return;
        // A frame is there once it has been fully "spoken": at its end.
        const dueAt = this.t0 + startMs + FRAME_MS;
        if (this.clock.now() < dueAt) await this.until(dueAt);
        if (this.closed) return;
        const base = this.script.source ? await this.script.source.frame(startMs) : undefined;
        if (this.closed) return;
        yield { samples: this.mix(startMs, base), sampleRate: SAMPLE_RATE };
      }
    } finally {
      this.inboundDone = true;
    }
  }

  private until(at: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiting = true;
      const timer = this.clock.setTimeout(() => done(), at - this.clock.now());
      const done = (): void => {
        timer.cancel();
        this.waiting = false;
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
    });
  }

  private mix(startMs: number, base?: Int16Array): Int16Array {
    const out = new Int16Array(FRAME_SAMPLES);
    if (base) out.set(base.subarray(0, FRAME_SAMPLES));
    const from = (startMs * SAMPLE_RATE) / 1000;
    for (const item of this.script.items) {
      const offset = from - Math.round((item.atMs * SAMPLE_RATE) / 1000);
      if (offset + FRAME_SAMPLES <= 0 || offset >= item.samples.length) continue;
      for (let i = 0; i < FRAME_SAMPLES; i++) {
        const v = (out[i] ?? 0) + (item.samples[offset + i] ?? 0);
        out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      }
    }
    return out;
  }
}
