/**
 * The call's STT stream: opened once per call (reopened once after a provider error), its
 * interim/final events handed to the cores, and the end-of-turn's bounded wait for the final
 * that `finalize()` asks for. A final arriving during that wait belongs to the turn just decided,
 * not to the next one, so it is claimed here instead of being passed on.
 */
import type { AudioFrame } from '../../audio/frame.ts';
import { meanSquareInt16, SilenceGate } from '../../audio/silence-gate.ts';
import type { SttProvider, SttSampleRate, SttStream } from '../../providers/stt/types.ts';
import type { Clock } from '../../util/clock.ts';

export interface SttReaderHooks {
  now(): number;
  onInterim(text: string, atMs: number): void;
  /** Every final, claimed or not (barge-in word counts, timeline). */
  onAnyFinal(text: string, atMs: number): void;
  /** Finals for the turn in progress. */
  onFinal(text: string, atMs: number): void;
  onError(message: string, retrying: boolean): void;
  track(p: Promise<unknown>): void;
}

/**
 * While the caller is quiet (the silence gate closed, ../../audio/silence-gate.ts), audio goes in
 * chunks of this many frames (200 ms, inside Deepgram's recommended 20–250 ms): there are no words
 * to hurry. The first loud frame sends what is held at once.
 */
export const QUIET_CHUNK_FRAMES = 10;
/** Quiet frames after the last loud one still sent at the normal pace (the end of a word). */
const QUIET_HANGOVER_FRAMES = 10;
/**
 * Quiet frames after the last loud one from which the line is idle and nothing more is sent
 * (600 ms): a quiet line is most of a call, and a streaming recogniser bills and transcribes
 * every second it is sent. By then the recogniser has had 600 ms of the silence after the last
 * word, past its own endpointing (Deepgram's 300 ms here), so its finals for those words come as
 * they would on a streamed line. The stream keeps its socket open by itself meanwhile (Deepgram's
 * KeepAlive), and `finalize()` still answers from what was sent. Only a stream that takes
 * `skip` is left idle: it is told how much was left out, so its times stay on the call's clock.
 */
export const IDLE_AFTER_FRAMES = 30;
/**
 * While idle, the last 5 to 9 quiet frames are held (100–180 ms) and sent ahead of the first
 * loud frame: the recogniser hears the line before a word, and an onset below the gate's level
 * is not cut.
 */
export const PREROLL_FRAMES = 5;

export class SttReader {
  lastInterim = '';
  lastFinalAtMs: number | undefined;
  private stream: SttStream | undefined;
  private waiter: ((text: string) => void) | undefined;
  private reopened = false;
  /** Caller audio not yet handed to the stream (see `write`). */
  private chunk: Int16Array | undefined;
  private chunkFill = 0;
  private chunkRate = 0;
  private readonly quiet = new SilenceGate(QUIET_HANGOVER_FRAMES);
  private readonly idle = new SilenceGate(IDLE_AFTER_FRAMES);
  /** The last frame written found the line idle: what is held is pre-roll, not yet the stream's. */
  private idling = false;
  /** The stream's rate (see open). */
  private rate: SttSampleRate = 16000;

  constructor(
    private readonly provider: SttProvider,
    private readonly language: string,
    private readonly clock: Clock,
    private readonly signal: AbortSignal,
    private readonly hooks: SttReaderHooks,
    /**
     * Frames per write to the stream. A network recogniser gets one message per write, and at
     * 50 messages a second per call the socket writes are a large share of a call's CPU
     * (docs/bench-history.md); the engine writes four frames (80 ms, DEFAULT_STT_CHUNK_MS, inside
     * Deepgram's recommended 20–250 ms) at the cost of words arriving up to three frames later.
     * `finalize()` sends what is held first. On a quiet line, QUIET_CHUNK_FRAMES.
     */
    private readonly chunkFrames = 1,
  ) {}

  get current(): SttStream | undefined {
    return this.stream;
  }

