import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import type { Call } from '../../store/repos/calls.ts';
import { iso } from '../../store/json.ts';
import { toDollars } from '../../util/money.ts';
import { AppError, NotFoundError } from '../../util/errors.ts';
import { tapePathOf } from '../../call/call-record.ts';
import { recordingsOf, type RecordingRead } from '../../blobs/index.ts';
import { describeS3Error } from '../../blobs/s3-errors.ts';
import { contentRange } from '../../blobs/byte-range.ts';
import { timestamp, variablesView } from '../response-schemas.ts';
import type { OutboxRow } from '../../store/repos/outbox.ts';

/** Call records (read side). Placing a call (POST /user/calls) arrives with the SIP layer. */

/** Every status a call record can have. */
export const CALL_STATUSES = ['initiated', 'queued', 'ringing', 'in-progress', 'completed', 'busy', 'no-answer', 'declined', 'invalid-number', 'failed', 'canceled'] as const;

/** `2026-11-29` or `2026-11-29T10:00:00Z` (an offset is required on a date-time). */
const dateOrDateTime = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  assistant_id: z.coerce.number().int().positive().optional(),
  campaign_id: z.coerce.number().int().positive().optional(),
  status: z
    .string()
    .max(200)
    .transform((s) => s.split(',').map((x) => x.trim()))
    .pipe(z.array(z.enum(CALL_STATUSES)).min(1))
    .optional()
    .meta({ description: `One status or several, comma-separated (${CALL_STATUSES.join(', ')})` }),
  direction: z.enum(['inbound', 'outbound']).optional(),
  from: dateOrDateTime.optional().meta({ description: 'Calls started at or after this date (UTC midnight) or date-time' }),
  to: dateOrDateTime.optional().meta({ description: 'Calls started before this date-time, or on or before this date (the whole UTC day)' }),
});

