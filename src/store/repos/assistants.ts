import crypto from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Store } from '../db.ts';
import type { AssistantsTable } from '../schema.ts';
import type { Clock } from '../../util/clock.ts';
import { flag, fromJson, toJson } from '../json.ts';
import { stopCampaignsUsing, unbindAssistants } from '../references.ts';
import type { AssistantConfig } from '../../assistants/config.ts';

export type { AssistantConfig } from '../../assistants/config.ts';

export interface AssistantRecord {
  id: number;
  uuid: string;
  accountId: number;
  name: string;
  type: 'inbound' | 'outbound';
  mode: 'pipeline' | 'multimodal' | 'dualplex';
  status: string;
  phoneNumberId: number | null;
  folderId: number | null;
  inboundWebhookEnabled: boolean;
  config: AssistantConfig;
  createdAt: number;
  updatedAt: number;
}

/** New assistants start inactive (the spec's only shown status). */
const INITIAL_STATUS = 'inactive';

function toRecord(row: Selectable<AssistantsTable>): AssistantRecord {
  return {
    id: row.id,
    uuid: row.uuid,
    accountId: row.account_id,
    name: row.name,
    type: row.type as AssistantRecord['type'],
    mode: row.mode as AssistantRecord['mode'],
    status: row.status,
    phoneNumberId: row.phone_number_id,
    folderId: row.folder_id,
    inboundWebhookEnabled: row.inbound_webhook_enabled === 1,
    config: fromJson(row.config, {} as AssistantConfig),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Assistants. The columns name/type/mode/phone_number_id/folder_id mirror the config so SIP
 * routing and lists can query them; `config` holds every API field. Inputs are already
 * validated (src/assistants/service.ts): the repository does no checking of its own.
 */
export class AssistantsRepo {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  async create(accountId: number, input: AssistantConfig): Promise<AssistantRecord> {
    const now = this.clock.now();
    const row = await this.store.db
      .insertInto('assistants')
      .values({
        uuid: crypto.randomUUID(),
        account_id: accountId,
        ...columns(input),
        status: INITIAL_STATUS,
        inbound_webhook_enabled: 1,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  async get(accountId: number, id: number): Promise<AssistantRecord | undefined> {
    const row = await this.store.db
      .selectFrom('assistants')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async getByUuid(uuid: string): Promise<AssistantRecord | undefined> {
    const row = await this.store.db.selectFrom('assistants').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row && toRecord(row);
  }

  /** No account filter: for internal callers (SIP routing) that already know the id is theirs. */
  async getById(id: number): Promise<AssistantRecord | undefined> {
    const row = await this.store.db.selectFrom('assistants').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async list(accountId: number): Promise<AssistantRecord[]> {
    const rows = await this.store.db
      .selectFrom('assistants')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /** Replaces the whole configuration; undefined when the assistant is not the account's. */
  async update(accountId: number, id: number, config: AssistantConfig): Promise<AssistantRecord | undefined> {
    const row = await this.store.db
      .updateTable('assistants')
      .set({ ...columns(config), updated_at: this.clock.now() })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * Deletes the assistant and its call history, in one transaction with what that changes
   * elsewhere: other assistants' transfer tools to it are removed, WhatsApp senders it answered
   * for are left without an assistant, campaigns in progress calling through it are stopped.
   * Undefined when it is not the account's; else the campaigns it stopped and the stored files
   * (recordings, tapes: keys under the data dir and in the bucket) of the calls deleted with it.
   */
  async delete(accountId: number, id: number): Promise<{ stoppedCampaignIds: number[]; callFiles: string[] } | undefined> {
    return this.store.db.transaction().execute(async (trx) => {
      const res = await trx.deleteFrom('assistants').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) return undefined;
      const now = this.clock.now();
      const calls = await trx.selectFrom('calls').select(['recording_path', 'details']).where('assistant_id', '=', id).where('account_id', '=', accountId).execute();
      const callFiles = calls.flatMap((c) => {
        const tape = fromJson<Record<string, unknown> | null>(c.details, null)?.tape;
        return [c.recording_path, typeof tape === 'string' ? tape : null].filter((f): f is string => typeof f === 'string' && f.length > 0);
      });
      await trx.deleteFrom('calls').where('assistant_id', '=', id).where('account_id', '=', accountId).execute();
      await unbindAssistants(trx, accountId, { assistants: new Set([id]) }, now);
      await trx.updateTable('whatsapp_senders').set({ assistant_id: null, updated_at: now }).where('account_id', '=', accountId).where('assistant_id', '=', id).execute();
      const stoppedCampaignIds = await stopCampaignsUsing(trx, accountId, { assistantIds: [id] }, now);
      return { stoppedCampaignIds, callFiles };
    });
  }

  /** The inbound assistant a dialled number rings (the rules keep it to at most one). */
  async findInboundByPhoneNumber(phoneNumberId: number): Promise<AssistantRecord | undefined> {
    const row = await this.store.db
      .selectFrom('assistants')
      .selectAll()
      .where('phone_number_id', '=', phoneNumberId)
      .where('type', '=', 'inbound')
      .orderBy('id')
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async setInboundWebhook(accountId: number, id: number, enabled: boolean): Promise<boolean> {
    const res = await this.store.db
      .updateTable('assistants')
      .set({ inbound_webhook_enabled: flag(enabled), updated_at: this.clock.now() })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }
}

function columns(config: AssistantConfig) {
  return {
    name: config.name,
    type: config.type,
    mode: config.mode,
    phone_number_id: config.phone_number_id,
    folder_id: config.folder_id,
    config: toJson(config),
  };
}
