/**
 * Post-call work for the calls the runner did not finish itself: calls that ended without
 * reaching an engine (no answer, busy, cancelled while ringing: their webhook and zero-cost
 * billing are still owed), calls whose runner died with the process, and finishes that failed a
 * step. The store is the truth (the FINISH_MARKER on each record), so a restart loses nothing;
 * finishCall is idempotent, so a call finished twice costs nothing extra.
 *
 * At start-up, `closeOrphans` also ends the records of calls that were live when the process
 * stopped: nothing in this process can still be carrying them. An answered call ends at its
 * last heartbeat (call-heartbeat.ts: at most one period before the process died), or at its
 * answer if none came, and is billed by that length like any call; one never answered ends at
 * its INVITE. The end cause is `engine-restart`.
 *
 * Several nodes on one database (docs/WORK-ONCE.md): `closeOrphans` closes only the records this
 * node carried (`calls.node_id`, or none written by an older build); the timer's sweep runs only
 * on the node holding the sweep lease, and also closes the records of calls whose node died
 * (no heartbeat for `staleAfterMs`), whichever node carried them.
 */
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Store } from '../../store/db.ts';
import type { AssistantsRepo } from '../../store/repos/assistants.ts';
import type { Call } from '../../store/repos/calls.ts';
import type { Timer } from '../../util/clock.ts';
import type { EndCause } from '../call-session.ts';
import { FAILURE_KINDS } from '../failures.ts';
import type { PostCallDeps } from '../post-call/index.ts';
import { FINISH_MARKER, finishAndMark } from './finish.ts';
import { greatest, jsonField } from '../../store/dialect.ts';

export const ORPHAN_END_CAUSE = 'engine-restart';

/**
 * End causes a CallSession writes. Refused INVITEs (insufficient-balance, call limits) have
 * their own causes and never had a conversation, a cost or a webhook: the sweep skips them.
 */
const SESSION_CAUSES: readonly (EndCause | typeof ORPHAN_END_CAUSE)[] = [
  'remote-hangup', 'local-hangup', 'max-duration', 'rtp-timeout', 'session-expired', 'ack-timeout', 'cancelled',
  'no-answer', 'busy', 'declined', 'invalid-number', 'failed', 'no-public-ipv6', 'shutdown', 'error', ORPHAN_END_CAUSE,
];

export interface SweeperDeps {
  store: Store;
  assistants: Pick<AssistantsRepo, 'getById'>;
  postCall: PostCallDeps;
  logger: Logger;
  /** True while this process's runner owns the call (its engine or finish is still running). */
  busy(uuid: string): boolean;
  intervalMs?: number;
  /** Leave a just-ended call to its runner this long before the sweep takes it. */
  settleMs?: number;
  batch?: number;
  /** False while another node holds the sweep lease (docs/WORK-ONCE.md): the timer's passes are skipped. */
  active?: () => boolean;
  /** This node's name, written on the calls it carries: closeOrphans closes only this node's. */
  nodeId?: string;
  /**
   * A call still open whose record says nothing for this long (no heartbeat since, or never
   * answered since its INVITE for `staleRingingMs`) is taken as cut by a node that died, and
   * closed like an orphan by the sweep. Default: 4 heartbeat periods of 15 s; 10 min ringing.
   */
  staleAfterMs?: number;
  staleRingingMs?: number;
}

