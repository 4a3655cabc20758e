import fs from 'node:fs';
import type { z } from 'zod';
import { ConfigError } from '../config.ts';
import { builtinCatalog } from './builtin.ts';
import {
  catalogDataSchema,
  catalogFileSchema,
  SECTIONS,
  type CatalogData,
  type Language,
  type Mode,
  type Model,
  type SynthesizerProvider,
  type TranscriberProvider,
  type VoiceEntry,
} from './schema.ts';

/** A catalog voice as the engine sees it: the entry plus its resolved preview URL and offline flag. */
export interface Voice extends Omit<VoiceEntry, 'preview_url'> {
  preview_url: string;
  /** Synthesized without network access (its provider is offline). */
  offline: boolean;
}

/** The spec's Voice list item (internal fields dropped). */
export interface PublicVoice {
  id: number;
  name: string;
  language_id: number;
  gender: string;
  preview_url: string;
  accent: string | null;
  age: string | null;
  synthesizer_provider_id: number | null;
}

export interface VoiceFilter {
  mode?: Mode;
  language_id?: number;
  /** Private voices of this account are included; other private voices never are. */
  accountId?: number;
}

/** Start-up failure caused by a bad SWITCHBOARD_CATALOG file (a ConfigError: printed, exit 1). */
export class CatalogError extends ConfigError {}

/** Lookups over languages, models, providers and voices; immutable once built. */
export class Catalog {
  private readonly byId: {
    languages: Map<number, Language>;
    llm: Map<number, Model>;
    multimodal: Map<number, Model>;
    synth: Map<number, SynthesizerProvider>;
    trans: Map<number, TranscriberProvider>;
    voices: Map<number, Voice>;
  };

  /** `data` must already be cross-checked (see `catalogProblems`); `publicUrl` has no trailing slash. */
  constructor(readonly data: CatalogData, publicUrl: string) {
    const synth = new Map(data.synthesizer_providers.map((p) => [p.id, p]));
    const voices = data.voices.map((v): Voice => ({
      ...v,
      preview_url: v.preview_url ?? `${publicUrl}/api/voices/${v.id}/preview.wav`,
      offline: v.synthesizer_provider_id != null && (synth.get(v.synthesizer_provider_id)?.offline ?? false),
    }));
    this.byId = {
      languages: new Map(data.languages.map((l) => [l.id, l])),
      llm: new Map(data.llm_models.map((m) => [m.id, m])),
      multimodal: new Map(data.multimodal_models.map((m) => [m.id, m])),
      synth,
      trans: new Map(data.transcriber_providers.map((p) => [p.id, p])),
      voices: new Map(voices.map((v) => [v.id, v])),
    };
  }

  /** The built-in catalog, with a SWITCHBOARD_CATALOG file applied when one is configured. */
  static load(config: { publicUrl: string; catalogFile?: string }): Catalog {
    return new Catalog(resolveCatalog(config.catalogFile), config.publicUrl);
  }

  languages(): Language[] {
    return [...this.byId.languages.values()];
  }
  language(id: number): Language | undefined {
    return this.byId.languages.get(id);
  }
  llmModels(): Model[] {
    return [...this.byId.llm.values()];
  }
  llmModel(id: number): Model | undefined {
    return this.byId.llm.get(id);
  }
  multimodalModels(): Model[] {
    return [...this.byId.multimodal.values()];
  }
  multimodalModel(id: number): Model | undefined {
    return this.byId.multimodal.get(id);
  }
  synthesizerProviders(): SynthesizerProvider[] {
    return [...this.byId.synth.values()];
  }
  synthesizerProvider(id: number): SynthesizerProvider | undefined {
    return this.byId.synth.get(id);
  }
  transcriberProviders(): TranscriberProvider[] {
    return [...this.byId.trans.values()];
  }
  transcriberProvider(id: number): TranscriberProvider | undefined {
    return this.byId.trans.get(id);
  }

  /** A voice by id; with `accountId`, another account's private voice is treated as missing. */
  voice(id: number, accountId?: number): Voice | undefined {
    const v = this.byId.voices.get(id);
    if (!v) return undefined;
    if (accountId !== undefined && !visibleTo(v, accountId)) return undefined;
    return v;
  }

  voices(filter: VoiceFilter = {}): Voice[] {
    return [...this.byId.voices.values()].filter(
      (v) =>
        (filter.mode === undefined || v.modes.includes(filter.mode)) &&
        (filter.language_id === undefined || v.language_id === filter.language_id) &&
        (filter.accountId === undefined ? v.public : visibleTo(v, filter.accountId)),
    );
  }

  /** First synthesizer (catalog order) serving the language: OpenAI TTS for the built-in catalog. */
  defaultSynthesizerFor(languageId: number): SynthesizerProvider | undefined {
    return firstServing(this.synthesizerProviders(), this.language(languageId));
  }

