/**
 * The only writer of the call's outbound audio. It paces frames onto the media itself (a few
 * frames ahead, on the call clock) instead of handing a stream to writeStream, because the
 * engine must know when each frame plays: the assistant's speaking state for turn-taking,
 * "what did the caller hear" after a barge-in, and the recording's right channel all hang on it.
 *
 * With an ambient bed it writes continuously (silence frames carry the bed), so the line never
 * drops to comfort silence. Speech preempts queued bed-only frames: the first reply frame goes
 * out at once instead of behind the lead.
 */
import { FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE } from '../../audio/frame.ts';
import { FrameGridTicker } from '../wake-timer.ts';
import type { AmbientMixer } from '../../audio/mixer.ts';
import type { OutboundAudio } from '../../media/media-types.ts';
import type { Clock } from '../../util/clock.ts';
import type { RecordingSink } from '../recorder.ts';

/** -12 dB while an overlap is undecided: audible, but no longer talking over the caller. */
const DUCK_GAIN = 0.25;

export interface SpeakerEvents {
  /** The turn's first frame starts playing at `atMs`. */
  onStart(turn: number, atMs: number): void;
  /** The turn's audio is over: played out (`interrupted` false) or cut off. */
  onEnd(turn: number, atMs: number, interrupted: boolean): void;
  /** A frame of the turn was written; `atMs` is when it plays. */
  onFrame?(turn: number, seg: number, atMs: number): void;
}

export interface SpeakerOptions {
  clock: Clock;
  /** ms since answer. */
  now: () => number;
  outbound: OutboundAudio;
  events: SpeakerEvents;
  ambient?: AmbientMixer | undefined;
  recorder?: RecordingSink | undefined;
  /** Frames kept queued ahead on the media: jitter margin vs. how much a barge-in must drop. */
  leadFrames?: number;
}

interface Queued {
  samples: Int16Array;
  turn: number;
  seg: number;
}

interface Written extends Queued {
  playAtMs: number;
  speech: boolean;
}

interface Current {
  turn: number;
  started: boolean;
  finished: boolean;
  playedFrames: number;
  lastEndMs: number;
}

export class Speaker {
  private readonly o: SpeakerOptions;
  private readonly leadMs: number;
  private queue: Queued[] = [];
  private written: Written[] = [];
  private writtenUntilMs = 0;
  private current: Current | undefined;
  private ducked = false;
  private paused = false;
  /** The 20 ms pacing while there is something to pace (see `idle`); undefined while idle. */
  private grid: FrameGridTicker | undefined;
  private stopped = false;

  constructor(options: SpeakerOptions) {
    this.o = options;
    this.leadMs = (options.leadFrames ?? 3) * FRAME_MS;
  }

  /** Start the 20 ms pacing; the first tick writes the ambient lead, if any. */
  start(): void {
    this.writtenUntilMs = this.o.now();
    this.wakeGrid();
  }

  stop(): void {
    this.stopped = true;
    this.grid?.stop();
    this.grid = undefined;
  }

  get speaking(): boolean {
    return this.current?.started ?? false;
  }

  get turn(): number | undefined {
    return this.current?.turn;
  }

  /** A turn begins producing audio. A previous turn still open is cut off. */
  open(turn: number): void {
    if (this.current?.turn === turn) return;
    if (this.current) this.interrupt();
    this.current = { turn, started: false, finished: false, playedFrames: 0, lastEndMs: 0 };
  }

  push(turn: number, seg: number, samples: Int16Array): void {
    if (this.current?.turn !== turn || this.stopped) return;
    this.queue.push({ samples, turn, seg });
    // Leaving idle: the grid's first tick pumps at once; otherwise pump now.
    if (!this.wakeGrid()) this.pump();
  }

  /** No more audio will come for `turn`. Returns false when it never played anything. */
  finish(turn: number): boolean {
    const c = this.current;
    if (c?.turn !== turn) return true;
    c.finished = true;
    if (!c.started && this.queue.length === 0) {
      this.current = undefined;
      return false;
    }
    this.pump();
    return true;
  }

  /** Frames of the current turn that have started playing by now. */
  playedFrames(turn: number): number {
    const c = this.current;
    if (c?.turn !== turn) return 0;
    const now = this.o.now();
    return c.playedFrames + this.written.filter((w) => w.speech && w.playAtMs < now).length;
  }

  /**
   * Barge-in (or a goodbye taking over): drop everything queued here and on the media at once.
   * Returns the ms of the turn's audio that had started playing (for heardText).
   */
  interrupt(): number {
    const c = this.current;
    const now = this.o.now();
    const playedMs = c ? this.playedFrames(c.turn) * FRAME_MS : 0;
    this.o.outbound.flush();
    this.queue = [];
    this.written = [];
    this.writtenUntilMs = now;
    this.ducked = false;
    this.paused = false;
    this.current = undefined;
    if (c?.started) this.o.events.onEnd(c.turn, now, true);
    this.pump();
    return playedMs;
  }

