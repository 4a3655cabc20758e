import type { Store } from './db.ts';
import type { Database } from './schema.ts';

type Owned = {
  [K in keyof Database]: Database[K] extends { account_id: number } ? K : never;
}[keyof Database];

/** The subset of `ids` that exist in `table` and belong to `accountId`. */
export async function ownedIds(store: Store, table: Owned, accountId: number, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await store.db
    .selectFrom(table)
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Set(rows.map((r) => r.id as number));
}

export async function owns(store: Store, table: Owned, accountId: number, id: number): Promise<boolean> {
  return (await ownedIds(store, table, accountId, [id])).has(id);
}
