/**
 * An assistant's `status`, computed whenever it is read so it cannot drift from what it
 * depends on: `active` when it can take calls or chats now, `inactive` otherwise.
 *
 * Active means both:
 * - bound to a way in or out: a phone number (`phone_number_id`), a campaign in progress, or an
 *   online WhatsApp sender answering with it;
 * - every provider its mode uses is configured in this process (no provider warning).
 *
 * Binding or unbinding a number, deleting the number, starting or stopping a campaign, pointing a
 * sender at it or taking the sender offline, and the keys the process started with change the
 * answer on the next read; nothing has to remember to update a stored column.
 */
import type { Catalog } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../providers/status.ts';
import type { Store } from '../store/index.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import { providerWarnings } from './provider-warnings.ts';

export type AssistantStatus = 'active' | 'inactive';

export interface StatusDeps {
  store: Store;
  catalog: Catalog;
  providers: ProviderConfig;
}

/** Ids among `ids` (all of one account) used by a running campaign or an online WhatsApp sender. */
async function boundElsewhere(store: Store, accountId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const [campaigns, senders] = await Promise.all([
    store.db
      .selectFrom('campaigns')
      .select('assistant_id')
      .where('account_id', '=', accountId)
      .where('status', '=', 'in-progress')
      .where('assistant_id', 'in', ids)
      .execute(),
    store.db
      .selectFrom('whatsapp_senders')
      .select('assistant_id')
      .where('account_id', '=', accountId)
      .where('status', '=', 'online')
      .where('assistant_id', 'in', ids)
      .execute(),
  ]);
  const out = new Set<number>();
  for (const r of [...campaigns, ...senders]) if (r.assistant_id !== null) out.add(r.assistant_id);
  return out;
}

/** The status of each of one account's assistants, by id. */
export async function assistantStatuses(deps: StatusDeps, accountId: number, assistants: readonly AssistantRecord[]): Promise<Map<number, AssistantStatus>> {
  // SQLite caps bound parameters; an account's assistants are read in slices.
  const bound = new Set<number>();
  const ids = assistants.map((a) => a.id);
  for (let i = 0; i < ids.length; i += 500) for (const id of await boundElsewhere(deps.store, accountId, ids.slice(i, i + 500))) bound.add(id);
  const out = new Map<number, AssistantStatus>();
  for (const a of assistants) {
    const reachable = a.phoneNumberId !== null || bound.has(a.id);
    const ready = reachable && providerWarnings(a.config, deps.catalog, deps.providers).length === 0;
    out.set(a.id, ready ? 'active' : 'inactive');
  }
  return out;
}

export async function assistantStatus(deps: StatusDeps, a: AssistantRecord): Promise<AssistantStatus> {
  return (await assistantStatuses(deps, a.accountId, [a])).get(a.id) ?? 'inactive';
}
