/**
 * OpenAI transcription (POST /v1/audio/transcriptions) as a segment-based STT: audio is buffered
 * between finalize() calls, and each utterance is uploaded as a 16 kHz mono WAV. There is no live
 * audio stream, so turn-taking relies on our own VAD endpointing to call finalize(). With
 * `stream: true` the request asks for server-sent `transcript.text.delta` events (gpt-4o-transcribe
 * and newer; whisper-1 ignores it), which become interim events while the upload is transcribed.
 */
import OpenAI, { toFile } from 'openai';
import { concatPcm, type AudioFrame } from '../../audio/frame.ts';
import { writeWav } from '../../audio/wav.ts';
import type { ProviderError } from '../../util/errors.ts';
import { Deadline, isTransient, toProviderError } from '../resilience.ts';
import { EventQueue } from './event-queue.ts';
import { checkSttRate, primaryLanguage, type SttEvent, type SttOpenOptions, type SttProvider, type SttSampleRate, type SttStream } from './types.ts';
import { httpFetch } from '../http-fetch.ts';

export interface OpenAiSttOptions {
  apiKey?: string;
  baseUrl?: string;
  model?: string;
  /** Ask for streamed deltas (interim events); off by default because whisper-1 cannot. */
  stream?: boolean;
  /** Time allowed for one upload to produce its transcript. */
  requestTimeoutMs?: number;
  /** Extra attempts after a transient failure (5xx, 429, network, timeout). */
  retries?: number;
  /** Shorter segments are not worth a request (a click, a breath): they yield an empty final. */
  minSegmentMs?: number;
  /** A caller who never pauses still gets transcribed: the segment is cut here. */
  maxSegmentMs?: number;
  /** Share one client (and its connection pool) between providers. */
  client?: OpenAI;
}

export class OpenAiStt implements SttProvider {
  readonly label = 'openai';
  readonly capabilities: { interim: boolean; streaming: boolean };
  private readonly client: OpenAI;

  constructor(readonly options: OpenAiSttOptions = {}) {
    this.capabilities = { interim: options.stream === true, streaming: false };
    this.client =
      options.client ??
      // Retries are ours (one, then a ProviderError); the client must not add its own.
      new OpenAI({ apiKey: options.apiKey ?? 'unset', baseURL: options.baseUrl, maxRetries: 0, fetch: httpFetch });
  }

  open(opts: SttOpenOptions): SttStream {
    checkSttRate(opts.sampleRate, 'OpenAI');
    return new OpenAiSttStream(this.client, this.options, primaryLanguage(opts.language), opts.signal, opts.sampleRate);
  }
}

interface Segment {
  samples: Int16Array;
  startMs: number;
  endMs: number;
  /** Cut by finalize() (the caller stopped) rather than by maxSegmentMs. */
  speechFinal: boolean;
}

class OpenAiSttStream implements SttStream {
  private readonly events = new EventQueue<SttEvent>();
  private chunks: Int16Array[] = [];
  private bufferedSamples = 0;
  private writtenSamples = 0;
  /** Uploads run one after another so finals come out in the order they were spoken. */
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private closePromise: Promise<void> | undefined;
  private readonly onAbort = () => this.events.end();

  constructor(
    private readonly client: OpenAI,
    private readonly o: OpenAiSttOptions,
    private readonly language: string,
    private readonly signal: AbortSignal,
    /** Every frame's rate, and the uploaded WAV's. */
    private readonly rate: SttSampleRate,
  ) {
    if (signal.aborted) this.events.end();
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<SttEvent> {
    return this.events[Symbol.asyncIterator]();
  }

  write(frame: AudioFrame): void {
    if (this.closed || this.events.isEnded) return;
    if (frame.sampleRate !== this.rate) throw new RangeError(`OpenAI STT stream at ${this.rate} Hz got ${frame.sampleRate} Hz audio`);
    this.chunks.push(frame.samples);
    this.bufferedSamples += frame.samples.length;
    this.writtenSamples += frame.samples.length;
    if (this.bufferedSamples >= ((this.o.maxSegmentMs ?? 30_000) * this.rate) / 1000) this.cut(false, false);
  }

  finalize(): void {
    if (this.closed || this.events.isEnded) return;
    this.cut(true, true);
  }

  close(): Promise<void> {
    this.closePromise ??= (async () => {
      if (!this.closed && !this.events.isEnded) this.cut(true, false);
      this.closed = true;
      await this.chain;
      this.signal.removeEventListener('abort', this.onAbort);
      this.events.end();
    })();
    return this.closePromise;
  }

  /** `answerEmpty`: finalize() promises exactly one final, even for a segment too short to send. */
  private cut(speechFinal: boolean, answerEmpty: boolean): void {
    const samples = concatPcm(this.chunks);
    const endMs = (this.writtenSamples * 1000) / this.rate;
    const seg: Segment = { samples, startMs: endMs - (samples.length * 1000) / this.rate, endMs, speechFinal };
    this.chunks = [];
    this.bufferedSamples = 0;
    const tooShort = samples.length < ((this.o.minSegmentMs ?? 100) * this.rate) / 1000;
    if (tooShort && !answerEmpty) return;
    this.chain = this.chain.then(async () => {
      if (tooShort) {
        this.events.push({ type: 'final', text: '', startMs: seg.startMs, endMs: seg.endMs, speechFinal });
        return;
      }
      const event = await this.transcribe(seg);
      if (event) this.events.push(event);
    });
  }

  private async transcribe(seg: Segment): Promise<SttEvent | undefined> {
    const file = await toFile(writeWav({ sampleRate: this.rate, channels: 1, samples: seg.samples }), 'utterance.wav', {
      type: 'audio/wav',
    });
    const retries = this.o.retries ?? 1;
    let lastError: ProviderError | undefined;
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (this.signal.aborted) return undefined;
      const deadline = new Deadline(this.signal, 'openai');
      deadline.arm('transcription', this.o.requestTimeoutMs ?? 15_000);
      try {
        const text = await this.request(file, seg, deadline.signal);
        return { type: 'final', text: text.trim(), startMs: seg.startMs, endMs: seg.endMs, speechFinal: seg.speechFinal };
      } catch (err) {
        if (this.signal.aborted) return undefined;
        lastError = deadline.expired ?? toProviderError(err, 'openai', 'transcription');
        if (!isTransient(lastError)) break;
      } finally {
        deadline.cancel();
      }
    }
    return { type: 'error', error: lastError! };
  }

  private async request(file: File, seg: Segment, signal: AbortSignal): Promise<string> {
    const model = this.o.model ?? 'gpt-4o-transcribe';
    const base = { file, model, language: this.language };
    if (!this.o.stream) {
      const r = await this.client.audio.transcriptions.create({ ...base, response_format: 'json' }, { signal });
      return r.text;
    }
    const stream = await this.client.audio.transcriptions.create({ ...base, response_format: 'json', stream: true }, { signal });
    let text = '';
    for await (const ev of stream) {
      if (ev.type === 'transcript.text.delta') {
        text += ev.delta;
        if (text.trim() !== '') this.events.push({ type: 'interim', text: text.trim(), startMs: seg.startMs, endMs: seg.endMs });
      } else if (ev.type === 'transcript.text.done') {
        return ev.text;
      }
    }
    // A stream that ends without `done` still carries what it said; a proxy may drop the last event.
    return text;
  }
}
