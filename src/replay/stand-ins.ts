/**
 * In-process stand-ins implementing the provider interfaces, for `switchboard replay
 * --stand-ins` and the fixture tests. They are honest fakes, not protocol stand-ins (those live
 * in test/support/ and speak HTTP/WebSocket on real time): each simulates its latency on the
 * call clock, so on a virtual clock a "slow LLM" is slow by exactly the configured ms.
 *
 * - StandInLlm: answers from a script (or a fixed text), streamed word by word.
 * - EnergySttProvider: an energy detector with fixed or scripted words: a segment starts on the
 *   first frame above -45 dBFS and ends after 400 ms below; interim results reveal one word per
 *   300 ms of voiced audio; the final carries all the words (at the segment end or finalize()).
 * - ToneTtsProvider: "speech" that is a voiced-like harmonic tone, 65 ms per character, instant.
 *   Real speech comes from Flite (FliteTtsProvider) when the audio itself matters.
 */
import { FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, rmsDbfs, type AudioFrame } from '../audio/frame.ts';
import type { LlmMessage, LlmProvider, LlmRequest, LlmResult, LlmToolCall } from '../providers/llm/types.ts';
import { EventQueue } from '../providers/stt/event-queue.ts';
import type { SttEvent, SttOpenOptions, SttProvider, SttStream } from '../providers/stt/types.ts';
import type { TtsProvider, TtsSynthesisOptions } from '../providers/tts/types.ts';
import type { Clock } from '../util/clock.ts';
import { ProviderError } from '../util/errors.ts';

/** Resolves after `ms` on the clock; rejects at once when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      timer.cancel();
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface StandInAnswer {
  content?: string;
  toolCalls?: { name: string; arguments?: Record<string, unknown> }[];
  /** Time to the first token on the clock. */
  delayMs?: number;
  /** Throw instead of answering (a provider failure). */
  error?: string;
}

export class StandInLlm implements LlmProvider {
  readonly label = 'stand-in-llm';
  readonly capabilities = { streaming: true, tools: true };
  readonly requests: LlmMessage[][] = [];
  readonly queue: StandInAnswer[] = [];
  private seq = 0;

  constructor(
    private readonly clock: Clock,
    public fallback: StandInAnswer | ((messages: LlmMessage[]) => StandInAnswer) = {
      content: 'Thank you for calling. This is the stand-in assistant, how can I help?',
    },
  ) {}

  async complete(req: LlmRequest): Promise<LlmResult> {
    this.requests.push(req.messages);
    const answer = this.queue.shift() ?? (typeof this.fallback === 'function' ? this.fallback(req.messages) : this.fallback);
    await sleep(this.clock, answer.delayMs ?? 0, req.signal);
    if (answer.error) throw new ProviderError(answer.error, this.label, true);
    const content = answer.content ?? '';
    const words = content.split(/(?<=\s)/);
    for (const w of words) {
      req.signal?.throwIfAborted();
      if (w) req.onToken?.(w);
    }
    const toolCalls: LlmToolCall[] = (answer.toolCalls ?? []).map((t) => ({
      id: `call_${++this.seq}`,
      name: t.name,
      arguments: JSON.stringify(t.arguments ?? {}),
    }));
    return { content, toolCalls, finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop' };
  }
}

const VOICED_DBFS = -45;
const SEGMENT_END_MS = 400;
const MS_PER_WORD = 300;

export class EnergySttProvider implements SttProvider {
  readonly label = 'stand-in-stt';
  readonly capabilities = { interim: true, streaming: true };

  /** `textAt(audioMs)`: what the caller says in a segment starting at that audio time. */
  constructor(private readonly textAt: (audioMs: number) => string) {}

  open(opts: SttOpenOptions): SttStream {
    return new EnergySttStream(this.textAt, opts.signal);
  }
}

class EnergySttStream implements SttStream {
  private readonly events = new EventQueue<SttEvent>();
  private audioMs = 0;
  private inSegment = false;
  private segStartMs = 0;
  private voicedMs = 0;
  private silentMs = 0;
  private words: string[] = [];
  private revealed = 0;

  constructor(
    private readonly textAt: (audioMs: number) => string,
    signal: AbortSignal,
  ) {
    signal.addEventListener('abort', () => this.events.end(), { once: true });
  }

