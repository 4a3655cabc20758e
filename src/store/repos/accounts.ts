import crypto from 'node:crypto';
import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import type { SecretBox } from '../secrets.ts';
import { newWebhookSecret, rotate, signingSecrets, type SecretState } from '../../webhooks/secret-rotation.ts';

export interface Account {
  id: number;
  name: string;
  /** The current signing secret, in clear (it is sealed at rest). */
  webhookSecret: string;
  createdAt: number;
}

/** A sealed value (SecretBox.seal) as opposed to a secret an older build stored in clear. */
const SEALED = /^v1:/;

/** Keys look like `sb_live_<43 base64url chars>`: 256 random bits. The prefix is for display only. */
const KEY_PREFIX = 'sb_live_';

export function hashKey(key: string): string {
  return crypto.createHash('sha256').update(key, 'utf8').digest('hex');
}

export class AccountsRepo {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
  ) {}

  async create(name: string): Promise<Account> {
    const createdAt = this.clock.now();
    const webhookSecret = newWebhookSecret();
    const row = await this.store.db
      .insertInto('accounts')
      .values({ name, webhook_secret: this.secrets.seal(webhookSecret), created_at: createdAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: row.id, name, webhookSecret, createdAt };
  }

  async get(id: number): Promise<Account | undefined> {
    const row = await this.store.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, name: row.name, webhookSecret: this.reveal(row.webhook_secret), createdAt: row.created_at };
  }

  /** Every account, oldest first, without secrets (for the operator's `accounts list`). */
  async list(): Promise<Array<{ id: number; name: string; createdAt: number; activeKeys: number }>> {
    const rows = await this.store.db
      .selectFrom('accounts as a')
      .select((eb) => [
        'a.id',
        'a.name',
        'a.created_at',
        eb
          .selectFrom('api_keys as k')
          .select((k) => k.fn.countAll<number>().as('n'))
          .whereRef('k.account_id', '=', 'a.id')
          .where('k.revoked_at', 'is', null)
          .as('active_keys'),
      ])
      .orderBy('a.id')
      .execute();
    return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at, activeKeys: Number(r.active_keys ?? 0) }));
  }

  /** The account's secrets as the rotation core sees them; undefined when there is no such account. */
  async secretState(id: number): Promise<SecretState | undefined> {
    const row = await this.store.db
      .selectFrom('accounts')
      .select(['webhook_secret', 'webhook_secret_previous', 'webhook_secret_previous_until'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      current: this.reveal(row.webhook_secret),
      previous: row.webhook_secret_previous === null ? null : this.reveal(row.webhook_secret_previous),
      previousUntilMs: row.webhook_secret_previous_until,
    };
  }

  /** The secrets that sign the account's webhooks now: the current one, plus the previous during an overlap. */
  async signingSecrets(id: number): Promise<string[] | undefined> {
    const state = await this.secretState(id);
    return state && signingSecrets(state, this.clock.now());
  }

  /**
   * Makes a new signing secret current; the replaced one keeps signing for `overlapMs`. While an
   * earlier rotation still overlaps, throws RotationInProgressError unless `force` (which retires
   * that older secret). Read and write in one transaction, so two concurrent rotations cannot
   * both keep the same old secret.
   */
  async rotateWebhookSecret(id: number, overlapMs: number, force = false): Promise<SecretState | undefined> {
    return this.store.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('accounts')
        .select(['webhook_secret', 'webhook_secret_previous', 'webhook_secret_previous_until'])
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row) return undefined;
      const now = this.clock.now();
      const state: SecretState = {
        current: this.reveal(row.webhook_secret),
        previous: row.webhook_secret_previous === null ? null : this.reveal(row.webhook_secret_previous),
        previousUntilMs: row.webhook_secret_previous_until,
      };
      const next = rotate(state, newWebhookSecret(), now, overlapMs, force);
      await trx
        .updateTable('accounts')
        .set({
          webhook_secret: this.secrets.seal(next.current),
          webhook_secret_previous: next.previous === null ? null : this.secrets.seal(next.previous),
          webhook_secret_previous_until: next.previousUntilMs,
        })
        .where('id', '=', id)
        .execute();
      return next;
    });
  }

  /** Seals the signing secrets an older build stored in clear; returns how many it sealed. */
  async sealPlainWebhookSecrets(): Promise<number> {
    const rows = await this.store.db.selectFrom('accounts').select(['id', 'webhook_secret']).execute();
    let sealed = 0;
    for (const r of rows) {
      if (SEALED.test(r.webhook_secret)) continue;
      await this.store.db.updateTable('accounts').set({ webhook_secret: this.secrets.seal(r.webhook_secret) }).where('id', '=', r.id).execute();
      sealed++;
    }
    return sealed;
  }

  /** A stored secret in clear: sealed ones are opened, a plain one (older builds) is read as it is. */
  private reveal(stored: string): string {
    return SEALED.test(stored) ? this.secrets.open(stored) : stored;
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
