import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import { liveFeedOf, type AppContext } from '../../context.ts';
import type { LiveEvent } from '../../call/live/live-feed.ts';
import { recordTranscript } from '../../call/wiring/finish.ts';
import { AppError, ConflictError, NotFoundError } from '../../util/errors.ts';
import { presentCall } from './calls.ts';

/**
 * Live calls over the API: a feed of the account's calls as they happen (server-sent events,
 * read with the key in the Authorization header; the console's live view uses it, and so can
 * customers' own dashboards), and hanging up a call in progress.
 *
 * The feed sends, on connect, every call of the account this node holds now (`call` events),
 * then `call` on each state change (started, answered, ended, record finished), `transcript`
 * with each new transcript line and `timeline` with each engine event. A comment line every
 * KEEPALIVE_MS keeps proxies from closing an idle stream. Limits: MAX_STREAMS_PER_ACCOUNT and
 * MAX_STREAMS open at once (429 beyond), and a stream whose reader falls MAX_BUFFERED_BYTES
 * behind is closed (the client reconnects and starts from a fresh snapshot).
 */

export const MAX_STREAMS_PER_ACCOUNT = 10;
export const MAX_STREAMS = 1000;
export const MAX_BUFFERED_BYTES = 1024 * 1024;
export const KEEPALIVE_MS = 15_000;
/** How long a hang-up waits for the BYE and the record before answering anyway. */
const HANGUP_WAIT_MS = 2_000;

const eventsQuery = z.object({ call_id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional().meta({ description: 'Follow this call only' }) });

export function registerCallLiveRoutes(api: Api, ctx: AppContext): void {
  const tags = ['Calls'];
  const streams = new Set<ServerResponse>();
  api.onPreClose(() => {
    for (const res of streams) res.end();
  });

  api.route({
    method: 'GET',
    url: '/user/calls/events',
    summary:
      'Live feed of the account’s calls (text/event-stream): `call` events carry the call record as GET /user/calls/{id} shows it, on connect for every live call and on every state change; `transcript` events `{call_id, uuid, entry}` a new transcript line; `timeline` events `{call_id, uuid, event}` an engine event (VAD, end of turn, interruption, filler, DTMF; times in ms from the answer). Send the key in the Authorization header. At most 10 open streams per account.',
    tags,
    query: eventsQuery,
    produces: 'text/event-stream',
    errors: { 429: 'Too many open event streams for this account (or on this node)' },
    async handler({ query, accountId, request, reply }) {
      const feed = liveFeedOf(ctx);
      if (feed.subscribers(accountId) >= MAX_STREAMS_PER_ACCOUNT || streams.size >= MAX_STREAMS) {
        throw new AppError('Too many open event streams; close one and try again.', 429, 'TOO_MANY_STREAMS', true);
      }
      const only = query.call_id;
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store',
        Connection: 'keep-alive',
        'X-Accel-Buffering': 'no',
        'X-Request-Id': request.id,
      });
      streams.add(res);
      let closed = false;
      const write = (text: string) => {
        if (closed) return;
        if (res.writableLength > MAX_BUFFERED_BYTES) return close();
        res.write(text);
      };
      const send = (event: string, data: unknown) => write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      // `call` events read the record; one at a time keeps them in order with the lines between.
      let chain = Promise.resolve();
      const sendCall = (callId: number) => {
        chain = chain.then(async () => {
          const call = await ctx.repos.calls.get(accountId, callId).catch(() => undefined);
          if (call) send('call', presentCall(call, ctx.config.publicUrl));
        });
      };
      const onEvent = (e: LiveEvent) => {
        if (only !== undefined && e.callId !== only) return;
        if (e.kind === 'call') return sendCall(e.callId);
        chain = chain.then(() => {
          if (e.kind === 'transcript') send('transcript', { call_id: e.callId, uuid: e.uuid, entry: recordTranscript([e.entry])[0] });
          else send('timeline', { call_id: e.callId, uuid: e.uuid, event: e.event });
        });
      };
      const unsubscribe = feed.subscribe(accountId, onEvent);
      const keepalive = setInterval(() => write(': keep-alive\n\n'), KEEPALIVE_MS);
      keepalive.unref();
      function close() {
        if (closed) return;
        closed = true;
        unsubscribe();
        clearInterval(keepalive);
        streams.delete(res);
        res.end();
      }
      request.raw.on('close', close);
      res.on('close', close);
      res.on('error', close);
      write('retry: 3000\n\n');
      const snapshot = new Set<number>();
      for (const session of ctx.liveCalls?.list() ?? []) {
        if (session.accountId === accountId && (only === undefined || session.recordId === only)) snapshot.add(session.recordId);
      }
      // Several nodes (Redis): the calls the others carry are in the shared store.
      if (ctx.cluster?.shared) {
        const elsewhere = await ctx.repos.calls.list(accountId, { limit: 100, statuses: ['queued', 'ringing', 'in-progress'] }).catch(() => []);
        for (const c of elsewhere) if (c.endAt === null && (only === undefined || c.id === only)) snapshot.add(c.id);
      }
      for (const id of snapshot) sendCall(id);
    },
  });

  api.route({
    method: 'POST',
    url: '/user/calls/:id/hangup',
    summary: 'Hang up a call in progress (ringing or answered); its record ends with end_cause `local-hangup`',
    tags,
    params: idParams,
    response: z.object({ message: z.string(), data: z.object({ id: z.int(), uuid: z.string() }) }),
    errors: { 409: 'The call is not in progress', 503: 'The node holding the call cannot be reached right now (retry)' },
    async handler({ params, accountId }) {
      const call = await ctx.repos.calls.get(accountId, params.id);
      if (!call) throw new NotFoundError('Call');
      const session = ctx.liveCalls?.get(call.uuid);
      if (!session) {
        // Held by another node of the service? It is told over the cluster's bus (docs/REDIS.md).
        const remote = call.endAt === null ? await ctx.liveCalls?.hangup?.(call.uuid) : undefined;
        if (remote === 'sent') return { message: 'Hang-up sent to the node holding the call.', data: { id: call.id, uuid: call.uuid } };
        throw new ConflictError('The call is not in progress.');
      }
      if (session.accountId !== accountId || session.state === 'ended') throw new ConflictError('The call is not in progress.');
      const closing = session.close('local-hangup');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closing, new Promise((r) => (timer = setTimeout(r, HANGUP_WAIT_MS)))]);
      clearTimeout(timer);
      return { message: 'Call hung up.', data: { id: call.id, uuid: call.uuid } };
    },
  });
}