  duck(on: boolean): void {
    this.ducked = on;
  }

  /** Hold the reply where it is (frames already on the media come back here). */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    const now = this.o.now();
    this.o.outbound.flush();
    const back = this.written.filter((w) => w.speech && w.playAtMs >= now);
    this.queue.unshift(...back.map(({ samples, turn, seg }) => ({ samples, turn, seg })));
    this.written = this.written.filter((w) => w.playAtMs < now);
    this.writtenUntilMs = now;
    this.pump();
  }

  /** Undo duck or pause: the overlap was not an interruption. */
  resume(): void {
    this.ducked = false;
    if (!this.paused) return;
    this.paused = false;
    this.pump();
  }

  /**
   * Nothing to pace: no bed, no turn, nothing queued or still playing. The grid then stops, so a
   * call in which the assistant is silent costs no timer every 20 ms (most of a call, and one timer
   * per call per frame otherwise); `push` (or `start` with a bed) wakes it again.
   */
  private get idle(): boolean {
    return !this.o.ambient && !this.current && this.queue.length === 0 && this.written.length === 0;
  }

  /** Restarts the pacing if it was idle; true when it did (its first tick has just pumped). */
  private wakeGrid(): boolean {
    if (this.grid || this.stopped) return false;
    const grid = new FrameGridTicker(this.o.clock, () => this.onGridTick(grid), FRAME_MS);
    this.grid = grid;
    grid.start();
    return true;
  }

  private onGridTick(grid: FrameGridTicker): void {
    this.pump();
    if (this.grid === grid && this.idle) {
      grid.stop();
      this.grid = undefined;
    }
  }

  private pump(): void {
    if (this.stopped) return;
    const now = this.o.now();
    this.retire(now);
    if (this.writtenUntilMs < now) this.writtenUntilMs = now;
    const c = this.current;
    if (c && !c.started && !this.paused && this.queue.length > 0 && this.writtenUntilMs > now && this.written.every((w) => !w.speech)) {
      // Speech preempts bed-only frames already queued: the reply starts now, not after the lead.
      this.o.outbound.flush();
      this.written = [];
      this.writtenUntilMs = now;
    }
    while (this.writtenUntilMs < now + this.leadMs) {
      const next = this.paused ? undefined : this.queue[0];
      if (!next) {
        // Mid-utterance, the next speech frame is usually microseconds away (TTS streams frame
        // by frame): pad with bed only when the media would otherwise starve, or a bed frame
        // would be wedged between two speech frames.
        if (!this.o.ambient || (this.current && this.writtenUntilMs > now)) break;
        this.write(new Int16Array(FRAME_SAMPLES), undefined);
        continue;
      }
      this.queue.shift();
      this.write(next.samples, next);
    }
    this.checkEnd(now);
  }

  private write(samples: Int16Array, frame: Queued | undefined): void {
    const c = this.current;
    if (frame && c && !c.started) {
      c.started = true;
      this.o.events.onStart(c.turn, this.writtenUntilMs);
    }
    // Speech frames are ours (pushed once, never touched again by their producer) and nothing
    // downstream writes into a frame, so one goes out as it is unless it has to change.
    let out = samples;
    if (frame && this.ducked) {
      out = new Int16Array(samples.length);
      for (let i = 0; i < samples.length; i++) out[i] = Math.round(samples[i]! * DUCK_GAIN);
    } else if (this.o.ambient && frame) out = samples.slice();
    this.o.ambient?.mix(out, out);
    const playAtMs = this.writtenUntilMs;
    this.o.outbound.write({ samples: out, sampleRate: SAMPLE_RATE });
    this.o.recorder?.assistant(playAtMs, out);
    this.written.push({ samples, turn: frame?.turn ?? -1, seg: frame?.seg ?? -1, playAtMs, speech: frame !== undefined });
    this.writtenUntilMs += (samples.length / SAMPLE_RATE) * 1000;
    if (frame && c) {
      c.lastEndMs = this.writtenUntilMs;
      this.o.events.onFrame?.(frame.turn, frame.seg, playAtMs);
    }
  }

  /** Frames fully played are forgotten (counted for the turn). */
  private retire(now: number): void {
    let i = 0;
    while (i < this.written.length && this.written[i]!.playAtMs + FRAME_MS <= now) {
      const w = this.written[i]!;
      if (w.speech && this.current?.turn === w.turn) this.current.playedFrames++;
      i++;
    }
    if (i > 0) this.written.splice(0, i);
  }

  private checkEnd(now: number): void {
    const c = this.current;
    if (!c || !c.started || !c.finished || this.queue.length > 0) return;
    if (this.written.some((w) => w.speech) || c.lastEndMs > now) return;
    this.current = undefined;
    this.ducked = false;
    this.paused = false;
    this.o.events.onEnd(c.turn, c.lastEndMs, false);
  }
}
