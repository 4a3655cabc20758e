import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { builtinCatalog } from '../../../src/catalog/builtin.ts';
import { catalogDataSchema } from '../../../src/catalog/schema.ts';
import { SpeechProviders } from '../../../src/providers/registry.ts';
import { isTransient, toProviderError } from '../../../src/providers/resilience.ts';
import { DeepgramStt } from '../../../src/providers/stt/deepgram.ts';
import { EventQueue } from '../../../src/providers/stt/event-queue.ts';
import { primaryLanguage } from '../../../src/providers/stt/types.ts';
import { FliteTtsProvider, splitSentences } from '../../../src/providers/tts/flite-tts.ts';
import { OpenAiTts } from '../../../src/providers/tts/openai-tts.ts';
import { ProviderError } from '../../../src/util/errors.ts';

describe('speech provider registry', () => {
  const catalog = catalogDataSchema.parse(builtinCatalog());
  const providers = new SpeechProviders({ config: { openai: { apiKey: 'k' }, deepgram: { apiKey: 'd' } }, flite: () => Promise.reject(new Error('unused')) });

  it('maps every built-in synthesizer and transcriber to an implementation by kind', () => {
    const tts = catalog.synthesizer_providers.map((e) => [e.name, providers.synthesizer(e).label]);
    expect(tts).toEqual([['OpenAI TTS', 'openai'], ['Flite (offline)', 'flite']]);
    const stt = catalog.transcriber_providers.map((e) => [e.name, providers.transcriber(e).label, providers.transcriber(e).capabilities]);
    expect(stt).toEqual([
      ['Deepgram', 'deepgram', { interim: true, streaming: true }],
      // gpt-4o-transcribe streams its deltas, so it offers interims (after each utterance).
      ['OpenAI', 'openai', { interim: true, streaming: false }],
    ]);
  });

  it('configures adapters from the catalog entry and shares one instance per entry', () => {
    const entry = catalog.synthesizer_providers[0]!;
    const a = providers.synthesizer(entry);
    expect(a).toBe(providers.synthesizer(entry));
    expect(a).toBeInstanceOf(OpenAiTts);
    expect((a as OpenAiTts).options.model).toBe('gpt-4o-mini-tts');
    expect(providers.synthesizer(catalog.synthesizer_providers[1]!)).toBeInstanceOf(FliteTtsProvider);
    const dg = providers.transcriber(catalog.transcriber_providers[0]!) as DeepgramStt;
    expect(dg.options.model).toBe('nova-3');
  });

  it('every TTS says which assistant voice options it honours', () => {
    for (const e of catalog.synthesizer_providers) {
      expect(Object.keys(providers.synthesizer(e).capabilities.options).sort()).toEqual(['emotion', 'language', 'similarity', 'speed', 'stability']);
    }
  });
});

describe('Deepgram URL', () => {
  it('asks for raw 16 kHz mono linear16 with interims, punctuation and endpointing', () => {
    const url = new URL(new DeepgramStt({ baseUrl: 'https://dg.example/', endpointingMs: 250, params: { smart_format: 'true' } }).url('es-MX'));
    expect(url.origin + url.pathname).toBe('wss://dg.example/v1/listen');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      model: 'nova-3', language: 'es-MX', encoding: 'linear16', sample_rate: '16000', channels: '1', interim_results: 'true', punctuate: 'true', endpointing: '250', smart_format: 'true',
    });
  });
});

describe('EventQueue', () => {
  it('delivers queued and later items in order, then ends', async () => {
    const q = new EventQueue<number>();
    q.push(1);
    const seen: number[] = [];
    const reading = (async () => {
      for await (const n of q) seen.push(n);
    })();
    q.push(2);
    await Promise.resolve();
    q.push(3);
    q.end();
    q.push(4);
    await reading;
    expect(seen).toEqual([1, 2, 3]);
  });

  it('refuses a second reader', () => {
    const q = new EventQueue<number>();
    q[Symbol.asyncIterator]();
    expect(() => q[Symbol.asyncIterator]()).toThrow(/only once/);
  });
});

describe('helpers', () => {
  it('primaryLanguage narrows BCP 47 to ISO 639-1', () => {
    expect(primaryLanguage('en-US')).toBe('en');
    expect(primaryLanguage('zh-Hans-CN')).toBe('zh');
  });

  it('splitSentences keeps sentences whole and folds tiny fragments into their neighbour', () => {
    expect(splitSentences('  Hi.  How are you today?  Ok. ')).toEqual(['Hi. How are you today? Ok.']);
    expect(splitSentences('Thanks for calling Acme support. Your order shipped today! Anything else?')).toEqual([
      'Thanks for calling Acme support.', 'Your order shipped today!', 'Anything else?',
    ]);
    expect(splitSentences('   ')).toEqual([]);
  });

  it('only 5xx, 429, network failures and our timeouts are transient', () => {
    const api = (status: number) => OpenAI.APIError.generate(status, { error: { message: 'x' } }, 'x', new Headers());
    expect(isTransient(api(500))).toBe(true);
    expect(isTransient(api(503))).toBe(true);
    expect(isTransient(api(429))).toBe(true);
    expect(isTransient(api(400))).toBe(false);
    expect(isTransient(api(401))).toBe(false);
    expect(isTransient(new OpenAI.APIConnectionError({ message: 'reset' }))).toBe(true);
    expect(isTransient(new OpenAI.APIUserAbortError())).toBe(false);
    expect(isTransient(new TypeError('fetch failed'))).toBe(true);
    expect(isTransient(new RangeError('bug'))).toBe(false);
    const pe = toProviderError(api(502), 'openai', 'speech');
    expect(pe).toBeInstanceOf(ProviderError);
    expect([pe.retryable, pe.status, pe.code, pe.provider]).toEqual([true, 502, 'PROVIDER_FAILED', 'openai']);
    expect(pe.message).toMatch(/HTTP 502/);
  });
});
