import crypto from 'node:crypto';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import { fromJson, toJson } from '../json.ts';
import type { CallsTable } from '../schema.ts';

export type CallDirection = 'inbound' | 'outbound' | 'web';

/** One call record; the SIP layer creates it at INVITE time and updates it as the call moves. */
export interface Call {
  id: number;
  uuid: string;
  accountId: number;
  assistantId: number | null;
  direction: CallDirection;
  sipTrunkId: number | null;
  phoneNumberId: number | null;
  fromNumber: string;
  toNumber: string;
  /** e.g. ringing, in-progress, completed, failed, no-answer, busy, canceled. */
  status: string;
  endCause: string | null;
  codec: string | null;
  sipCallId: string | null;
  inviteAt: number;
  answerAt: number | null;
  endAt: number | null;
  quality: Record<string, unknown> | null;
  transcript: unknown[] | null;
  evaluation: Record<string, unknown> | null;
  recordingPath: string | null;
  variables: Record<string, unknown> | null;
  campaignId: number | null;
  leadId: number | null;
  costMicros: number;
  details: Record<string, unknown> | null;
  /** The engine node that handled the call (SWITCHBOARD_NODE_ID); null on records from before it was kept. */
  nodeId: string | null;
}

export type NewCall = Pick<Call, 'accountId' | 'direction' | 'fromNumber' | 'toNumber'> &
  Partial<Omit<Call, 'id' | 'uuid' | 'accountId' | 'direction' | 'fromNumber' | 'toNumber'>>;

export type CallPatch = Partial<Omit<Call, 'id' | 'uuid' | 'accountId'>>;

const JSON_FIELDS = { quality: 'quality', transcript: 'transcript', evaluation: 'evaluation', variables: 'variables', details: 'details' } as const;
const PLAIN_FIELDS = {
  assistantId: 'assistant_id',
  direction: 'direction',
  sipTrunkId: 'sip_trunk_id',
  phoneNumberId: 'phone_number_id',
  fromNumber: 'from_number',
  toNumber: 'to_number',
  status: 'status',
  endCause: 'end_cause',
  codec: 'codec',
  sipCallId: 'sip_call_id',
  inviteAt: 'invite_at',
  answerAt: 'answer_at',
  endAt: 'end_at',
  recordingPath: 'recording_path',
  campaignId: 'campaign_id',
  leadId: 'lead_id',
  costMicros: 'cost_micros',
  nodeId: 'node_id',
} as const;

/** Maps a camelCase patch to column values (JSON fields serialized, null kept). */
function toColumns(patch: CallPatch): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(PLAIN_FIELDS)) {
    const v = (patch as Record<string, unknown>)[key];
    if (v !== undefined) out[column] = v;
  }
  for (const [key, column] of Object.entries(JSON_FIELDS)) {
    const v = (patch as Record<string, unknown>)[key];
    if (v !== undefined) out[column] = v === null ? null : toJson(v);
  }
  return out;
}

const MARK_ALIVE_CHUNK = 500;

export interface CallListFilter {
  limit: number;
  offset?: number;
  assistantId?: number;
  campaignId?: number;
  statuses?: readonly string[];
  direction?: CallDirection;
  startedFrom?: number;
  startedBefore?: number;
}

export class CallsRepo {
  /** `nodeId`: written on every call this node creates (docs/WORK-ONCE.md). */
  constructor(private readonly store: Store, private readonly clock: Clock, private readonly nodeId?: string) {}

  async create(input: NewCall): Promise<Call> {
    // toColumns only maps fields of the Call type, so the spread yields calls columns.
    const values = {
      uuid: crypto.randomUUID(),
      account_id: input.accountId,
      status: 'initiated',
      invite_at: this.clock.now(),
      cost_micros: 0,
      node_id: this.nodeId ?? null,
      ...toColumns(input),
    } as Insertable<CallsTable>;
    const row = await this.store.db.insertInto('calls').values(values).returningAll().executeTakeFirstOrThrow();
    return toCall(row);
  }

  async update(id: number, patch: CallPatch): Promise<Call | undefined> {
    const set = toColumns(patch);
    if (Object.keys(set).length === 0) return this.getById(id);
    const row = await this.store.db.updateTable('calls').set(set as Updateable<CallsTable>).where('id', '=', id).returningAll().executeTakeFirst();
    return row && toCall(row);
  }

  async get(accountId: number, id: number): Promise<Call | undefined> {
    const row = await this.store.db.selectFrom('calls').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    return row && toCall(row);
  }

  async getById(id: number): Promise<Call | undefined> {
    const row = await this.store.db.selectFrom('calls').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toCall(row);
  }

  async getByUuid(uuid: string): Promise<Call | undefined> {
    const row = await this.store.db.selectFrom('calls').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row && toCall(row);
  }

  /**
   * The heartbeat: stamps the records of calls still live here as alive at `at`, in one
   * statement per 500 calls (well under SQLite's bound-parameter limit). A record already ended
   * is left alone. Returns how many were stamped.
   */
  async markAlive(ids: readonly number[], at: number): Promise<number> {
    let stamped = 0;
    for (let i = 0; i < ids.length; i += MARK_ALIVE_CHUNK) {
      const res = await this.store.db
        .updateTable('calls')
        .set({ last_alive_at: at })
        .where('id', 'in', ids.slice(i, i + MARK_ALIVE_CHUNK))
        .where('end_at', 'is', null)
        .executeTakeFirst();
      stamped += Number(res.numUpdatedRows);
    }
    return stamped;
  }

  /** Newest first (by INVITE time, then id); `startedFrom` inclusive, `startedBefore` exclusive (ms). */
  async list(accountId: number, opts: CallListFilter): Promise<Call[]> {
    let q = this.store.db.selectFrom('calls').selectAll().where('account_id', '=', accountId);
    if (opts.assistantId !== undefined) q = q.where('assistant_id', '=', opts.assistantId);
    if (opts.campaignId !== undefined) q = q.where('campaign_id', '=', opts.campaignId);
    if (opts.statuses !== undefined && opts.statuses.length > 0) q = q.where('status', 'in', [...opts.statuses]);
    if (opts.direction !== undefined) q = q.where('direction', '=', opts.direction);
    if (opts.startedFrom !== undefined) q = q.where('invite_at', '>=', opts.startedFrom);
    if (opts.startedBefore !== undefined) q = q.where('invite_at', '<', opts.startedBefore);
    const rows = await q.orderBy('invite_at', 'desc').orderBy('id', 'desc').limit(opts.limit).offset(opts.offset ?? 0).execute();
    return rows.map(toCall);
  }
}

type Row = Selectable<CallsTable>;

function toCall(row: Row): Call {
  return {
    id: row.id,
    uuid: row.uuid,
    accountId: row.account_id,
    assistantId: row.assistant_id,
    direction: row.direction as CallDirection,
    sipTrunkId: row.sip_trunk_id,
    phoneNumberId: row.phone_number_id,
    fromNumber: row.from_number,
    toNumber: row.to_number,
    status: row.status,
    endCause: row.end_cause,
    codec: row.codec,
    sipCallId: row.sip_call_id,
    inviteAt: row.invite_at,
    answerAt: row.answer_at,
    endAt: row.end_at,
    quality: fromJson(row.quality, null),
    transcript: fromJson(row.transcript, null),
    evaluation: fromJson(row.evaluation, null),
    recordingPath: row.recording_path,
    variables: fromJson(row.variables, null),
    campaignId: row.campaign_id,
    leadId: row.lead_id,
    costMicros: row.cost_micros,
    details: fromJson(row.details, null),
    nodeId: row.node_id ?? null,
  };
}
