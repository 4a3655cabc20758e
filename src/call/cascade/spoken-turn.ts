/**
 * One assistant utterance, from words to audio: LLM tokens (or a fixed text) are cut into
 * sentences as they stream, each sentence goes to TTS as soon as it is complete, and frames go
 * to the speaker as soon as they exist. Sentences are synthesized back to back while earlier
 * ones play (the speaker paces playback, so synthesis running ahead *is* the pipelining).
 *
 * Failures: each provider gets one retry (a first-token / first-frame deadline on the call clock
 * counts as a failure). After that the turn reports `failed` and the owner apologises or ends
 * the call — a turn never just goes quiet.
 */
import { EventQueue } from '../../providers/stt/event-queue.ts';
import type { TtsProvider, TtsSynthesisOptions } from '../../providers/tts/types.ts';
import type { TurnResult } from '../../agent/types.ts';
import type { Clock } from '../../util/clock.ts';
import { heardText, type HeardText } from '../interruption.ts';
import { SentenceSplitter } from '../sentences.ts';
import type { AssistantTurnKind } from '../transcript.ts';
import type { Speaker } from './speaker.ts';

export type TurnSource =
  | { kind: 'fixed'; text: string }
  | { kind: 'agent'; run: (signal: AbortSignal, onToken: (delta: string) => void) => Promise<TurnResult> };

export interface TurnVoice {
  provider: TtsProvider;
  voice: string;
  options?: Omit<TtsSynthesisOptions, 'voice' | 'signal' | 'onFirstFrame'>;
}

export interface SpokenTurnDeps {
  clock: Clock;
  now: () => number;
  speaker: Speaker;
  voice: TurnVoice;
  llmFirstTokenMs: number;
  ttsFirstFrameMs: number;
  /** The call's codec is narrowband now (TtsSynthesisOptions.narrowband), asked per sentence. */
  narrowband?: () => boolean;
  onProviderError(provider: 'llm' | 'tts', message: string, retrying: boolean): void;
}

export interface Segment {
  text: string;
  frames: number;
  filler: boolean;
}

export class SpokenTurn {
  readonly ctl: AbortController;
  readonly segments: Segment[] = [];
  readonly startedAtMs: number;
  reply = '';
  ended = false;
  functionCalls: TurnResult['functionCalls'] = [];
  failed: 'llm' | 'tts' | undefined;
  firstTokenAtMs: number | undefined;
  ttsFirstAudioMs: number | undefined;
  /** When that first reply audio came from TTS (ms from answer): the turn trace's `tts.first_byte`. */
  ttsFirstAudioAtMs: number | undefined;
  /** When the first non-filler frame plays (set by the owner from the speaker's onFrame). */
  firstFrameAtMs: number | undefined;
  fillers: string[] = [];
  private readonly sentences = new EventQueue<{ text: string; filler: boolean }>();
  private synthBusy = false;
  /** Drops this turn's listener on the call's signal (a finished turn must not keep one). */
  private readonly detach: () => void;

  constructor(
    readonly id: number,
    readonly kind: AssistantTurnKind,
    private readonly source: TurnSource,
    private readonly deps: SpokenTurnDeps,
    parent: AbortSignal,
  ) {
    this.ctl = new AbortController();
    // A child of the call: hanging up stops the turn; aborting the turn leaves the call alone.
    const onParent = (): void => this.ctl.abort(parent.reason);
    if (parent.aborted) this.ctl.abort(parent.reason);
    else parent.addEventListener('abort', onParent, { once: true });
    this.detach = (): void => parent.removeEventListener('abort', onParent);
    this.ctl.signal.addEventListener('abort', this.detach, { once: true });
    this.startedAtMs = deps.now();
  }

  get aborted(): boolean {
    return this.ctl.signal.aborted;
  }

  /** Produce and play the whole turn; resolves when its last frame is queued on the speaker. */
  async run(): Promise<void> {
    try {
      const synth = this.synthLoop();
      try {
        await this.produce();
      } finally {
        this.sentences.end();
      }
      await synth;
      // A failed turn still lets what it did say play out; the owner decides what follows.
      if (!this.aborted || this.failed) this.deps.speaker.finish(this.id);
    } finally {
      // Produced: the speaker (the call's) plays the rest, so the call's signal needs us no more.
      // Without this every turn that was not cut left a listener behind (MaxListenersExceeded).
      this.detach();
    }
  }

  /** A filler goes first, but only while nothing of the reply has reached TTS yet. */
  offerFiller(text: string): boolean {
    if (this.aborted || this.synthBusy || this.segments.length > 0) return false;
    this.fillers.push(text);
    this.sentences.push({ text, filler: true });
    return true;
  }

