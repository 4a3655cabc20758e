/**
 * OpenAI speech (POST /v1/audio/speech) with `response_format: pcm`: raw 24 kHz mono 16-bit
 * little-endian samples streamed in the HTTP body as they are generated. The body is read as it
 * arrives, resampled to 16 kHz and cut into 20 ms frames, so the first frame leaves as soon as
 * the first ~21 ms of audio have come in instead of after the whole utterance.
 *
 * The service sends audio faster than real time, and one network read can hold seconds of it.
 * The 24 → 16 kHz resampler costs about 11 µs of CPU per 20 ms frame on the event loop (2.5 in
 * the telephone band, `narrowband`; bench/resample.ts), and a read can hold seconds, so a read
 * is resampled in 20 ms slices, each slice's frames handed on before the next slice is computed
 * (the first frame goes out after one slice, not after the whole read), and after every
 * `BURST_MS` of audio the loop gets a turn (RTP, sockets, other calls) before the rest. The
 * speaker queues frames ahead anyway, so nothing waits for audio that is still being resampled.
 * The resampler's filter delay is trimmed at the start, so a reply's audio starts in its first
 * sample instead of after 22 samples (1.4 ms; 4 in the telephone band) of filter warm-up.
 */
import OpenAI from 'openai';
import { FRAME_SAMPLES, FrameChunker, pcmFromBytes, SAMPLE_RATE, type AudioFrame } from '../../audio/frame.ts';
import { Resampler } from '../../audio/resample.ts';
import { systemClock, type Clock } from '../../util/clock.ts';
import { ProviderError } from '../../util/errors.ts';
import { Deadline, toProviderError } from '../resilience.ts';
import type { TtsCapabilities, TtsProvider, TtsSynthesisOptions } from './types.ts';
import { httpFetch } from '../http-fetch.ts';

/** The only rate the API produces for `pcm`. */
export const OPENAI_PCM_RATE = 24_000;

/** Input samples per resampler call: 20 ms, one output frame. */
const SLICE_SAMPLES = (OPENAI_PCM_RATE * 20) / 1000;
/** Audio resampled in one go before the event loop gets a turn (about 0.25 ms of CPU). */
const BURST_MS = 100;
const BURST_SAMPLES = (OPENAI_PCM_RATE * BURST_MS) / 1000;

/** One turn of the event loop (I/O included), not just the microtask queue. */
const loopTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface OpenAiTtsOptions {
  apiKey?: string;
  baseUrl?: string;
  model?: string;
  /** From the request to the first body byte (covers connect, headers and the model's start). */
  firstByteTimeoutMs?: number;
  /** Longest gap between two body chunks once audio flows. */
  idleTimeoutMs?: number;
  /** Extra attempts after a transient failure, only while no frame has been yielded. */
  retries?: number;
  clock?: Clock;
  client?: OpenAI;
}

/** The API's accepted range for `speed`; assistants may be configured outside it. */
const MIN_SPEED = 0.25;
const MAX_SPEED = 4;

export class OpenAiTts implements TtsProvider {
  readonly label = 'openai';
  /**
   * Stability and similarity are ElevenLabs-style knobs with no OpenAI equivalent: ignored.
   * Emotion becomes a style `instructions` line (gpt-4o-mini-tts; tts-1 ignores instructions).
   * Language is not a parameter: the voices speak whatever language the text is in.
   */
  readonly capabilities: TtsCapabilities = {
    streaming: true,
    sampleRate: OPENAI_PCM_RATE,
    options: { speed: true, stability: false, similarity: false, emotion: true, language: false },
  };
  private readonly client: OpenAI;
  private readonly clock: Clock;

  constructor(readonly options: OpenAiTtsOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.client = options.client ?? new OpenAI({ apiKey: options.apiKey ?? 'unset', baseURL: options.baseUrl, maxRetries: 0, fetch: httpFetch });
  }

  async *synthesize(text: string, opts: TtsSynthesisOptions): AsyncGenerator<AudioFrame> {
    const input = text.trim();
    if (input === '' || opts.signal.aborted) return;
    // No key and the official endpoint (and no client of the caller's): it could only refuse us.
    if (!this.options.client && !this.options.apiKey && !this.options.baseUrl) {
      throw new ProviderError('OpenAI: no API key configured (OPENAI_API_KEY)', this.label, false);
    }
    const started = this.clock.monotonic();
    const retries = this.options.retries ?? 1;
    let yielded = false;
    for (let attempt = 0; ; attempt++) {
      try {
        for await (const frame of this.attempt(input, opts)) {
          // Barge-in between two frames of an already received chunk: stop right here.
          if (opts.signal.aborted) return;
          if (!yielded) opts.onFirstFrame?.(this.clock.monotonic() - started);
          yielded = true;
          yield frame;
        }
        return;
      } catch (err) {
        if (opts.signal.aborted) return;
        const pe = toProviderError(err, this.label, 'speech');
        // Once audio was played a retry would repeat it from the start; the caller decides.
        if (yielded) throw new ProviderError(`${pe.message} (after audio had started)`, this.label, false);
        if (!pe.retryable || attempt >= retries) throw pe;
      }
    }
  }

