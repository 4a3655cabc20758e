/**
 * Our own voice speaking one utterance: dualplex replies (the model's text streamed in as it is
 * generated), fixed lines in dualplex, and the apology when the model is gone. Text is cut into
 * sentences as it arrives (SentenceSplitter), each sentence goes to TTS as soon as it is
 * complete, and frames go to the player as soon as they exist, so the first sentence plays while
 * the model is still writing the second.
 *
 * Each utterance has its own AbortController, a child of the call's: a barge-in aborts the
 * utterance (synthesis stops), hanging up aborts everything.
 */
import { EventQueue } from '../../providers/stt/event-queue.ts';
import type { TtsProvider, TtsSynthesisOptions } from '../../providers/tts/types.ts';
import { heardText, type HeardText } from '../interruption.ts';
import { SentenceSplitter } from '../sentences.ts';
import type { Player } from './player.ts';

export interface TtsVoice {
  provider: TtsProvider;
  /** The catalog's `provider_voice`. */
  voice: string;
  options?: Omit<TtsSynthesisOptions, 'voice' | 'signal' | 'onFirstFrame'>;
}

export interface SpokenSentence {
  text: string;
  frames: number;
}

export class TtsUtterance {
  readonly ctl = new AbortController();
  readonly sentences: SpokenSentence[] = [];
  /** Everything the text source produced (spoken or not). */
  text = '';
  error: string | undefined;
  /** The error behind `error` (its status names the failure). */
  cause: unknown;
  /** Resolves once all audio is handed to the player (or synthesis stopped). */
  readonly done: Promise<void>;
  private readonly splitter = new SentenceSplitter();
  private readonly queue = new EventQueue<string>();

  /** `narrowband`: the call's codec is narrowband now (TtsSynthesisOptions.narrowband), asked per sentence. */
  /** The label of the TTS provider speaking. */
  get provider(): string {
    return this.voice.provider.label;
  }

  constructor(
    readonly key: string,
    private readonly voice: TtsVoice,
    private readonly player: Player,
    parent: AbortSignal,
    private readonly narrowband?: () => boolean,
  ) {
    const onParent = (): void => this.ctl.abort(parent.reason);
    if (parent.aborted) this.ctl.abort(parent.reason);
    else parent.addEventListener('abort', onParent, { once: true });
    const detach = (): void => parent.removeEventListener('abort', onParent);
    this.ctl.signal.addEventListener('abort', detach, { once: true });
    // Once all audio is with the player the call's signal needs this utterance no more.
    this.done = this.loop().finally(detach);
  }

  get aborted(): boolean {
    return this.ctl.signal.aborted;
  }

  /** A streamed piece of text (a model delta, or a whole fixed line). */
  push(delta: string): void {
    if (this.aborted) return;
    this.text += delta;
    for (const s of this.splitter.push(delta)) this.queue.push(s);
  }

  /** No more text: the rest is the last sentence. */
  end(): void {
    if (!this.aborted) for (const s of this.splitter.flush()) this.queue.push(s);
    this.queue.end();
  }

  /** A whole fixed line. */
  say(text: string): void {
    this.push(text);
    this.end();
  }

  abort(reason: string): void {
    this.splitter.reset();
    this.queue.end();
    this.ctl.abort(new Error(reason));
  }

  /** What the caller heard after `playedMs` of this utterance's audio. */
  heard(playedMs: number): HeardText {
    return heardText(
      this.sentences.map((s) => ({ text: s.text, durationMs: s.frames * 20 })),
      playedMs,
    );
  }

  private async loop(): Promise<void> {
    for await (const text of this.queue) {
      if (this.aborted) break;
      const sentence: SpokenSentence = { text, frames: 0 };
      this.sentences.push(sentence);
      try {
        const narrowband = this.narrowband?.() ?? false;
        for await (const frame of this.voice.provider.synthesize(text, { ...this.voice.options, voice: this.voice.voice, narrowband, signal: this.ctl.signal })) {
          if (this.aborted) break;
          sentence.frames++;
          this.player.push(this.key, frame.samples);
        }
      } catch (err) {
        if (this.aborted) break;
        // One failed sentence ends the utterance: the owner decides (fallback voice, hang-up).
        this.error = (err as Error).message;
        this.cause = err;
        break;
      }
    }
    if (!this.aborted) this.player.finish(this.key);
  }
}
