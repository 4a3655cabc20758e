/**
 * Which providers this process can use, from the configuration alone (no request is made):
 * a vendor needing a key is configured when its key is set. What depends on it (start-up log
 * lines, assistant warnings, assistant status, chat errors) asks here, so the answer and its
 * wording ("Deepgram: no API key configured (DEEPGRAM_API_KEY)") are the same everywhere.
 * Keys are never part of an answer, only the names of the variables that hold them.
 */
import type { Catalog } from '../catalog/catalog.ts';
import type { Config } from '../config.ts';

/** Vendors as the catalog names them (`llm_models[].provider`, `*_providers[].kind`). */
export type Vendor = 'openai' | 'deepgram' | 'flite' | 'twilio';

export type ProviderKind = 'llm' | 'realtime' | 'stt' | 'tts' | 'whatsapp';

interface VendorInfo {
  /** How messages name it. */
  label: string;
  /** The environment variable holding its key; absent: needs none from us. */
  keyEnv?: 'OPENAI_API_KEY' | 'DEEPGRAM_API_KEY';
  /** Why no key is needed, for the start-up line. */
  keyless?: string;
}

export const VENDORS: { readonly [V in Vendor]: VendorInfo } = {
  openai: { label: 'OpenAI', keyEnv: 'OPENAI_API_KEY' },
  deepgram: { label: 'Deepgram', keyEnv: 'DEEPGRAM_API_KEY' },
  flite: { label: 'Flite', keyless: 'offline, bundled' },
  twilio: { label: 'Twilio', keyless: 'credentials per WhatsApp sender' },
};

export type ProviderConfig = Pick<Config, 'openai' | 'deepgram'>;

export interface VendorState {
  vendor: Vendor;
  label: string;
  configured: boolean;
  /** The variable to set when not configured. */
  missingEnv?: string;
  /** Why it works without a key of ours (offline engine, per-sender credentials, keyless endpoint). */
  note?: string;
}

export function isVendor(name: string): name is Vendor {
  return Object.hasOwn(VENDORS, name);
}

/**
 * An OpenAI-protocol endpoint at a custom OPENAI_BASE_URL (a local model server or proxy) may
 * need no key: it counts as configured, the start-up line says it runs keyless.
 */
export function vendorState(config: ProviderConfig, vendor: Vendor): VendorState {
  const info = VENDORS[vendor];
  const base = { vendor, label: info.label };
  switch (vendor) {
    case 'openai':
      if (config.openai.apiKey) return { ...base, configured: true };
      if (config.openai.baseUrl) return { ...base, configured: true, note: 'no key, custom OPENAI_BASE_URL' };
      return { ...base, configured: false, missingEnv: 'OPENAI_API_KEY' };
    case 'deepgram':
      if (config.deepgram.apiKey) return { ...base, configured: true };
      return { ...base, configured: false, missingEnv: 'DEEPGRAM_API_KEY' };
    default:
      return { ...base, configured: true, note: info.keyless };
  }
}

/** "Deepgram: no API key configured (DEEPGRAM_API_KEY)", or undefined when the vendor is usable. */
export function missingMessage(config: ProviderConfig, vendor: Vendor): string | undefined {
  const s = vendorState(config, vendor);
  return s.configured ? undefined : `${s.label}: no API key configured (${s.missingEnv})`;
}

export interface KindStatus {
  kind: ProviderKind;
  providers: VendorState[];
}

/** The vendors each kind of provider uses in this catalog, in catalog order, each once. */
export function providerKinds(config: ProviderConfig, catalog: Catalog): KindStatus[] {
  const vendorsOf = (names: string[]): VendorState[] =>
    [...new Set(names)].filter(isVendor).map((v) => vendorState(config, v));
  return [
    { kind: 'stt', providers: vendorsOf(catalog.transcriberProviders().map((p) => p.kind)) },
    { kind: 'llm', providers: vendorsOf(catalog.llmModels().map((m) => m.provider)) },
    { kind: 'tts', providers: vendorsOf(catalog.synthesizerProviders().map((p) => p.kind)) },
    { kind: 'realtime', providers: vendorsOf(catalog.multimodalModels().map((m) => m.provider)) },
    { kind: 'whatsapp', providers: [vendorState(config, 'twilio')] },
  ];
}

const KIND_NAMES: { readonly [K in ProviderKind]: string } = {
  stt: 'speech-to-text',
  llm: 'language model',
  tts: 'text-to-speech',
  realtime: 'realtime (multimodal)',
  whatsapp: 'WhatsApp messaging',
};

/**
 * One line per kind: "speech-to-text providers: openai configured; deepgram NOT configured
 * (set DEEPGRAM_API_KEY)". Structured fields beside it for log search.
 */
export function startupLines(config: ProviderConfig, catalog: Catalog): { fields: Record<string, unknown>; msg: string }[] {
  return providerKinds(config, catalog).map(({ kind, providers }) => {
    const configured = providers.filter((p) => p.configured);
    const missing = providers.filter((p) => !p.configured);
    const parts = [
      ...configured.map((p) => `${p.vendor} configured${p.note ? ` (${p.note})` : ''}`),
      ...missing.map((p) => `${p.vendor} NOT configured (set ${p.missingEnv})`),
    ];
    const msg = `${KIND_NAMES[kind]} providers: ${parts.length > 0 ? parts.join('; ') : 'none in the catalog'}`;
    return {
      fields: {
        providerKind: kind,
        configured: configured.map((p) => p.vendor),
        notConfigured: missing.map((p) => ({ provider: p.vendor, env: p.missingEnv })),
      },
      msg,
    };
  });
}

/** Logs the start-up lines: info when all of a kind is usable, warn when something is missing. */
export function logProviderStatus(
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void },
  config: ProviderConfig,
  catalog: Catalog,
): void {
  for (const line of startupLines(config, catalog)) {
    const missing = (line.fields.notConfigured as unknown[]).length > 0;
    if (missing) logger.warn(line.fields, line.msg);
    else logger.info(line.fields, line.msg);
  }
}
