/**
 * The offline voices: Flite compiled to WASI (src/audio/tts-flite.ts) behind the TtsProvider
 * interface. Flite renders a whole utterance at once, so this is not streaming; to keep time to
 * first frame short on multi-sentence text, sentences are synthesized one by one and the next is
 * rendered (in Flite's worker thread) while the current one is being played.
 *
 * A rendered sentence (16 kHz already: nothing is resampled here) is handed on frame by frame as
 * views of its buffer, not copied into frames up front, and the event loop gets a turn after every
 * `BURST_FRAMES` frames, so a long sentence does not hold it while hundreds of frames are queued.
 */
import { FRAME_SAMPLES, type AudioFrame } from '../../audio/frame.ts';
import { FLITE_VOICES, FliteTts, type FliteVoice } from '../../audio/tts-flite.ts';
import { systemClock, type Clock } from '../../util/clock.ts';
import { ProviderError } from '../../util/errors.ts';
import type { TtsCapabilities, TtsProvider, TtsSynthesisOptions } from './types.ts';

/** Frames handed on before the event loop gets a turn (100 ms of audio). */
const BURST_FRAMES = 5;

/** Flite's own range for duration_stretch is wide, but outside this it stops sounding like speech. */
const MIN_SPEED = 0.5;
const MAX_SPEED = 2;

export class FliteTtsProvider implements TtsProvider {
  readonly label = 'flite';
  /**
   * Speed maps to flite's duration_stretch. Stability, similarity and emotion have no meaning for
   * a parametric voice: ignored. Language is ignored too: the voices are US-English only and the
   * catalog lists them for English alone.
   */
  readonly capabilities: TtsCapabilities = {
    streaming: false,
    sampleRate: 16_000,
    options: { speed: true, stability: false, similarity: false, emotion: false, language: false },
  };
  private engine: Promise<FliteTts> | undefined;

  /** `load` runs once, on first use: compiling the 21 MB module costs about a second. */
  constructor(
    private readonly load: () => Promise<FliteTts> = () => FliteTts.load(),
    private readonly clock: Clock = systemClock,
  ) {}

  async *synthesize(text: string, opts: TtsSynthesisOptions): AsyncGenerator<AudioFrame> {
    if (opts.signal.aborted) return;
    if (!(FLITE_VOICES as readonly string[]).includes(opts.voice)) {
      throw new ProviderError(`flite has no voice "${opts.voice}" (known: ${FLITE_VOICES.join(', ')})`, this.label, false);
    }
    const voice = opts.voice as FliteVoice;
    const speed = opts.speed === undefined ? 1 : Math.min(MAX_SPEED, Math.max(MIN_SPEED, opts.speed));
    const started = this.clock.monotonic();
    const sentences = splitSentences(text);
    if (sentences.length === 0) return;
    let engine: FliteTts;
    try {
      engine = await (this.engine ??= this.load());
    } catch (err) {
      this.engine = undefined; // let a later call try again (e.g. a transient file system error)
      throw new ProviderError(`flite could not be loaded: ${(err as Error).message}`, this.label, false);
    }
    const render = (s: string) => engine.synthesize(s, { voice, speed, signal: opts.signal });
    let next: Promise<{ samples: Int16Array }> | undefined = render(sentences[0]!);
    let first = true;
    try {
      for (let i = 0; i < sentences.length; i++) {
        let audio: { samples: Int16Array };
        try {
          audio = await next!;
        } catch (err) {
          if (opts.signal.aborted) return;
          // The WASI program itself failed: trying again would fail the same way.
          throw new ProviderError(`flite synthesis failed: ${(err as Error).message}`, this.label, false);
        }
        next = i + 1 < sentences.length ? render(sentences[i + 1]!) : undefined;
        const pcm = audio.samples;
        for (let at = 0, n = 0; at < pcm.length; at += FRAME_SAMPLES, n++) {
          if (n > 0 && n % BURST_FRAMES === 0) await new Promise<void>((resolve) => setImmediate(resolve));
          if (opts.signal.aborted) return;
          if (first) opts.onFirstFrame?.(this.clock.monotonic() - started);
          first = false;
          // Nobody writes into the rendered buffer: whole frames are views of it; the last, short
          // one is zero-padded.
          let samples = pcm.subarray(at, at + FRAME_SAMPLES);
          if (samples.length < FRAME_SAMPLES) {
            const padded = new Int16Array(FRAME_SAMPLES);
            padded.set(samples);
            samples = padded;
          }
          yield { samples, sampleRate: 16_000 };
        }
      }
    } finally {
      // A prefetch nobody will await must not become an unhandled rejection.
      next?.catch(() => {});
    }
  }
}

/** Sentence-sized pieces; very short fragments ride along with the previous one. */
export function splitSentences(text: string): string[] {
  const parts = text
    .replace(/\s+/g, ' ')
    .trim()
    .split(/(?<=[.!?;:])\s+/)
    .filter((s) => s !== '');
  const out: string[] = [];
  for (const p of parts) {
    const prev = out[out.length - 1];
    if (prev !== undefined && (prev.length < 12 || p.length < 4)) out[out.length - 1] = `${prev} ${p}`;
    else out.push(p);
  }
  return out;
}
