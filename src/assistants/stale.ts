import type { Catalog } from '../catalog/catalog.ts';
import type { Store } from '../store/index.ts';
import { ownedIds } from '../store/ownership.ts';
import type { AssistantConfig } from './config.ts';
import { referencedIds, withoutGone, type GoneIds } from './references.ts';

/**
 * The PUT side of "deletes keep the data whole": a reference the client did not send, to
 * something that no longer exists, is dropped by the rules of a delete (./references.ts) instead
 * of failing the whole update. Deletes already unbind what they remove; this covers references
 * left dangling by older builds and voices removed from the catalog. A reference the client did
 * send is validated as sent (an invalid id is still a 422).
 */
export const REFERENCE_FIELDS = ['phone_number_id', 'folder_id', 'label_ids', 'tool_ids', 'knowledgebase_id', 'tools'] as const;

/** The stored configuration with its unsent references to missing things dropped. */
export async function dropStaleReferences(store: Store, accountId: number, stored: AssistantConfig, sent: ReadonlySet<string>): Promise<AssistantConfig> {
  const refs = referencedIds(stored);
  const missing = async (table: Parameters<typeof ownedIds>[1], ids: Set<number>) => {
    const owned = await ownedIds(store, table, accountId, [...ids]);
    return new Set([...ids].filter((id) => !owned.has(id)));
  };
  const gone: GoneIds = {
    phoneNumbers: await missing('phone_numbers', refs.phoneNumbers),
    folders: await missing('folders', refs.folders),
    labels: await missing('labels', refs.labels),
    tools: await missing('tools', refs.tools),
    knowledgeBases: await missing('knowledge_bases', refs.knowledgeBases),
    assistants: await missing('assistants', refs.assistants),
  };
  const cleaned = withoutGone(stored, gone);
  if (cleaned === stored) return stored;
  // Only the fields the client left out take the cleaned value.
  const out: AssistantConfig = { ...stored };
  for (const f of REFERENCE_FIELDS) if (!sent.has(f)) (out as Record<string, unknown>)[f] = cleaned[f];
  return out;
}

/**
 * A stored voice that has left the catalog (or is no longer visible to the account), when the
 * client did not send voice_id: the first catalog voice for the assistant's mode and language
 * takes its place (any language when none speaks it). Undefined when the voice is fine or no
 * voice can take its place.
 */
export function replacementVoice(catalog: Catalog, accountId: number, config: Pick<AssistantConfig, 'voice_id' | 'mode' | 'language_id'>): number | undefined {
  if (catalog.voice(config.voice_id, accountId)) return undefined;
  const same = catalog.voices({ mode: config.mode, language_id: config.language_id, accountId });
  const any = same.length > 0 ? same : catalog.voices({ mode: config.mode, accountId });
  return any[0]?.id;
}
