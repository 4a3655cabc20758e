/**
 * Which providers an assistant relies on lack a key in this process. Saving such an assistant
 * still succeeds (the key may come with the next restart); the create/update answer carries
 * these as `warnings`, and the assistant reads `inactive` until they are gone.
 */
import type { Catalog } from '../catalog/catalog.ts';
import { isVendor, missingMessage, vendorState, type ProviderConfig } from '../providers/status.ts';
import type { AssistantConfig } from './config.ts';

export interface ProviderWarning {
  /** The assistant field whose provider is missing (`transcriber_provider_id`, `llm_model_id`, ...). */
  field: string;
  /** The vendor as the catalog names it (`deepgram`, `openai`). */
  provider: string;
  /** The environment variable that would configure it. */
  env: string;
  /** "Deepgram: no API key configured (DEEPGRAM_API_KEY)". */
  message: string;
}

/** The provider each field the assistant's mode uses resolves to, in a stable field order. */
function usedProviders(c: AssistantConfig, catalog: Catalog): { field: string; vendor: string | undefined }[] {
  const out: { field: string; vendor: string | undefined }[] = [];
  const synth = (): string | undefined => {
    const id = c.synthesizer_provider_id ?? catalog.voice(c.voice_id)?.synthesizer_provider_id ?? null;
    return id !== null ? catalog.synthesizerProvider(id)?.kind : undefined;
  };
  if (c.mode === 'pipeline') {
    out.push({ field: 'llm_model_id', vendor: c.llm_model_id != null ? catalog.llmModel(c.llm_model_id)?.provider : undefined });
    const trans = c.transcriber_provider_id != null ? catalog.transcriberProvider(c.transcriber_provider_id) : catalog.defaultTranscriberFor(c.language_id);
    out.push({ field: 'transcriber_provider_id', vendor: trans?.kind });
    out.push({ field: 'synthesizer_provider_id', vendor: synth() });
  } else {
    out.push({ field: 'multimodal_model_id', vendor: c.multimodal_model_id != null ? catalog.multimodalModel(c.multimodal_model_id)?.provider : undefined });
    // Dualplex speaks the model's text through our TTS; multimodal models speak themselves.
    if (c.mode === 'dualplex') out.push({ field: 'synthesizer_provider_id', vendor: synth() });
  }
  if (c.chat_llm_fallback_id != null) {
    out.push({ field: 'chat_llm_fallback_id', vendor: catalog.llmModel(c.chat_llm_fallback_id)?.provider });
  }
  return out;
}

export function providerWarnings(c: AssistantConfig, catalog: Catalog, providers: ProviderConfig): ProviderWarning[] {
  const warnings: ProviderWarning[] = [];
  for (const { field, vendor } of usedProviders(c, catalog)) {
    if (vendor === undefined || !isVendor(vendor)) continue;
    const message = missingMessage(providers, vendor);
    if (message) warnings.push({ field, provider: vendor, env: vendorState(providers, vendor).missingEnv ?? '', message });
  }
  return warnings;
}