export class PostCallSweeper {
  private timer: Timer | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly deps: SweeperDeps) {}

  /** Ends records left live by a previous process (call before any call is accepted). */
  async closeOrphans(before: number): Promise<number> {
    const res = await this.deps.store.db
      .updateTable('calls')
      .set({
        status: sql<string>`CASE WHEN answer_at IS NULL THEN 'failed' ELSE 'completed' END`,
        end_cause: ORPHAN_END_CAUSE,
        // SQLite's MAX(a, b) is NULL when either is: no heartbeat falls back to the answer.
        end_at: sql<number>`COALESCE(${greatest(this.deps.store.dialect, sql.ref('answer_at'), sql.ref('last_alive_at'))}, answer_at, invite_at)`,
      })
      .where('end_at', 'is', null)
      .where('invite_at', '<', before)
      .where((eb) => (this.deps.nodeId === undefined ? eb.lit(true) : eb.or([eb('node_id', 'is', null), eb('node_id', '=', this.deps.nodeId)])))
      .executeTakeFirst();
    const n = Number(res.numUpdatedRows);
    if (n > 0) this.deps.logger.warn({ calls: n }, 'closed call records left open by a previous run');
    return n;
  }

  /** Closes open records no node has stamped alive for too long (their node died); returns how many. */
  async closeStale(now: number): Promise<number> {
    const aliveBefore = now - (this.deps.staleAfterMs ?? 60_000);
    const ringingBefore = now - (this.deps.staleRingingMs ?? 600_000);
    const res = await this.deps.store.db
      .updateTable('calls')
      .set({
        status: sql<string>`CASE WHEN answer_at IS NULL THEN 'failed' ELSE 'completed' END`,
        end_cause: ORPHAN_END_CAUSE,
        end_at: sql<number>`COALESCE(last_alive_at, answer_at, invite_at)`,
      })
      .where('end_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb.and([eb('answer_at', 'is not', null), eb(eb.fn.coalesce('last_alive_at', 'answer_at'), '<', aliveBefore)]),
          eb.and([eb('answer_at', 'is', null), eb('invite_at', '<', ringingBefore)]),
        ]),
      )
      .executeTakeFirst();
    const n = Number(res.numUpdatedRows);
    if (n > 0) this.deps.logger.warn({ calls: n }, 'closed call records whose node stopped stamping them alive');
    return n;
  }

  start(): void {
    if (this.timer || this.stopped) return;
    const tick = (): void => {
      this.timer = this.deps.postCall.clock.setTimeout(() => {
        const pass = async (): Promise<void> => {
          if (this.deps.active?.() === false) return;
          await this.closeStale(this.deps.postCall.clock.now());
          await this.sweep();
        };
        this.running = pass()
          .then(() => undefined)
          .catch((err: unknown) => this.deps.logger.error({ err: (err as Error).message }, 'post-call sweep failed'))
          .finally(() => {
            this.running = undefined;
            if (!this.stopped) tick();
          });
      }, this.deps.intervalMs ?? 15_000);
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.running;
  }

  /** One pass: finishes up to `batch` owed calls; returns how many it ran. */
  async sweep(): Promise<number> {
    const { postCall } = this.deps;
    const settledBefore = postCall.clock.now() - (this.deps.settleMs ?? 5_000);
    const rows = await this.deps.store.db
      .selectFrom('calls')
      .select('id')
      .where('end_at', 'is not', null)
      .where('end_at', '<=', settledBefore)
      .where('assistant_id', 'is not', null)
      // A call a provider failure ended has `<kind>: <provider> <reason>` (src/call/failures.ts).
      .where((eb) => eb.or([eb('end_cause', 'in', [...SESSION_CAUSES]), ...FAILURE_KINDS.map((k) => eb('end_cause', 'like', `${k}: %`))]))
      .where(jsonField(this.deps.store.dialect, 'details', [FINISH_MARKER, 'finished_at']), 'is', null)
      .orderBy('end_at')
      .limit(this.deps.batch ?? 50)
      .execute();
    let ran = 0;
    for (const { id } of rows) {
      if (this.stopped) break;
      const call = await postCall.calls.getById(id);
      if (!call || this.deps.busy(call.uuid)) continue;
      await this.finishOne(call);
      ran++;
    }
    return ran;
  }

  private async finishOne(call: Call): Promise<void> {
    const assistant = call.assistantId !== null ? ((await this.deps.assistants.getById(call.assistantId)) ?? null) : null;
    // A transcript stored by an earlier, interrupted finish is reused for the evaluation.
    const turns = Array.isArray(call.transcript) ? call.transcript.flatMap(asTurn) : [];
    await finishAndMark(this.deps.postCall, call, assistant, turns.length > 0 ? { turns } : null, undefined);
  }
}

function asTurn(e: unknown): { speaker: 'assistant' | 'caller'; text: string; startMs: number; endMs: number }[] {
  const r = e as Record<string, unknown>;
  if ((r.speaker !== 'assistant' && r.speaker !== 'caller') || typeof r.text !== 'string') return [];
  return [{ speaker: r.speaker, text: r.text, startMs: Number(r.start_ms) || 0, endMs: Number(r.end_ms) || 0 }];
}
