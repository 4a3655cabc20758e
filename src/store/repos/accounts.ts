import crypto from 'node:crypto';
import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';

export interface Account {
  id: number;
  name: string;
  webhookSecret: string;
  createdAt: number;
}

/** Keys look like `sb_live_<43 base64url chars>`: 256 random bits. The prefix is for display only. */
const KEY_PREFIX = 'sb_live_';

export function hashKey(key: string): string {
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}

export class AccountsRepo {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  async create(name: string): Promise<Account> {
    const createdAt = this.clock.now();
    const webhookSecret = `whsec_${crypto.randomBytes(24).toString('base64')}`;
    const row = await this.store.db
      .insertInto('accounts')
      .values({ name, webhook_secret: webhookSecret, created_at: createdAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: row.id, name, webhookSecret, createdAt };
  }

  async get(id: number): Promise<Account | undefined> {
    const row = await this.store.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, name: row.name, webhookSecret: row.webhook_secret, createdAt: row.created_at };
  }

  /** Creates a key and returns it in clear: the only time it is ever visible. */
  async createKey(accountId: number): Promise<string> {
    const key = KEY_PREFIX + crypto.randomBytes(32).toString('base64url');
    await this.store.db
      .insertInto('api_keys')
      .values({
        account_id: accountId,
        prefix: key.slice(0, KEY_PREFIX.length + 6),
        hash: hashKey(key),
        created_at: this.clock.now(),
        revoked_at: null,
      })
      .execute();
    return key;
  }

  async revokeKey(key: string): Promise<boolean> {
    const res = await this.store.db
      .updateTable('api_keys')
      .set({ revoked_at: this.clock.now() })
      .where('hash', '=', hashKey(key))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /**
   * Finds the account of a key. The lookup is by SHA-256 hash through a unique index, so the
   * time taken does not depend on how much of a guessed key is right; no secret is compared.
   */
  async accountForKey(key: string): Promise<number | undefined> {
    const row = await this.store.db
      .selectFrom('api_keys')
      .select(['account_id'])
      .where('hash', '=', hashKey(key))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row?.account_id;
  }
}
