import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import type { SecretBox } from '../secrets.ts';
import { fromJson, toJson } from '../json.ts';
import { unbindAssistants } from '../references.ts';

export type ToolMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A custom mid-call tool: the assistant calls `endpoint` with the arguments the model chose. */
export interface Tool {
  id: number;
  accountId: number;
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
  endpoint: string;
  method: ToolMethod;
  /**
   * Sent with every call as given. They often hold credentials (an Authorization token): sealed
   * at rest with the data directory's key, shown masked to clients, never logged.
   */
  headers: Record<string, string>;
  timeoutMs: number;
  createdAt: number;
  updatedAt: number;
}

export type ToolInput = Pick<Tool, 'name' | 'description' | 'parameters' | 'endpoint' | 'method' | 'headers' | 'timeoutMs'>;

type Row = {
  id: number;
  account_id: number;
  name: string;
  description: string;
  parameters: string;
  endpoint: string;
  method: string;
  headers: string;
  timeout_ms: number;
  created_at: number;
  updated_at: number;
};

/** The `headers` column: the JSON object sealed whole (`v1:…`), or, in rows written before headers were sealed, the JSON itself. */
const SEALED = 'v1:';

export class ToolsRepo {
  constructor(private readonly store: Store, private readonly clock: Clock, private readonly secrets: SecretBox) {}

  /**
   * Seals the headers of rows stored in clear before headers were sealed; run once at start-up.
   * Such rows are read correctly either way; this takes the secrets out of the database file.
   */
  async sealPlainHeaders(): Promise<number> {
    const rows = await this.store.db.selectFrom('tools').select(['id', 'headers']).where('headers', 'not like', `${SEALED}%`).execute();
    for (const row of rows) {
      await this.store.db
        .updateTable('tools')
        .set({ headers: this.secrets.seal(toJson(fromJson(row.headers, {}))) })
        .where('id', '=', row.id)
        .where('headers', '=', row.headers)
        .execute();
    }
    return rows.length;
  }

  async create(accountId: number, input: ToolInput): Promise<Tool> {
    const now = this.clock.now();
    const row = await this.store.db
      .insertInto('tools')
      .values({ account_id: accountId, ...this.columns(input), created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.toTool(row);
  }

  async update(accountId: number, id: number, input: ToolInput): Promise<Tool | undefined> {
    const row = await this.store.db
      .updateTable('tools')
      .set({ ...this.columns(input), updated_at: this.clock.now() })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && this.toTool(row);
  }

  async get(accountId: number, id: number): Promise<Tool | undefined> {
    const row = await this.store.db.selectFrom('tools').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    return row && this.toTool(row);
  }

  async list(accountId: number): Promise<Tool[]> {
    const rows = await this.store.db.selectFrom('tools').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    return rows.map((r) => this.toTool(r));
  }

  /** The account's tools among `ids`, in the order asked; ids that are not the account's are skipped. */
  async getMany(accountId: number, ids: readonly number[]): Promise<Tool[]> {
    if (ids.length === 0) return [];
    const rows = await this.store.db
      .selectFrom('tools')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', 'in', [...new Set(ids)])
      .execute();
    const byId = new Map(rows.map((r) => [r.id, this.toTool(r)]));
    return [...new Set(ids)].flatMap((id) => byId.get(id) ?? []);
  }

  /** Deletes the tool and, in the same transaction, takes it out of every assistant's tool_ids. */
  async delete(accountId: number, id: number): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      const res = await trx.deleteFrom('tools').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
      if (Number(res.numDeletedRows) === 0) return false;
      await unbindAssistants(trx, accountId, { tools: new Set([id]) }, this.clock.now());
      return true;
    });
  }

  private columns(input: ToolInput) {
    return {
      name: input.name,
      description: input.description,
      parameters: toJson(input.parameters),
      endpoint: input.endpoint,
      method: input.method,
      headers: this.secrets.seal(toJson(input.headers)),
      timeout_ms: input.timeoutMs,
    };
  }

  private toTool(row: Row): Tool {
    return {
      id: row.id,
      accountId: row.account_id,
      name: row.name,
      description: row.description,
      parameters: fromJson(row.parameters, {}),
      endpoint: row.endpoint,
      method: row.method as ToolMethod,
      headers: row.headers.startsWith(SEALED) ? (JSON.parse(this.secrets.open(row.headers)) as Record<string, string>) : fromJson(row.headers, {}),
      timeoutMs: row.timeout_ms,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}
