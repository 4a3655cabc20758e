import type { Config } from '../../config.ts';
import { OpenAiLlmProvider } from './openai.ts';
import type { LlmProvider } from './types.ts';
import { instrumentLlm, type ProviderMetrics } from '../../telemetry/provider-metrics.ts';
import { traceLlm } from '../../telemetry/provider-spans.ts';

/** Provider names as the catalog spells them (`llm-models[].provider`). */
export type LlmProviderName = 'openai';

export type LlmRegistry = Readonly<Record<LlmProviderName, LlmProvider>>;

/** Built once in the composition root; every OpenAI-protocol model shares one client. */
export function createLlmRegistry(config: Pick<Config, 'openai'>, metrics?: ProviderMetrics): LlmRegistry {
  const measured = (p: LlmProvider): LlmProvider => (metrics ? instrumentLlm(p, metrics) : p);
  return Object.freeze({
    openai: measured(traceLlm(new OpenAiLlmProvider({ apiKey: config.openai.apiKey, baseUrl: config.openai.baseUrl }))),
  });
}

export function providerFor(registry: LlmRegistry, name: string): LlmProvider | undefined {
  return Object.hasOwn(registry, name) ? registry[name as LlmProviderName] : undefined;
}
