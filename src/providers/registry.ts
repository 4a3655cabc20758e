/**
 * The typed map from the catalog's speech providers to their implementations. The catalog entry's
 * `kind` picks the adapter (`synthesizer_providers[].kind`, `transcriber_providers[].kind`) and
 * its `model` configures it; adding a vendor means one file and one line in a map below, and the
 * compiler insists every kind the catalog schema allows has an entry.
 */
import type { SynthesizerProvider, TranscriberProvider } from '../catalog/schema.ts';
import type { Config } from '../config.ts';
import { FliteTts } from '../audio/tts-flite.ts';
import type { Clock } from '../util/clock.ts';
import { DeepgramStt } from './stt/deepgram.ts';
import { OpenAiStt } from './stt/openai-stt.ts';
import type { SttProvider } from './stt/types.ts';
import { FliteTtsProvider } from './tts/flite-tts.ts';
import { OpenAiTts } from './tts/openai-tts.ts';
import type { TtsProvider } from './tts/types.ts';
import { instrumentStt, instrumentTts, type ProviderMetrics } from '../telemetry/provider-metrics.ts';
import { traceStt, traceTts } from '../telemetry/provider-spans.ts';

export interface SpeechProviderDeps {
  config: Pick<Config, 'openai' | 'deepgram'>;
  /** The process-wide Flite engine; loaded on first use when not given. */
  flite?: () => Promise<FliteTts>;
  clock?: Clock;
  /** Requests and first-byte latency on /metrics (src/telemetry/provider-metrics.ts). */
  metrics?: ProviderMetrics;
}

type SynthesizerKind = SynthesizerProvider['kind'];
type TranscriberKind = TranscriberProvider['kind'];
type Factory<E, P> = (entry: E, deps: Required<Pick<SpeechProviderDeps, 'flite'>> & SpeechProviderDeps) => P;

const SYNTHESIZERS: { readonly [K in SynthesizerKind]: Factory<SynthesizerProvider, TtsProvider> } = {
  openai: (e, d) =>
    new OpenAiTts({ apiKey: d.config.openai.apiKey, baseUrl: d.config.openai.baseUrl, model: e.model ?? undefined, clock: d.clock }),
  flite: (_e, d) => new FliteTtsProvider(d.flite, d.clock),
};

const TRANSCRIBERS: { readonly [K in TranscriberKind]: Factory<TranscriberProvider, SttProvider> } = {
  deepgram: (e, d) => new DeepgramStt({ apiKey: d.config.deepgram.apiKey, baseUrl: d.config.deepgram.baseUrl, model: e.model ?? undefined }),
  // Streamed deltas exist for the gpt-4o transcribe family only; whisper-1 rejects nothing but sends none.
  openai: (e, d) =>
    new OpenAiStt({
      apiKey: d.config.openai.apiKey,
      baseUrl: d.config.openai.baseUrl,
      model: e.model ?? undefined,
      stream: /^gpt-4o/.test(e.model ?? 'gpt-4o-transcribe'),
    }),
};

/**
 * Built once in the composition root. Providers are stateless between calls (streams carry the
 * per-call state), so one instance per catalog entry is shared by every call.
 */
export class SpeechProviders {
  private readonly tts = new Map<number, TtsProvider>();
  private readonly stt = new Map<number, SttProvider>();
  private readonly deps: Required<Pick<SpeechProviderDeps, 'flite'>> & SpeechProviderDeps;

  constructor(deps: SpeechProviderDeps) {
    let flite: Promise<FliteTts> | undefined;
    this.deps = { ...deps, flite: deps.flite ?? (() => (flite ??= FliteTts.load())) };
  }

  synthesizer(entry: SynthesizerProvider): TtsProvider {
    let p = this.tts.get(entry.id);
    if (!p) {
      p = traceTts(SYNTHESIZERS[entry.kind](entry, this.deps));
      if (this.deps.metrics) p = instrumentTts(p, this.deps.metrics);
      this.tts.set(entry.id, p);
    }
    return p;
  }

  transcriber(entry: TranscriberProvider): SttProvider {
    let p = this.stt.get(entry.id);
    if (!p) {
      p = traceStt(TRANSCRIBERS[entry.kind](entry, this.deps));
      if (this.deps.metrics) p = instrumentStt(p, this.deps.metrics);
      this.stt.set(entry.id, p);
    }
    return p;
  }
}
