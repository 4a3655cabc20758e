import type { Api } from '../api.ts';
import { SOURCE_PATHS, type Source } from './form-schema.ts';

/** One choice of a picker: the id as the input's value, a readable label. */
export interface Choice {
  value: string;
  label: string;
  /** Voices: where the sample is (the engine's own /api/voices/{id}/preview.wav, or elsewhere). */
  previewUrl?: string;
}

type Item = Record<string, unknown> & { id: number };

function labelOf(source: Source, item: Item): string {
  const s = (k: string) => (typeof item[k] === 'string' ? (item[k] as string) : '');
  switch (source) {
    case 'voices':
      return [s('name'), [s('gender'), s('accent'), s('age')].filter(Boolean).join(', ')].filter(Boolean).join(' — ');
    case 'languages':
      return `${s('name')} (${s('code')})`;
    case 'llm-models':
    case 'multimodal-models':
      return `${s('name')} — ${s('provider')}`;
    case 'phone-numbers':
      return `${s('phone_number')} (${s('type') === 'caller_id' ? 'caller ID' : 'SIP trunk'})`;
    case 'assistants':
      return `${s('name')} (${s('type')}, ${s('mode')})`;
    default:
      return s('name') || `#${item.id}`;
  }
}

/**
 * The engine's catalog (languages, models, providers, voices) does not change while the console
 * is open: each list is fetched once per page load, which keeps a form's burst of requests well
 * under the API's rate limit. The account's own lists (tools, numbers, ...) are always fetched.
 */
const STATIC: ReadonlySet<Source> = new Set(['voices', 'languages', 'llm-models', 'multimodal-models', 'synthesizer-providers', 'transcriber-providers']);
const cache = new Map<string, Promise<Choice[]>>();

/** The list behind a picker. Voices are narrowed to the mode and language being edited. */
export function loadChoices(api: Api, source: Source, filter: { mode?: string; languageId?: string }, signal: AbortSignal): Promise<Choice[]> {
  if (!STATIC.has(source)) return fetchChoices(api, source, filter, signal);
  const key = `${source}?${filter.mode ?? ''}&${filter.languageId ?? ''}`;
  let hit = cache.get(key);
  if (!hit) {
    // Not tied to one page's signal: a cached list outlives the page that asked first.
    hit = fetchChoices(api, source, filter, new AbortController().signal);
    hit.catch(() => cache.delete(key));
    cache.set(key, hit);
  }
  return hit;
}

async function fetchChoices(api: Api, source: Source, filter: { mode?: string; languageId?: string }, signal: AbortSignal): Promise<Choice[]> {
  let path = SOURCE_PATHS[source];
  if (source === 'voices') {
    const q = new URLSearchParams();
    if (filter.mode) q.set('mode', filter.mode);
    if (filter.languageId) q.set('language_id', filter.languageId);
    if (q.size > 0) path += `?${q}`;
  }
  const answer = await api.get<Item[] | { assistants: Item[] }>(path, signal);
  const items = Array.isArray(answer) ? answer : answer.assistants;
  return items.map((item) => ({
    value: String(item.id),
    label: labelOf(source, item),
    ...(typeof item.preview_url === 'string' && { previewUrl: item.preview_url }),
  }));
}

/** The API path of an engine-made preview, fetched with the key; null for a sample elsewhere. */
export function previewPath(previewUrl: string | undefined): string | null {
  if (!previewUrl) return null;
  let pathname: string;
  try {
    pathname = new URL(previewUrl, 'http://engine.invalid').pathname;
  } catch {
    return null;
  }
  return /^\/api\/voices\/\d+\/preview\.wav$/.test(pathname) ? pathname : null;
}