  private async *attempt(input: string, opts: TtsSynthesisOptions): AsyncGenerator<AudioFrame> {
    const deadline = new Deadline(opts.signal, this.label);
    deadline.arm('speech first byte', this.options.firstByteTimeoutMs ?? 5000);
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      const res = await this.client.audio.speech.create(this.body(input, opts), { signal: deadline.signal });
      if (!res.body) throw new ProviderError('OpenAI speech response has no body', this.label, true);
      reader = res.body.getReader();
      // On a G.711 call only 0-4 kHz reaches the caller: the telephone-band filter is about a
      // quarter of the work.
      const resampler = new Resampler(OPENAI_PCM_RATE, SAMPLE_RATE, { band: opts.narrowband ? 'telephone' : 'full' });
      const chunker = new FrameChunker();
      // The filter's warm-up (output before the first input sample's own): not audio, dropped.
      let warmUp = Math.round(resampler.delay);
      /** 16 kHz samples → frames; `pcm` may be the resampler's shared buffer (the chunker copies). */
      const frames = (pcm: Int16Array): AudioFrame[] => {
        if (warmUp > 0) {
          const k = Math.min(warmUp, pcm.length);
          warmUp -= k;
          pcm = pcm.subarray(k);
        }
        return chunker.push(pcm);
      };
      // The first slice is just long enough for the first whole frame (warm-up included).
      let sliceLen = Math.ceil(((FRAME_SAMPLES + warmUp) * OPENAI_PCM_RATE) / SAMPLE_RATE);
      let sinceTurn = 0;
      let odd: number | undefined;
      for (let first = true; ; first = false) {
        // The timer runs only while we wait on the network, never while a slow consumer (paced
        // at real time) holds us at a yield: a long utterance must not look like a stall.
        if (!first) deadline.arm('speech body', this.options.idleTimeoutMs ?? 5000);
        const { done, value } = await reader.read();
        deadline.cancel();
        if (done) break;
        // Chunks split samples anywhere; carry a lone trailing byte into the next chunk.
        let bytes = value;
        if (odd !== undefined) {
          bytes = new Uint8Array(value.length + 1);
          bytes[0] = odd;
          bytes.set(value, 1);
          odd = undefined;
        }
        if (bytes.length % 2 === 1) odd = bytes[bytes.length - 1];
        const pcm = pcmFromBytes(bytes);
        for (let at = 0; at < pcm.length; ) {
          if (sinceTurn >= BURST_SAMPLES) {
            // A burst: let the event loop run before resampling more of it.
            await loopTurn();
            if (opts.signal.aborted) return;
            sinceTurn = 0;
          }
          const slice = pcm.subarray(at, at + sliceLen);
          at += slice.length;
          sinceTurn += slice.length;
          if (slice.length === sliceLen) sliceLen = SLICE_SAMPLES;
          else sliceLen -= slice.length;
          yield* frames(resampler.processShared(slice));
        }
      }
      yield* frames(resampler.flush());
      const last = chunker.flush();
      if (last) yield last;
    } catch (err) {
      // Our own timer aborted the request: report the timeout, not the abort it caused.
      throw deadline.expired ?? err;
    } finally {
      deadline.cancel();
      // Leaving early (barge-in, consumer break, error) must close the HTTP connection so the
      // vendor stops generating audio nobody will hear.
      await reader?.cancel().catch(() => {});
    }
  }

  private body(input: string, opts: TtsSynthesisOptions): OpenAI.Audio.SpeechCreateParams {
    const body: OpenAI.Audio.SpeechCreateParams = {
      model: this.options.model ?? 'gpt-4o-mini-tts',
      voice: opts.voice,
      input,
      response_format: 'pcm',
    };
    if (opts.speed !== undefined && opts.speed !== 1) body.speed = Math.min(MAX_SPEED, Math.max(MIN_SPEED, opts.speed));
    if (opts.emotion === true) body.instructions = 'Speak warmly and expressively, with natural emotion that fits the words.';
    else if (opts.emotion === false) body.instructions = 'Speak in a calm, even, neutral tone.';
    return body;
  }
}
