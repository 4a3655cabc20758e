import type { Store } from '../db.ts';
import type { LeaseRecord } from '../../cluster/lease-core.ts';

/**
 * Named leases (table `leases`, migration 009): one statement each, so two nodes racing for a
 * lease cannot both win. The take is an upsert with a conditional update and RETURNING, which
 * SQLite (3.35 and later) and PostgreSQL both accept: the row is inserted when absent, and
 * overwritten only when this node holds it already or its expiry has passed.
 */
export class LeasesRepo {
  constructor(private readonly store: Store) {}

  /** Takes or renews `name` for `holder` until `nowMs + ttlMs`; false when another node holds it. */
  async take(name: string, holder: string, nowMs: number, ttlMs: number): Promise<boolean> {
    const row = await this.store.db
      .insertInto('leases')
      .values({ name, holder, expires_at: nowMs + ttlMs })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet((eb) => ({ holder: eb.ref('excluded.holder'), expires_at: eb.ref('excluded.expires_at') }))
          .where((eb) => eb.or([eb('leases.holder', '=', holder), eb('leases.expires_at', '<=', nowMs)])),
      )
      .returning('holder')
      .executeTakeFirst();
    return row?.holder === holder;
  }

  /** Gives the lease up if `holder` still has it (another node may take it at once). */
  async release(name: string, holder: string): Promise<boolean> {
    const res = await this.store.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async get(name: string): Promise<LeaseRecord | undefined> {
    const row = await this.store.db.selectFrom('leases').select(['holder', 'expires_at']).where('name', '=', name).executeTakeFirst();
    return row && { holder: row.holder, expiresAtMs: Number(row.expires_at) };
  }
}
