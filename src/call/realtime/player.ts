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
 *
 * μ-law pass-through: a clip may hold the model's 160-byte G.711 μ-law payloads instead of
 * frames (`pushMulaw`); they go to the media as they are (`outbound.writeMulaw`, which sends
 * them as RTP payloads on a PCMU call), 20 ms each like a frame, so the sent position stays
 * exact. They are decoded only for the recording. A clip can mix both (never in practice).
 */
import { FRAME_MS, SAMPLE_RATE } from '../../audio/frame.ts';
import { Resampler } from '../../audio/resample.ts';
import { ulaw } from '../../media/codecs/g711.ts';
import { FrameGridTicker } from '../wake-timer.ts';
import type { OutboundAudio } from '../../media/media-types.ts';
import type { Clock } from '../../util/clock.ts';
import type { RecordingSink } from '../recorder.ts';

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
  recorder?: RecordingSink | undefined;
  /** Frames kept queued on the media: jitter margin vs. what a barge-in has to drop. */
  leadFrames?: number;
}

interface Clip {
  key: string;
  /** 16 kHz frames, or 20 ms μ-law payloads (pass-through). */
  frames: (Int16Array | Uint8Array)[];
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

/** G.711: 8 kHz, one byte a sample. */
const MULAW_BYTES_PER_MS = 8;

/** Keys of recently written frames, newest last: a flush drops the newest ones first. */
const RECENT = 512;

export class Player {
  private readonly o: PlayerOptions;
  private readonly leadMs: number;
  private clips: Clip[] = [];
  private recent: Clip[] = [];
  private writtenUntilMs = 0;
  /** The 20 ms pacing while a clip is open; none while the assistant is silent (most of a call). */
  private grid: FrameGridTicker | undefined;
  private started = false;
  private stopped = false;
  private upsampler: Resampler | undefined;

  constructor(options: PlayerOptions) {
    this.o = options;
    this.leadMs = (options.leadFrames ?? 3) * FRAME_MS;
  }

  start(): void {
    this.writtenUntilMs = this.o.now();
    this.started = true;
  }

  stop(): void {
    this.stopped = true;
    this.grid?.stop();
    this.grid = undefined;
  }

  /** A clip is open (playing, or waiting for its first frame). */
  get busy(): boolean {
    return this.clips.length > 0;
  }

  has(key: string): boolean {
    return this.clips.some((c) => c.key === key);
  }

  push(key: string, samples: Int16Array | Uint8Array): void {
    if (this.stopped) return;
    let clip = this.clips.find((c) => c.key === key);
    if (!clip) {
      clip = { key, frames: [], next: 0, finished: false, started: false, written: 0, flushed: 0, lastEndMs: 0, playAts: [] };
      this.clips.push(clip);
    }
    if (clip.finished) return;
    clip.frames.push(samples);
    // Leaving silence: the grid's first tick pumps at once; otherwise pump now.
    if (!this.wakeGrid()) this.pump();
  }

  /** Starts the pacing if it was idle; true when it did. */
  private wakeGrid(): boolean {
    if (this.grid || this.stopped || !this.started) return false;
    const grid = new FrameGridTicker(this.o.clock, () => this.onGridTick(grid), FRAME_MS);
    this.grid = grid;
    grid.start();
    return true;
  }

  private onGridTick(grid: FrameGridTicker): void {
    this.pump();
    if (this.grid === grid && this.clips.length === 0) {
      grid.stop();
      this.grid = undefined;
    }
  }

  /** Returns how many frames were queued. */
  pushAll(key: string, frames: readonly { samples: Int16Array }[]): number {
    for (const f of frames) this.push(key, f.samples);
    return frames.length;
  }

  /** 20 ms μ-law payloads (160 bytes each), passed through; returns how many were queued. */
  pushAllMulaw(key: string, payloads: readonly Uint8Array[]): number {
    for (const p of payloads) this.push(key, p);
    return payloads.length;
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

  private write(clip: Clip, audio: Int16Array | Uint8Array): void {
    const playAtMs = this.writtenUntilMs;
    if (!clip.started) {
      clip.started = true;
      this.o.events.onStart(clip.key, playAtMs);
    }
    const pcm = audio instanceof Int16Array;
    // A frame the media refuses (on hold, closed) is not heard: it does not count as sent.
    if (pcm ? this.o.outbound.write({ samples: audio, sampleRate: SAMPLE_RATE }) : this.writeMulaw(audio)) {
      clip.written++;
      clip.playAts.push(playAtMs);
      this.recent.push(clip);
      if (this.recent.length > RECENT) this.recent.splice(0, this.recent.length - RECENT);
      if (this.o.recorder) this.o.recorder.assistant(playAtMs, pcm ? audio : this.forRecording(audio));
    }
    this.writtenUntilMs += pcm ? (audio.length / SAMPLE_RATE) * 1000 : audio.length / MULAW_BYTES_PER_MS;
    clip.lastEndMs = this.writtenUntilMs;
  }

  /** μ-law as it is where the media takes it; decoded (8 kHz) where it does not. */
  private writeMulaw(payload: Uint8Array): boolean {
    const out = this.o.outbound;
    if (out.writeMulaw) return out.writeMulaw(payload);
    return out.write({ samples: ulaw.decode(payload), sampleRate: 8000 });
  }

  /** The recording is 16 kHz: pass-through audio is decoded for it, and only for it. */
  private forRecording(payload: Uint8Array): Int16Array {
    this.upsampler ??= new Resampler(8000, SAMPLE_RATE);
    return this.upsampler.process(ulaw.decode(payload));
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