  /**
   * One frame of caller audio (denoised), in order; held until `chunkFrames` are together
   * (QUIET_CHUNK_FRAMES while the line is quiet).
   */
  write(frame: AudioFrame): void {
    const stream = this.stream;
    if (!stream) return;
    // Chunks only save messages on a live socket; a segment uploader (not streaming) just keeps
    // the frames, so it gets them as they are.
    if (this.chunkFrames <= 1 || !this.provider.capabilities.streaming) {
      stream.write(frame);
      return;
    }
    const n = frame.samples.length;
    const capacity = n * Math.max(this.chunkFrames, QUIET_CHUNK_FRAMES);
    if (this.chunk && (frame.sampleRate !== this.chunkRate || this.chunk.length !== capacity)) {
      this.flush();
      this.chunk = undefined;
    }
    const level = meanSquareInt16(frame.samples);
    const quiet = this.quiet.push(level);
    // Only a stream told what is left out (skip) keeps its times on the call's clock without it.
    const idle = this.idle.push(level) && stream.skip !== undefined;
    // The line just went idle: what is held is the end of the silence after the words, still sent.
    if (idle && !this.idling) this.flush();
    const wasIdle = this.idling;
    this.idling = idle;
    // A fresh array per chunk unless the stream copies what it is given (see flush).
    const chunk = (this.chunk ??= new Int16Array(capacity));
    this.chunkRate = frame.sampleRate;
    chunk.set(frame.samples, this.chunkFill);
    this.chunkFill += n;
    if (idle) {
      // Pre-roll: once the chunk is full, its last PREROLL_FRAMES frames are kept, the rest dropped.
      if (this.chunkFill >= n * QUIET_CHUNK_FRAMES) {
        const keep = n * PREROLL_FRAMES;
        stream.skip!(((this.chunkFill - keep) / frame.sampleRate) * 1000);
        chunk.copyWithin(0, this.chunkFill - keep, this.chunkFill);
        this.chunkFill = keep;
      }
      return;
    }
    if (wasIdle || this.chunkFill >= n * (quiet ? QUIET_CHUNK_FRAMES : this.chunkFrames)) this.flush();
  }

  /** Hands any held audio to the stream now (on an idle line, drops the held pre-roll instead). */
  flush(): void {
    const chunk = this.chunk;
    if (!chunk || this.chunkFill === 0) return;
    const stream = this.stream;
    if (this.idling) {
      stream?.skip?.((this.chunkFill / this.chunkRate) * 1000);
      this.chunkFill = 0;
      return;
    }
    // A stream that sends or copies on write (Deepgram) leaves the array to us: it is refilled for
    // the next chunk, one allocation per call instead of one per message. Any other stream owns
    // what it is given (OpenAI keeps a segment's chunks until finalize).
    const fill = this.chunkFill;
    let samples: Int16Array;
    if (stream?.copiesOnWrite === true) samples = chunk.subarray(0, fill);
    else if (fill === chunk.length) {
      samples = chunk;
      this.chunk = undefined;
    } else samples = chunk.slice(0, fill);
    this.chunkFill = 0;
    stream?.write({ samples, sampleRate: this.chunkRate });
  }

  /** Opens the call's stream; every frame written will be at `sampleRate` (8 kHz on G.711 calls). */
  open(sampleRate: SttSampleRate = 16000): void {
    this.rate = sampleRate;
    const stream = this.provider.open({ language: this.language, signal: this.signal, sampleRate });
    this.stream = stream;
    this.hooks.track(this.read(stream));
  }

  finalize(): void {
    this.flush();
    this.stream?.finalize();
  }

  async close(): Promise<void> {
    this.waiter?.('');
    this.flush();
    await this.stream?.close().catch(() => {});
  }

  /** The next final within `ms` (empty when none came). */
  waitForFinal(ms: number): Promise<string> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => done(''), ms);
      const done = (text: string): void => {
        timer.cancel();
        this.waiter = undefined;
        resolve(text);
      };
      this.waiter = done;
    });
  }

  /**
   * The words of a turn just decided. With only an interim (or nothing) so far, the final that
   * finalize() asked for is on its way: wait for it, bounded, and let it replace the interim
   * words it covers.
   */
  async settle(transcript: string, waitMs: number): Promise<string> {
    this.finalize();
    if (!this.lastInterim && transcript) return transcript;
    const interim = this.lastInterim;
    const base = interim && transcript.endsWith(interim) ? transcript.slice(0, -interim.length).trim() : transcript;
    const late = await this.waitForFinal(waitMs);
    return late ? `${base} ${late}`.trim() : transcript;
  }

  private async read(stream: SttStream): Promise<void> {
    let failed = false;
    for await (const ev of stream) {
      const now = this.hooks.now();
      if (ev.type === 'error') {
        // One reconnect; after a second failure the call goes on with VAD alone (turns without
        // words are not answered) and the silence rules end it politely.
        this.hooks.onError(ev.error.message, !this.reopened);
        failed = true;
        continue;
      }
      const text = ev.text.trim();
      if (ev.type === 'interim') {
        this.lastInterim = text;
        this.hooks.onInterim(text, now);
        continue;
      }
      this.lastInterim = '';
      this.hooks.onAnyFinal(text, now);
      if (this.waiter) {
        this.waiter(text);
        continue;
      }
      if (text) this.lastFinalAtMs = now;
      this.hooks.onFinal(text, now);
    }
    if (failed && !this.reopened && !this.signal.aborted && this.stream === stream) {
      this.reopened = true;
      this.open(this.rate);
    }
  }
}
