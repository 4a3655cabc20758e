/**
 * The provider wrappers count each request once with its outcome and observe first-byte
 * latency, while the wrapped provider behaves exactly as before (results, events, errors).
 */
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { LlmProvider } from '../../../src/providers/llm/types.ts';
import type { RealtimeConnection, RealtimeEvent, RealtimeProvider } from '../../../src/providers/realtime/realtime.ts';
import type { TtsProvider } from '../../../src/providers/tts/types.ts';
import { createProviderMetrics, instrumentLlm, instrumentRealtime, instrumentTts } from '../../../src/telemetry/provider-metrics.ts';

async function values(registry: client.Registry, name: string) {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return (m?.values ?? []) as Array<{ labels: Record<string, string>; value: number; metricName?: string }>;
}

describe('provider metrics', () => {
  it('LLM: ok with first token observed, error when it throws, cancelled when aborted', async () => {
    const registry = new client.Registry();
    const metrics = createProviderMetrics(registry);
    let fail: Error | undefined;
    const llm: LlmProvider = {
      label: 'openai',
      capabilities: { streaming: true, tools: true },
      async complete(req) {
        if (fail) throw fail;
        req.onToken?.('Hi');
        return { content: 'Hi', toolCalls: [], finishReason: 'stop' };
      },
    };
    const measured = instrumentLlm(llm, metrics);
    expect(measured.label).toBe('openai');
    const tokens: string[] = [];
    expect((await measured.complete({ model: 'm', messages: [], onToken: (t) => tokens.push(t) })).content).toBe('Hi');
    expect(tokens).toEqual(['Hi']);
    fail = new Error('boom');
    await expect(measured.complete({ model: 'm', messages: [] })).rejects.toThrow('boom');
    const ctl = new AbortController();
    ctl.abort();
    await expect(measured.complete({ model: 'm', messages: [], signal: ctl.signal })).rejects.toThrow('boom');
    const counts = await values(registry, 'switchboard_provider_requests_total');
    const of = (outcome: string) => counts.find((v) => v.labels.outcome === outcome && v.labels.kind === 'llm')?.value;
    expect([of('ok'), of('error'), of('cancelled')]).toEqual([1, 1, 1]);
    const fb = await values(registry, 'switchboard_provider_first_byte_seconds');
    expect(fb.find((v) => v.metricName === 'switchboard_provider_first_byte_seconds_count')?.value).toBe(1);
  });

  it('TTS: frames pass through; a barge-in abort counts as cancelled', async () => {
    const registry = new client.Registry();
    const metrics = createProviderMetrics(registry);
    const tts: TtsProvider = {
      label: 'flite',
      capabilities: { streaming: true, sampleRate: 16000, options: { speed: false, stability: false, similarity: false, emotion: false, language: false } },
      async *synthesize() {
        yield new Int16Array(320) as never;
        yield new Int16Array(320) as never;
      },
    };
    const measured = instrumentTts(tts, metrics);
    let n = 0;
    for await (const _ of measured.synthesize('a', { voice: 'v', signal: new AbortController().signal })) n++;
    expect(n).toBe(2);
    const ctl = new AbortController();
    for await (const _ of measured.synthesize('b', { voice: 'v', signal: ctl.signal })) {
      ctl.abort();
      break;
    }
    const counts = await values(registry, 'switchboard_provider_requests_total');
    expect(counts.map((v) => [v.labels.outcome, v.value]).sort()).toEqual([['cancelled', 1], ['ok', 1]]);
  });

  it('realtime: one request per connection, first audio after a response was asked for, error when the socket dropped', async () => {
    const registry = new client.Registry();
    const metrics = createProviderMetrics(registry);
    const script: RealtimeEvent[] = [
      { type: 'audio', responseId: 'r', itemId: 'i', contentIndex: 0, receivedMs: 20 },
      { type: 'closed', code: 1006, reason: 'dropped', retryable: true },
    ];
    let asked = 0;
    const conn = {
      events: (async function* () {
        for (const e of script) yield e;
      })(),
      createResponse() {
        asked++;
      },
      receivedMs: () => 7,
    } as unknown as RealtimeConnection;
    const provider = { label: 'openai', capabilities: {}, connect: async () => conn } as unknown as RealtimeProvider;
    const measured = await instrumentRealtime(provider, metrics).connect({ model: 'm', apiKey: 'k', session: {} as never, signal: new AbortController().signal });
    measured.createResponse();
    expect(asked).toBe(1);
    expect(measured.receivedMs('i')).toBe(7);
    const seen: string[] = [];
    for await (const e of measured.events) seen.push(e.type);
    expect(seen).toEqual(['audio', 'closed']);
    const counts = await values(registry, 'switchboard_provider_requests_total');
    expect(counts.map((v) => [v.labels.kind, v.labels.outcome, v.value])).toEqual([['realtime', 'error', 1]]);
    const fb = await values(registry, 'switchboard_provider_first_byte_seconds');
    expect(fb.find((v) => v.metricName === 'switchboard_provider_first_byte_seconds_count')?.value).toBe(1);
  });
});
