import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.ts';
import { fromJson, toJson } from './json.ts';
import { withoutGone, type GoneIds } from '../assistants/references.ts';
import type { AssistantConfig } from '../assistants/config.ts';

/**
 * What a delete does to the rows that point at what it deletes, run inside the deleting
 * transaction (docs/API.md, "Deleting things"): assistants lose the reference (their stored
 * configuration and its mirrored columns alike), campaigns in progress that can no longer run
 * are stopped. Either the delete and all of this happen, or none of it.
 */
type Db = Kysely<Database> | Transaction<Database>;

/** Rewrites every assistant of the account that references something in `gone`; returns their ids. */
export async function unbindAssistants(db: Db, accountId: number, gone: GoneIds, nowMs: number): Promise<number[]> {
  const rows = await db.selectFrom('assistants').select(['id', 'config']).where('account_id', '=', accountId).execute();
  const changed: number[] = [];
  for (const row of rows) {
    const config = fromJson(row.config, {} as AssistantConfig);
    const next = withoutGone(config, gone);
    if (next === config) continue;
    await db
      .updateTable('assistants')
      .set({ config: toJson(next), phone_number_id: next.phone_number_id ?? null, folder_id: next.folder_id ?? null, updated_at: nowMs })
      .where('id', '=', row.id)
      .execute();
    changed.push(row.id);
  }
  // The mirrored columns, also where the configuration had drifted from them.
  if (gone.phoneNumbers?.size) {
    await db.updateTable('assistants').set({ phone_number_id: null }).where('account_id', '=', accountId).where('phone_number_id', 'in', [...gone.phoneNumbers]).execute();
  }
  if (gone.folders?.size) {
    await db.updateTable('assistants').set({ folder_id: null }).where('account_id', '=', accountId).where('folder_id', 'in', [...gone.folders]).execute();
  }
  return changed;
}

/**
 * Stops the account's campaigns in progress that call from one of `phoneNumberIds` or through one
 * of `assistantIds` (they cannot place another call); returns their ids, for the dialer to be
 * told once the transaction has committed. Drafts and stopped campaigns keep their status: a
 * start answers 422 while their number or assistant is missing.
 */
export async function stopCampaignsUsing(
  db: Db,
  accountId: number,
  using: { phoneNumberIds?: readonly number[]; assistantIds?: readonly number[] },
  nowMs: number,
): Promise<number[]> {
  const phones = [...(using.phoneNumberIds ?? [])];
  const assistants = [...(using.assistantIds ?? [])];
  if (phones.length === 0 && assistants.length === 0) return [];
  const rows = await db
    .updateTable('campaigns')
    .set({ status: 'stopped', updated_at: nowMs })
    .where('account_id', '=', accountId)
    .where('status', '=', 'in-progress')
    .where((eb) =>
      eb.or([
        ...(phones.length > 0 ? [eb('phone_number_id', 'in', phones)] : []),
        ...(assistants.length > 0 ? [eb('assistant_id', 'in', assistants)] : []),
      ]),
    )
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}
