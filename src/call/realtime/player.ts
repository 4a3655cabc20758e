/**
 * The only writer of a realtime call's outbound audio. Model audio (multimodal) or our TTS
 * (dualplex) arrives in bursts far ahead of real time; the player keeps just `leadFrames` queued
 * on the media and writes the rest on the call clock, one frame per 20 ms.
 *
 * Why not `outbound.writeStream`: a stream hides which frames the media has actually sent. Here
 * every frame goes through `outbound.write` and a barge-in calls `outbound.flush()`, which says
 * how many queued frames it dropped, so "played" is exact: frames written minus frames flushed.
 * That number is what the model is told in its truncation, and what `heardText` cuts the words
 * by. (The pipeline's Speaker in cascade/ does the same for TTS; the two should merge into one
 * shared writer once cascade/ is finished.)
 *
 * Audio is played in clips (one per model item or per TTS utterance), in order, back to back.
 */
import { FRAME_MS, SAMPLE_RATE } from '../../audio/frame.ts';
import { FrameGridTicker } from '../wake-timer.ts';
import type { OutboundAudio } from '../../media/media-types.ts';
import type { Clock } from '../../util/clock.ts';
import type { StereoRecorder } from '../recorder.ts';

export interface PlayerEvents {
  /** The clip's first frame starts playing at `atMs` (ms since answer). */
  onStart(key: string, atMs: number): void;
  /** The clip is over: played to the end (`interrupted` false) or cut off. */
  onEnd(key: string, atMs: number, interrupted: boolean): void;
}

export interface PlayerOptions {
  clock: Clock;
  /** ms since answer. */
  now: () => number;
  outbound: OutboundAudio;
  events: PlayerEvents;
  recorder?: StereoRecorder | undefined;
  /** Frames kept queued on the media: jitter margin vs. what a barge-in has to drop. */
  leadFrames?: number;
}

interface Clip {
  key: string;
  frames: Int16Array[];
  /** Index of the next frame to write. */
  next: number;
  finished: boolean;
  started: boolean;
  /** Frames the media accepted. */
  written: number;
  /** Of those, frames a flush took back. */
  flushed: number;
  lastEndMs: number;
  /** When each accepted frame plays. */
  playAts: number[];
}

/** What a cut clip had really sent when it was stopped. */
export interface CutClip {
  key: string;
  sentFrames: number;
  playedMs: number;
  /** False when nothing of it had been written yet (it was only queued). */
  started: boolean;
}

/** Keys of recently written frames, newest last: a flush drops the newest ones first. */
const RECENT = 512;

export class Player {
  private readonly o: PlayerOptions;
  private readonly leadMs: number;
  private clips: Clip[] = [];
  private recent: Clip[] = [];
  private writtenUntilMs = 0;
  private readonly grid: FrameGridTicker;
  private stopped = false;

  constructor(options: PlayerOptions) {
    this.o = options;
    this.leadMs = (options.leadFrames ?? 3) * FRAME_MS;
    this.grid = new FrameGridTicker(options.clock, options.now, () => this.pump(), FRAME_MS);
  }

  start(): void {
    this.writtenUntilMs = this.o.now();
    this.grid.start();
  }

  stop(): void {
    this.stopped = true;
    this.grid.stop();
  }

  /** A clip is open (playing, or waiting for its first frame). */
  get busy(): boolean {
    return this.clips.length > 0;
  }

  has(key: string): boolean {
    return this.clips.some((c) => c.key === key);
  }

  push(key: string, samples: Int16Array): void {
    if (this.stopped) return;
    let clip = this.clips.find((c) => c.key === key);
    if (!clip) {
      clip = { key, frames: [], next: 0, finished: false, started: false, written: 0, flushed: 0, lastEndMs: 0, playAts: [] };
      this.clips.push(clip);
    }
    if (clip.finished) return;
    clip.frames.push(samples);
    this.pump();
  }

  /** Returns how many frames were queued. */
  pushAll(key: string, frames: readonly { samples: Int16Array }[]): number {
    for (const f of frames) this.push(key, f.samples);
    return frames.length;
  }

  /** No more audio for `key`. False when the clip never had any (nothing will play or end). */
  finish(key: string): boolean {
    const clip = this.clips.find((c) => c.key === key);
    if (!clip) return false;
    clip.finished = true;
    if (clip.frames.length === 0) {
      this.clips = this.clips.filter((c) => c !== clip);
      return false;
    }
    this.pump();
    return true;
  }

  /** ms of `key` the media has sent by now (its frames written minus any flushed). */
  sentMs(key: string): number {
    const clip = this.clips.find((c) => c.key === key);
    return clip ? (clip.written - clip.flushed) * FRAME_MS : 0;
  }

  /** ms of `key` whose playing time has begun by now (the clock's view, for a hang-up). */
  playedMs(key: string): number {
    const clip = this.clips.find((c) => c.key === key);
    if (!clip) return 0;
    const now = this.o.now();
    return clip.playAts.filter((t) => t < now).length * FRAME_MS;
  }

  /**
   * Barge-in: drop everything, on the media at once (`outbound.flush()`, so nothing more is
   * heard from the next 20 ms slot on) and here. Returns each clip with what it had sent.
   */
  interrupt(): CutClip[] {
    const now = this.o.now();
    let dropped = this.o.outbound.flush();
    // The media queue is FIFO: the frames it dropped are the newest ones written.
    for (let i = this.recent.length - 1; i >= 0 && dropped > 0; i--, dropped--) this.recent[i]!.flushed++;
    this.recent = [];
    const cut = this.clips.map((c) => ({ key: c.key, sentFrames: c.written - c.flushed, playedMs: (c.written - c.flushed) * FRAME_MS, started: c.started }));
    const clips = this.clips;
    this.clips = [];
    this.writtenUntilMs = now;
    for (const c of clips) if (c.started) this.o.events.onEnd(c.key, now, true);
    return cut;
  }

  private pump(): void {
    if (this.stopped) return;
    const now = this.o.now();
    if (this.writtenUntilMs < now) this.writtenUntilMs = now;
    while (this.writtenUntilMs < now + this.leadMs) {
      const clip = this.clips.find((c) => c.next < c.frames.length || !c.finished);
      if (!clip || clip.next >= clip.frames.length) break; // waiting for more audio of the head clip
      this.write(clip, clip.frames[clip.next++]!);
    }
    this.checkEnds(now);
  }

  private write(clip: Clip, samples: Int16Array): void {
    const playAtMs = this.writtenUntilMs;
    if (!clip.started) {
      clip.started = true;
      this.o.events.onStart(clip.key, playAtMs);
    }
    // A frame the media refuses (on hold, closed) is not heard: it does not count as sent.
    if (this.o.outbound.write({ samples, sampleRate: SAMPLE_RATE })) {
      clip.written++;
      clip.playAts.push(playAtMs);
      this.recent.push(clip);
      if (this.recent.length > RECENT) this.recent.splice(0, this.recent.length - RECENT);
      this.o.recorder?.assistant(playAtMs, samples);
    }
    this.writtenUntilMs += (samples.length / SAMPLE_RATE) * 1000;
    clip.lastEndMs = this.writtenUntilMs;
  }

  private checkEnds(now: number): void {
    while (this.clips.length > 0) {
      const head = this.clips[0]!;
      if (!head.finished || head.next < head.frames.length || head.lastEndMs > now) return;
      this.clips.shift();
      this.o.events.onEnd(head.key, head.lastEndMs, false);
    }
  }
}