const DAY_MS = 86_400_000;
const isDateOnly = (s: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(s);

/** The outbox rows of one call's events, as the owner may see them: no payloads, no URL secrets. */
export const callWebhookView = z.object({
  id: z.int(),
  event: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.int().min(0),
  last_response_code: z.int().nullable().meta({ description: 'The HTTP status of the last failed attempt, when it got one' }),
  last_error: z.string().nullable().meta({ description: 'Why the last attempt failed (query strings removed)' }),
  destination: z.string().meta({ description: 'Scheme, host and path of the webhook URL (no credentials, no query)' }),
  created_at: timestamp,
  delivered_at: timestamp.nullable(),
  next_attempt_at: timestamp.nullable().meta({ description: 'When a pending delivery is tried next' }),
});

function destinationOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

export function presentCallWebhook(row: OutboxRow) {
  const code = /^HTTP (\d{3})\b/.exec(row.lastError ?? '');
  return {
    id: row.id,
    event: row.eventType,
    status: row.status,
    attempts: row.attempts,
    last_response_code: code ? Number(code[1]) : null,
    last_error: row.lastError === null ? null : row.lastError.replace(/\?\S*/g, '?…').slice(0, 300),
    destination: destinationOf(row.url),
    created_at: iso(row.createdAt),
    delivered_at: iso(row.deliveredAt),
    next_attempt_at: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
  };
}

/**
 * A file the call record names (its key: relative to the data directory, and in the bucket),
 * streamed through the engine whether it is still local or archived to the bucket, so the API
 * key keeps guarding it; one `Range` is honoured (206, or 416 past the end).
 */
async function sendStored(
  ctx: AppContext,
  reply: FastifyReply,
  key: string | null | undefined,
  range: string | undefined,
  what: string,
  contentType: string,
): Promise<FastifyReply> {
  let found: RecordingRead;
  try {
    found = key ? await recordingsOf(ctx).read(key, range) : { kind: 'missing' };
  } catch (err) {
    // The bucket is unreachable or refuses: say so (retryable) rather than a bare 500.
    ctx.logger.warn({ key, ...describeS3Error(err) }, 'stored recording could not be read');
    throw new AppError('The recording storage is unavailable right now; try again later.', 503, 'STORAGE_UNAVAILABLE', true);
  }
  if (found.kind === 'missing') throw new NotFoundError(what);
  reply.header('Accept-Ranges', 'bytes');
  if (found.kind === 'unsatisfiable') {
    reply.header('Content-Range', `bytes */${found.size}`);
    throw new AppError('The requested range is not satisfiable.', 416, 'RANGE_NOT_SATISFIABLE');
  }
  reply.header('Content-Type', contentType);
  if (found.range) {
    reply.code(206).header('Content-Range', contentRange(found.range, found.size)).header('Content-Length', found.range.end - found.range.start + 1);
  } else {
    reply.header('Content-Length', found.size);
  }
  return reply.send(found.body);
}

/** What presentCall builds. */
export const callView = z.object({
  id: z.int(),
  uuid: z.string(),
  direction: z.enum(['inbound', 'outbound', 'web']),
  status: z.string().meta({ description: 'queued, ringing, in-progress, completed, busy, no-answer, declined, invalid-number, failed, canceled' }),
  assistant_id: z.int().nullable(),
  phone_number_id: z.int().nullable(),
  sip_trunk_id: z.int().nullable(),
  campaign_id: z.int().nullable(),
  lead_id: z.int().nullable(),
  from_number: z.string(),
  to_number: z.string(),
  started_at: timestamp,
  answered_at: timestamp.nullable(),
  ended_at: timestamp.nullable(),
  duration_seconds: z.int().min(0).nullable().meta({ description: 'From answer to end' }),
  codec: z.string().nullable(),
  end_cause: z.string().nullable(),
  quality: z.record(z.string(), z.unknown()).nullable(),
  transcript: z.array(z.unknown()),
  evaluation: z.record(z.string(), z.unknown()).nullable(),
  variables: variablesView,
  recording_url: z.string().nullable(),
  tape_url: z.string().nullable(),
  cost: z.number().meta({ description: 'Dollars charged for the call' }),
  node_id: z.string().nullable().meta({ description: 'The engine node that handled the call (SWITCHBOARD_NODE_ID); null on records from before nodes were recorded' }),
});

export function presentCall(c: Call, publicUrl: string) {
  const durationMs = c.answerAt !== null && c.endAt !== null ? Math.max(0, c.endAt - c.answerAt) : null;
  return {
    id: c.id,
    uuid: c.uuid,
    direction: c.direction,
    status: c.status,
    assistant_id: c.assistantId,
    phone_number_id: c.phoneNumberId,
    sip_trunk_id: c.sipTrunkId,
    campaign_id: c.campaignId,
    lead_id: c.leadId,
    from_number: c.fromNumber,
    to_number: c.toNumber,
    started_at: iso(c.inviteAt),
    answered_at: iso(c.answerAt),
    ended_at: iso(c.endAt),
    duration_seconds: durationMs === null ? null : Math.round(durationMs / 1000),
    codec: c.codec,
    end_cause: c.endCause,
    quality: c.quality,
    transcript: c.transcript ?? [],
    evaluation: c.evaluation,
    variables: c.variables,
    recording_url: c.recordingPath ? `${publicUrl}/api/user/calls/${c.id}/recording` : null,
    tape_url: tapePathOf(c) ? `${publicUrl}/api/user/calls/${c.id}/tape` : null,
    cost: toDollars(c.costMicros),
    node_id: c.nodeId,
  };
}

export function registerCallRoutes(api: Api, ctx: AppContext): void {
  const tags = ['Calls'];
  api.route({
    method: 'GET',
    url: '/user/calls',
    summary: 'List calls, newest first; filter by assistant, campaign, status, direction and start date',
    tags,
    query: listQuery,
    response: z.array(callView),
    async handler({ query, accountId }) {
      const calls = await ctx.repos.calls.list(accountId, {
        limit: query.limit,
        offset: query.offset,
        assistantId: query.assistant_id,
        campaignId: query.campaign_id,
        statuses: query.status,
        direction: query.direction,
        startedFrom: query.from === undefined ? undefined : Date.parse(query.from),
        startedBefore: query.to === undefined ? undefined : Date.parse(query.to) + (isDateOnly(query.to) ? DAY_MS : 0),
      });
      return calls.map((c) => presentCall(c, ctx.config.publicUrl));
    },
  });
  api.route({
    method: 'GET',
    url: '/user/calls/:id',
    summary: 'Get a call with timings, quality, transcript and recording URL',
    tags,
    params: idParams,
    response: callView,
    async handler({ params, accountId }) {
      const call = await ctx.repos.calls.get(accountId, params.id);
      if (!call) throw new NotFoundError('Call');
      return presentCall(call, ctx.config.publicUrl);
    },
  });
  api.route({
    method: 'GET',
    url: '/user/calls/:id/recording',
    summary: 'Download the call recording (WAV)',
    tags,
    params: idParams,
    produces: 'audio/wav',
    ranges: true,
    errors: {
      416: 'The Range header asks for bytes past the end of the file (Content-Range names its size); one `bytes=` range is honoured with 206',
      503: 'The file is archived to object storage, which cannot be reached right now',
    },
    async handler({ params, accountId, reply, request }) {
      const call = await ctx.repos.calls.get(accountId, params.id);
      // Stored paths are keys relative to the data directory; nothing outside it is ever served.
      return sendStored(ctx, reply, call?.recordingPath, request.headers.range, 'Recording', 'audio/wav');
    },
  });
  api.route({
    method: 'GET',
    url: '/user/calls/:id/tape',
    summary: 'Download the call tape (the inbound RTP with arrival times, DTMF and call events; docs/CALL-TAPE.md) for `switchboard replay --tape`',
    tags,
    params: idParams,
    response: z.record(z.string(), z.unknown()).meta({ description: 'The call tape (docs/CALL-TAPE.md)' }),
    ranges: true,
    errors: {
      416: 'The Range header asks for bytes past the end of the file (Content-Range names its size); one `bytes=` range is honoured with 206',
      503: 'The file is archived to object storage, which cannot be reached right now',
    },
    async handler({ params, accountId, reply, request }) {
      const call = await ctx.repos.calls.get(accountId, params.id);
      return sendStored(ctx, reply, call ? tapePathOf(call) : undefined, request.headers.range, 'Call tape', 'application/json');
    },
  });
  api.route({
    method: 'GET',
    url: '/user/calls/:id/webhooks',
    summary: "The call's webhook deliveries (event, attempts, status, last response code), oldest first",
    tags,
    params: idParams,
    response: z.array(callWebhookView),
    async handler({ params, accountId }) {
      const call = await ctx.repos.calls.get(accountId, params.id);
      if (!call) throw new NotFoundError('Call');
      const rows = await ctx.repos.outbox.listForCall(accountId, call.uuid);
      return rows.map(presentCallWebhook);
    },
  });
}
