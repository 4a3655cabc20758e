/**
 * GET /api/voices/:id/preview.wav: the sample behind every catalog voice's default `preview_url`.
 * No key (browsers and players fetch it as a plain URL). Flite voices are synthesized in-process;
 * OpenAI TTS and realtime voices go through OpenAI speech when a key is configured. Each voice's
 * WAV is made once and kept in memory (the catalog holds a few hundred voices at most).
 */
import type { Api } from '../route.ts';
import { idParams } from '../route.ts';
import type { AppContext } from '../../context.ts';
import type { Voice } from '../../catalog/catalog.ts';
import { FliteTts, FLITE_VOICES, type FliteVoice } from '../../audio/tts-flite.ts';
import { SAMPLE_RATE } from '../../audio/frame.ts';
import { writeWav } from '../../audio/wav.ts';
import { OpenAiTts } from '../../providers/tts/openai-tts.ts';
import { AppError } from '../../util/errors.ts';

/** Bound on cached previews; far above the built-in catalog's voice count. */
const MAX_CACHED = 1024;
const DEFAULT_OPENAI_TTS_MODEL = 'gpt-4o-mini-tts';

export function previewText(voice: Pick<Voice, 'name'>): string {
  return `Hello, this is ${voice.name}. How can I help you today?`;
}

function notFound(message: string): AppError {
  return new AppError(message, 404, 'NOT_FOUND');
}

export function registerVoicePreviewRoutes(api: Api, ctx: AppContext): void {
  const { catalog, config } = ctx;
  /** Voice id → WAV bytes (or the synthesis in flight, so concurrent first requests share it). */
  const cache = new Map<number, Promise<Buffer>>();
  let flite: Promise<FliteTts> | undefined;
  let closed = false;

  api.onClose(async () => {
    closed = true;
    cache.clear();
    const loading = flite;
    flite = undefined;
    if (loading) await (await loading.catch(() => undefined))?.close();
  });

  const fliteTts = (): Promise<FliteTts> => {
    if (closed) return Promise.reject(new Error('voice previews closed'));
    flite ??= FliteTts.load().catch((err: unknown) => {
      flite = undefined;
      throw err;
    });
    return flite;
  };

  async function synthesizeFlite(voice: Voice, fliteVoice: FliteVoice): Promise<Buffer> {
    const audio = await (await fliteTts()).synthesize(previewText(voice), { voice: fliteVoice });
    return writeWav({ sampleRate: audio.sampleRate, channels: 1, samples: audio.samples });
  }

  async function synthesizeOpenAi(voice: Voice, apiKey: string, model: string): Promise<Buffer> {
    const tts = new OpenAiTts({ apiKey, baseUrl: config.openai.baseUrl, model, clock: ctx.clock });
    const frames: Int16Array[] = [];
    const signal = AbortSignal.timeout(30_000);
    for await (const frame of tts.synthesize(previewText(voice), { voice: voice.provider_voice, signal })) frames.push(frame.samples);
    const samples = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
    let at = 0;
    for (const f of frames) {
      samples.set(f, at);
      at += f.length;
    }
    return writeWav({ sampleRate: SAMPLE_RATE, channels: 1, samples });
  }

  /** How to make this voice's sample, or the 404 explaining why there is none. */
  function planFor(voice: Voice): () => Promise<Buffer> {
    const provider = voice.synthesizer_provider_id == null ? undefined : catalog.synthesizerProvider(voice.synthesizer_provider_id);
    if (provider?.kind === 'flite' || (voice.offline && provider === undefined)) {
      const name = voice.provider_voice;
      if (!(FLITE_VOICES as readonly string[]).includes(name)) throw notFound('No preview available for this voice.');
      return () => synthesizeFlite(voice, name as FliteVoice);
    }
    // OpenAI TTS voices, and realtime voices: the realtime models' voice names (alloy ... cedar)
    // are all voices of gpt-4o-mini-tts, so the same speech endpoint renders them by name.
    const apiKey = config.openai.apiKey;
    if (!apiKey) throw notFound('No preview available for this voice without a provider key.');
    const model = provider?.kind === 'openai'
      ? (provider.model ?? DEFAULT_OPENAI_TTS_MODEL)
      : (catalog.synthesizerProviders().find((p) => p.kind === 'openai')?.model ?? DEFAULT_OPENAI_TTS_MODEL);
    return () => synthesizeOpenAi(voice, apiKey, model);
  }

  api.route({
    method: 'GET',
    url: '/voices/:id/preview.wav',
    summary: 'A short spoken sample of a voice (audio/wav, 16 kHz mono), the target of its preview_url',
    tags: ['Assistants'],
    auth: 'none',
    params: idParams,
    produces: 'audio/wav',
    errors: { 404: 'No such public voice, or no preview can be made for it (a provider key is missing)' },
    handler: async ({ params, reply }) => {
      // No caller identity on a keyless URL: a private voice is never served (accountId 0 sees
      // public voices only), and answers exactly like a missing one.
      const voice = catalog.voice(params.id, 0);
      if (!voice) throw notFound('Voice not found.');
      let wav = cache.get(voice.id);
      if (!wav) {
        const make = planFor(voice);
        wav = make();
        if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
        cache.set(voice.id, wav);
        // A failed synthesis is not remembered: the next request tries again.
        wav.catch(() => {
          if (cache.get(voice.id) === wav) cache.delete(voice.id);
        });
      }
      const bytes = await wav;
      void reply.header('Content-Type', 'audio/wav');
      void reply.header('Cache-Control', 'public, max-age=86400');
      return bytes;
    },
  });
}