  /** Which segment index is a filler (speaker reports frames by segment). */
  isFiller(seg: number): boolean {
    return this.segments[seg]?.filler ?? false;
  }

  /** What the caller heard of the reply proper (fillers excluded), given `playedMs` of audio. */
  heard(playedMs: number): HeardText {
    return heardText(
      this.segments.map((s) => ({ text: s.filler ? '' : s.text, durationMs: s.frames * 20 })),
      playedMs,
    );
  }

  abort(reason: string): void {
    this.ctl.abort(new Error(reason));
  }

  private async produce(): Promise<void> {
    const splitter = new SentenceSplitter();
    const emit = (chunks: string[]): void => {
      for (const text of chunks) if (!this.aborted) this.sentences.push({ text, filler: false });
    };
    if (this.source.kind === 'fixed') {
      this.reply = this.source.text;
      emit(splitter.push(this.source.text));
      emit(splitter.flush());
      return;
    }
    for (let attempt = 0; attempt < 2 && !this.aborted; attempt++) {
      const attemptCtl = new AbortController();
      const onTurn = (): void => attemptCtl.abort(this.ctl.signal.reason);
      this.ctl.signal.addEventListener('abort', onTurn, { once: true });
      let streamed = false;
      const timer = this.deps.clock.setTimeout(() => attemptCtl.abort(new Error('first token timeout')), this.deps.llmFirstTokenMs);
      try {
        const result = await this.source.run(attemptCtl.signal, (delta) => {
          if (!streamed) {
            streamed = true;
            timer.cancel();
            this.firstTokenAtMs ??= this.deps.now();
          }
          emit(splitter.push(delta));
        });
        timer.cancel();
        // A provider that does not stream still answers: speak the whole reply.
        if (!streamed && result.reply) emit(splitter.push(result.reply));
        emit(splitter.flush());
        this.reply = result.reply;
        this.ended = result.ended;
        this.functionCalls = result.functionCalls;
        return;
      } catch (err) {
        timer.cancel();
        if (this.aborted) return;
        const message = attemptCtl.signal.aborted ? 'no first token in time' : (err as Error).message;
        if (streamed) {
          // Half a reply was spoken: finish its sentence rather than repeat it from the start.
          emit(splitter.flush());
          this.deps.onProviderError('llm', message, false);
          return;
        }
        this.deps.onProviderError('llm', message, attempt === 0);
        if (attempt === 1) this.failed = 'llm';
      } finally {
        this.ctl.signal.removeEventListener('abort', onTurn);
      }
    }
  }

  private async synthLoop(): Promise<void> {
    for await (const item of this.sentences) {
      if (this.aborted) break;
      this.synthBusy = true;
      const seg: Segment = { text: item.text, frames: 0, filler: item.filler };
      this.segments.push(seg);
      const ok = await this.synthesize(seg, this.segments.length - 1);
      this.synthBusy = false;
      if (!ok) {
        this.failed = 'tts';
        this.ctl.abort(new Error('tts failed'));
        break;
      }
    }
  }

  /** One sentence, with one retry. False when TTS failed twice (or timed out twice). */
  private async synthesize(seg: Segment, index: number): Promise<boolean> {
    const { voice, clock, speaker } = this.deps;
    for (let attempt = 0; attempt < 2; attempt++) {
      const ctl = new AbortController();
      const onTurn = (): void => ctl.abort(this.ctl.signal.reason);
      this.ctl.signal.addEventListener('abort', onTurn, { once: true });
      const timer = clock.setTimeout(() => ctl.abort(new Error('first frame timeout')), this.deps.ttsFirstFrameMs);
      const askedAt = this.deps.now();
      let error: string | undefined;
      const narrowband = this.deps.narrowband?.() ?? false;
      try {
        for await (const frame of voice.provider.synthesize(seg.text, { ...voice.options, voice: voice.voice, narrowband, signal: ctl.signal })) {
          if (this.aborted) return true;
          if (seg.frames === 0) {
            timer.cancel();
            if (!seg.filler && this.ttsFirstAudioMs === undefined) {
              this.ttsFirstAudioAtMs = this.deps.now();
              this.ttsFirstAudioMs = this.ttsFirstAudioAtMs - askedAt;
            }
            speaker.open(this.id);
          }
          seg.frames++;
          speaker.push(this.id, index, frame.samples);
        }
      } catch (err) {
        error = (err as Error).message;
      } finally {
        timer.cancel();
        this.ctl.signal.removeEventListener('abort', onTurn);
      }
      if (this.aborted || seg.frames > 0) return true;
      if (ctl.signal.aborted) error = 'no audio in time';
      if (error === undefined) return true; // nothing to say (e.g. only punctuation)
      this.deps.onProviderError('tts', error, attempt === 0);
    }
    return false;
  }
}
