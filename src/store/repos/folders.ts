import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import { unbindAssistants } from '../references.ts';

export interface Named {
  id: number;
  accountId: number;
  name: string;
  createdAt: number;
}

/**
 * Folders and labels are the same shape (an account's named tag), so one class serves both
 * tables; FoldersRepo and LabelsRepo only fix the table name.
 */
export class NamedRepo {
  constructor(
    protected readonly store: Store,
    protected readonly clock: Clock,
    private readonly table: 'folders' | 'labels',
  ) {}

  async create(accountId: number, name: string): Promise<Named> {
    const createdAt = this.clock.now();
    const row = await this.store.db
      .insertInto(this.table)
      .values({ account_id: accountId, name, created_at: createdAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: row.id, accountId, name, createdAt };
  }

  async list(accountId: number): Promise<Named[]> {
    const rows = await this.store.db.selectFrom(this.table).selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    return rows.map(toNamed);
  }

  async get(accountId: number, id: number): Promise<Named | undefined> {
    const row = await this.store.db
      .selectFrom(this.table)
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toNamed(row);
  }

  /**
   * Deletes the account's row and, in the same transaction, takes it off every assistant (a
   * folder's assistants become uncategorized, a label leaves their label_ids); false when there
   * is none (missing or another account's).
   */
  async delete(accountId: number, id: number): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      const res = await trx.deleteFrom(this.table).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) return false;
      await unbindAssistants(trx, accountId, this.table === 'folders' ? { folders: new Set([id]) } : { labels: new Set([id]) }, this.clock.now());
      return true;
    });
  }
}

function toNamed(row: { id: number; account_id: number; name: string; created_at: number }): Named {
  return { id: row.id, accountId: row.account_id, name: row.name, createdAt: row.created_at };
}

/** Assistant folders; deleting one leaves its assistants uncategorized. */
export class FoldersRepo extends NamedRepo {
  constructor(store: Store, clock: Clock) {
    super(store, clock, 'folders');
  }
}