  write(frame: AudioFrame): void {
    const voiced = rmsDbfs(frame.samples) > VOICED_DBFS;
    const frameMs = (frame.samples.length / frame.sampleRate) * 1000;
    if (voiced) {
      if (!this.inSegment) {
        this.inSegment = true;
        this.segStartMs = this.audioMs;
        this.voicedMs = 0;
        this.revealed = 0;
        this.words = this.textAt(this.audioMs).split(/\s+/).filter(Boolean);
      }
      this.voicedMs += frameMs;
      this.silentMs = 0;
      const n = Math.min(this.words.length, Math.floor(this.voicedMs / MS_PER_WORD));
      if (n > this.revealed) {
        this.revealed = n;
        this.events.push({ type: 'interim', text: this.words.slice(0, n).join(' '), startMs: this.segStartMs, endMs: this.audioMs });
      }
    } else if (this.inSegment) {
      this.silentMs += frameMs;
      if (this.silentMs >= SEGMENT_END_MS) this.emitFinal();
    }
    this.audioMs += frameMs;
  }

  /** Left-out audio is a quiet line: it ends a segment as written silence would. */
  skip(ms: number): void {
    if (this.inSegment) {
      this.silentMs += ms;
      if (this.silentMs >= SEGMENT_END_MS) this.emitFinal();
    }
    this.audioMs += ms;
  }

  finalize(): void {
    if (this.inSegment) this.emitFinal();
  }

  async close(): Promise<void> {
    this.finalize();
    this.events.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<SttEvent> {
    return this.events[Symbol.asyncIterator]();
  }

  private emitFinal(): void {
    this.inSegment = false;
    if (this.words.length > 0) {
      this.events.push({ type: 'final', text: this.words.join(' '), startMs: this.segStartMs, endMs: this.audioMs - this.silentMs, speechFinal: true });
    }
    this.words = [];
  }
}

export interface ToneTtsOptions {
  /** Time to the first frame, on the clock. */
  delayMs?: number;
  /** Fail this many syntheses (before any frame) with a retryable provider error. */
  failures?: number;
  msPerChar?: number;
}

export class ToneTtsProvider implements TtsProvider {
  readonly label = 'stand-in-tts';
  readonly capabilities = {
    streaming: true,
    sampleRate: SAMPLE_RATE,
    options: { speed: false, stability: false, similarity: false, emotion: false, language: false },
  };
  readonly spoken: string[] = [];

  constructor(
    private readonly clock: Clock,
    public options: ToneTtsOptions = {},
  ) {}

  /** Duration of the audio this stand-in makes for `text`, in whole frames. */
  durationMs(text: string): number {
    const ms = text.trim().length * (this.options.msPerChar ?? 65);
    return Math.max(FRAME_MS, Math.ceil(ms / FRAME_MS) * FRAME_MS);
  }

  async *synthesize(text: string, opts: TtsSynthesisOptions): AsyncGenerator<AudioFrame> {
    try {
      await sleep(this.clock, this.options.delayMs ?? 0, opts.signal);
    } catch {
      return;
    }
    if ((this.options.failures ?? 0) > 0) {
      this.options.failures = (this.options.failures ?? 0) - 1;
      throw new ProviderError('stand-in TTS failure', this.label, true);
    }
    this.spoken.push(text);
    const frames = this.durationMs(text) / FRAME_MS;
    opts.onFirstFrame?.(this.options.delayMs ?? 0);
    for (let f = 0; f < frames; f++) {
      if (opts.signal.aborted) return;
      const samples = new Int16Array(FRAME_SAMPLES);
      for (let i = 0; i < FRAME_SAMPLES; i++) {
        const t = (f * FRAME_SAMPLES + i) / SAMPLE_RATE;
        // 180 Hz with two harmonics at about -17 dBFS RMS: level and spectrum of a voice.
        samples[i] = Math.round(4000 * (Math.sin(2 * Math.PI * 180 * t) + 0.6 * Math.sin(2 * Math.PI * 360 * t) + 0.3 * Math.sin(2 * Math.PI * 540 * t)));
      }
      yield { samples, sampleRate: SAMPLE_RATE };
    }
  }
}
