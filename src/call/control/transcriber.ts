/**
 * Speech-to-text where call control itself has to listen: the answered audio during voicemail
 * detection (voicemail.ts) and the supervisor's spoken answer in a warm transfer (supervisor.ts).
 *
 * The provider is the assistant's own: its `transcriber_provider_id`, else the language's default
 * transcriber, exactly as a pipeline call would pick it (multimodal and dualplex assistants have
 * no transcriber of their own, so they get the default for their language).
 *
 * A TranscriptTap is one STT stream: frames go in with `write`, text comes back through `onText`
 * in arrival order. `speechEnded()` (the caller's VAD saw the end of an utterance) asks for the
 * final at once: segment-upload providers (OpenAI) only transcribe on finalize, and a streaming
 * one (Deepgram) answers sooner than its own endpointing would. A provider error is reported once
 * through `onError` and the tap goes quiet: callers then decide without words.
 */
import type { AudioFrame } from '../../audio/frame.ts';
import { NarrowbandReader } from '../../audio/narrowband-frame.ts';
import type { SttProvider, SttStream } from '../../providers/stt/types.ts';
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { EngineContext } from '../engine.ts';

export interface AssistantStt {
  provider: SttProvider;
  /** BCP 47 tag (`en-US`). */
  language: string;
}

/** The STT a pipeline call of this assistant would use; undefined when none serves its language. */
export function assistantStt(assistant: Pick<AssistantRecord, 'config'>, ctx: Pick<EngineContext, 'catalog' | 'speech'>): AssistantStt | undefined {
  const c = assistant.config;
  const entry = c.transcriber_provider_id != null ? ctx.catalog.transcriberProvider(c.transcriber_provider_id) : ctx.catalog.defaultTranscriberFor(c.language_id);
  if (!entry) return undefined;
  return { provider: ctx.speech.transcriber(entry), language: ctx.catalog.language(c.language_id)?.code ?? 'en-US' };
}

export interface TranscriptTapHooks {
  onText(text: string, isFinal: boolean): void;
  onError(message: string): void;
}

export class TranscriptTap {
  readonly label: string;
  /** Finals so far, joined. */
  finals = '';
  interim = '';
  error: string | undefined;
  private readonly ac = new AbortController();
  private readonly stream: SttStream | undefined;
  private readonly reading: Promise<void>;

  /** Telephone-band lines: frames go to STT at 8 kHz, as on the cascade's own stream. */
  private readonly narrow: NarrowbandReader | undefined;

  /** `narrowband`: the leg is G.711 (`isNarrowbandCodec`): its audio goes to STT at 8 kHz. */
  constructor(stt: AssistantStt, hooks: TranscriptTapHooks, narrowband = false) {
    this.label = stt.provider.label;
    this.narrow = narrowband ? new NarrowbandReader() : undefined;
    let stream: SttStream | undefined;
    try {
      stream = stt.provider.open({ language: stt.language, signal: this.ac.signal, sampleRate: narrowband ? 8000 : 16000 });
    } catch (err) {
      this.fail((err as Error).message, hooks);
    }
    this.stream = stream;
    this.reading = stream ? this.read(stream, hooks) : Promise.resolve();
  }

  /** The transcript heard so far: finals, then the latest interim. */
  get text(): string {
    return `${this.finals} ${this.interim}`.trim();
  }

  write(frame: AudioFrame): void {
    if (!this.ac.signal.aborted && this.error === undefined) this.stream?.write(this.narrow ? this.narrow.frame(frame) : frame);
  }

  speechEnded(): void {
    if (!this.ac.signal.aborted && this.error === undefined) this.stream?.finalize();
  }

  /** Tears the stream down at once (nothing more is wanted from it). Idempotent. */
  async close(): Promise<void> {
    this.ac.abort();
    await this.reading;
  }

  /** What the call record keeps of it. */
  toRecord(): Record<string, unknown> {
    return { provider: this.label, transcript: this.text, ...(this.error !== undefined ? { error: this.error } : {}) };
  }

  private fail(message: string, hooks: TranscriptTapHooks): void {
    if (this.error !== undefined) return;
    this.error = message;
    hooks.onError(message);
  }

  private async read(stream: SttStream, hooks: TranscriptTapHooks): Promise<void> {
    try {
      for await (const ev of stream) {
        if (this.ac.signal.aborted) break;
        if (ev.type === 'error') {
          this.fail(ev.error.message, hooks);
          break;
        }
        const text = ev.text.trim();
        if (ev.type === 'final') {
          if (text) this.finals = `${this.finals} ${text}`.trim();
          this.interim = '';
        } else {
          this.interim = text;
        }
        hooks.onText(text, ev.type === 'final');
      }
    } catch (err) {
      if (!this.ac.signal.aborted) this.fail((err as Error).message, hooks);
    }
  }
}