  /** First transcriber (catalog order) serving the language: Deepgram for the built-in catalog. */
  defaultTranscriberFor(languageId: number): TranscriberProvider | undefined {
    return firstServing(this.transcriberProviders(), this.language(languageId));
  }

  static publicVoice(v: Voice): PublicVoice {
    return {
      id: v.id,
      name: v.name,
      language_id: v.language_id,
      gender: v.gender,
      preview_url: v.preview_url,
      accent: v.accent,
      age: v.age,
      synthesizer_provider_id: v.synthesizer_provider_id,
    };
  }
}

function visibleTo(v: VoiceEntry, accountId: number): boolean {
  return v.public || v.account_id === accountId;
}

/** Does a provider's language list (prefixes such as `en`) cover a BCP 47 code? */
export function serves(languages: readonly string[] | null, code: string): boolean {
  if (languages === null) return true;
  const lower = code.toLowerCase();
  return languages.some((l) => lower === l.toLowerCase() || lower.startsWith(`${l.toLowerCase()}-`));
}

function firstServing<P extends { languages: string[] | null }>(list: P[], language: Language | undefined): P | undefined {
  if (!language) return undefined;
  return list.find((p) => serves(p.languages, language.code));
}

/** Built-in catalog merged with the file: a present section replaces, `add` appends. */
export function resolveCatalog(file?: string): CatalogData {
  const base = catalogDataSchema.parse(builtinCatalog());
  if (!file) return base;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CatalogError(`SWITCHBOARD_CATALOG: cannot read ${file} as JSON: ${(err as Error).message}`);
  }
  const parsed = catalogFileSchema.safeParse(raw);
  if (!parsed.success) throw new CatalogError(`SWITCHBOARD_CATALOG (${file}) is invalid:\n  ${describe(parsed.error)}`);
  const merged = { ...base } as Record<(typeof SECTIONS)[number], unknown[]>;
  for (const s of SECTIONS) {
    const replaced = parsed.data[s];
    if (replaced) merged[s] = replaced;
    const added = parsed.data.add?.[s];
    if (added) merged[s] = [...merged[s], ...added];
  }
  const data = merged as unknown as CatalogData;
  const problems = catalogProblems(data);
  if (problems.length > 0) throw new CatalogError(`SWITCHBOARD_CATALOG (${file}) is inconsistent:\n  ${problems.join('\n  ')}`);
  return data;
}

function describe(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.map(String).join('.') || '(file)'}: ${i.message}`).join('\n  ');
}

/** Cross-section rules zod cannot see: unique ids, references that resolve, voice/mode coherence. */
export function catalogProblems(data: CatalogData): string[] {
  const problems: string[] = [];
  const unique = (section: string, items: { id: number }[]) => {
    const seen = new Set<number>();
    for (const { id } of items) {
      if (seen.has(id)) problems.push(`${section}: id ${id} is used more than once`);
      seen.add(id);
    }
  };
  unique('languages', data.languages);
  unique('llm_models', data.llm_models);
  unique('multimodal_models', data.multimodal_models);
  unique('synthesizer_providers', data.synthesizer_providers);
  unique('transcriber_providers', data.transcriber_providers);
  unique('voices', data.voices);
  if (data.languages.length === 0) problems.push('languages: at least one language is needed');
  const languages = new Set(data.languages.map((l) => l.id));
  const synth = new Set(data.synthesizer_providers.map((p) => p.id));
  const multimodal = new Set(data.multimodal_models.map((m) => m.id));
  data.voices.forEach((v, i) => {
    const at = `voices.${i} (id ${v.id})`;
    if (!languages.has(v.language_id)) problems.push(`${at}: language_id ${v.language_id} is not in languages`);
    if (v.synthesizer_provider_id !== null && !synth.has(v.synthesizer_provider_id)) {
      problems.push(`${at}: synthesizer_provider_id ${v.synthesizer_provider_id} is not in synthesizer_providers`);
    }
    // A realtime model speaks with its own voices; pipeline/dualplex speak through a TTS provider.
    if (v.synthesizer_provider_id === null && v.modes.some((m) => m !== 'multimodal')) {
      problems.push(`${at}: a voice without synthesizer_provider_id can only have mode multimodal`);
    }
    if (v.synthesizer_provider_id !== null && v.modes.includes('multimodal')) {
      problems.push(`${at}: a synthesizer voice cannot have mode multimodal`);
    }
    for (const m of v.multimodal_model_ids ?? []) {
      if (!multimodal.has(m)) problems.push(`${at}: multimodal_model_ids ${m} is not in multimodal_models`);
    }
    if (!v.public && v.account_id === null) problems.push(`${at}: a private voice needs account_id`);
  });
  return problems;
}
