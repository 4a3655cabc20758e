import type { AssistantConfig } from './config.ts';
import type { StoredTool } from './tools.ts';

/**
 * What an assistant's configuration points at, and what becomes of those pointers when the thing
 * pointed at is deleted (docs/API.md, "Deleting things"). Pure: the store layer (src/store/
 * references.ts) applies it to every assistant of the account inside the deleting transaction,
 * and a PUT applies it to references it did not send, so no assistant is ever left pointing at
 * something that is gone, and no PUT fails over a reference the client did not send.
 *
 * - phone number: `phone_number_id` becomes null; a warm transfer tool calling out from that
 *   number is removed (it cannot place its call);
 * - folder: `folder_id` becomes null;
 * - label, custom tool: its id leaves `label_ids` / `tool_ids`;
 * - knowledge base: `knowledgebase_id` becomes null;
 * - assistant: an assistant transfer tool to it is removed.
 */
export interface GoneIds {
  phoneNumbers?: ReadonlySet<number>;
  folders?: ReadonlySet<number>;
  labels?: ReadonlySet<number>;
  tools?: ReadonlySet<number>;
  knowledgeBases?: ReadonlySet<number>;
  assistants?: ReadonlySet<number>;
}

type Refs = Pick<AssistantConfig, 'phone_number_id' | 'folder_id' | 'label_ids' | 'tool_ids' | 'knowledgebase_id'> & { tools: StoredTool[] };

/** Every id the configuration references, by kind. */
export function referencedIds(config: Refs): Required<{ [K in keyof GoneIds]: Set<number> }> {
  const ids = {
    phoneNumbers: new Set<number>(),
    folders: new Set<number>(),
    labels: new Set(config.label_ids ?? []),
    tools: new Set(config.tool_ids ?? []),
    knowledgeBases: new Set<number>(),
    assistants: new Set<number>(),
  };
  if (config.phone_number_id != null) ids.phoneNumbers.add(config.phone_number_id);
  if (config.folder_id != null) ids.folders.add(config.folder_id);
  if (config.knowledgebase_id != null) ids.knowledgeBases.add(config.knowledgebase_id);
  for (const t of config.tools ?? []) {
    if (t.type === 'warm_call_transfer') ids.phoneNumbers.add(t.data.outbound_phone_id);
    if (t.type === 'assistant_transfer') ids.assistants.add(t.data.assistant_id);
  }
  return ids;
}

/** The tool still works without what is gone. */
function toolSurvives(t: StoredTool, gone: GoneIds): boolean {
  if (t.type === 'warm_call_transfer') return !gone.phoneNumbers?.has(t.data.outbound_phone_id);
  if (t.type === 'assistant_transfer') return !gone.assistants?.has(t.data.assistant_id);
  return true;
}

/**
 * The configuration without its references to what is gone; the same object when nothing
 * changes (so a caller writes only the assistants that did change).
 */
export function withoutGone<C extends Refs>(config: C, gone: GoneIds): C {
  const next: C = { ...config };
  let changed = false;
  const clear = <K extends 'phone_number_id' | 'folder_id' | 'knowledgebase_id'>(key: K, set: ReadonlySet<number> | undefined) => {
    const v = config[key];
    if (v != null && set?.has(v as number)) {
      (next as Refs)[key] = null;
      changed = true;
    }
  };
  clear('phone_number_id', gone.phoneNumbers);
  clear('folder_id', gone.folders);
  clear('knowledgebase_id', gone.knowledgeBases);
  const filterIds = (key: 'label_ids' | 'tool_ids', set: ReadonlySet<number> | undefined) => {
    const list = config[key] ?? [];
    const kept = list.filter((id) => !set?.has(id));
    if (kept.length !== list.length) {
      (next as Refs)[key] = kept;
      changed = true;
    }
  };
  filterIds('label_ids', gone.labels);
  filterIds('tool_ids', gone.tools);
  const tools = config.tools ?? [];
  const keptTools = tools.filter((t) => toolSurvives(t, gone));
  if (keptTools.length !== tools.length) {
    next.tools = keptTools;
    changed = true;
  }
  return changed ? next : config;
}
