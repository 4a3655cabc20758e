/**
 * Usage billing for a finished call: per started minute from answer to end, booked once per
 * call in the ledger (reason `call`, reference `call:<uuid>`) and stored as the record's
 * `cost_micros`.
 *
 * The charge is booked in full even when it takes the balance below zero. The call has already
 * happened, and the place to refuse service is admission (inbound-router.ts `admit`, the
 * outbound dialer), which turns calls away while the balance is under a minute's price; capping
 * the charge at the balance instead would hand out the excess for free and make the ledger
 * disagree with the call records. A negative balance blocks every further call until a top-up.
 *
 * A call that failed before the assistant said anything (a provider refused us at the start: the
 * caller heard only the apology) is not charged; neither is one never answered (no answer, busy,
 * rejected). A call the assistant spoke on is charged as usual, however it ended
 * (docs/FAILURES-AND-BILLING.md).
 */
import { CALL_PRICE_PER_MINUTE_MICROS } from '../../billing/prices.ts';
import type { Call } from '../../store/repos/calls.ts';
import type { PostCallDeps } from './types.ts';
import { inTransaction, lockAccount } from '../../store/dialect.ts';
import { LedgerRepo } from '../../store/repos/ledger.ts';

export const CALL_LEDGER_REASON = 'call';

export function callLedgerReference(uuid: string): string {
  return `call:${uuid}`;
}

const MINUTE_MS = 60_000;

/**
 * Started minutes from answer to end. Unanswered calls cost nothing; answering starts the first
 * minute, so a call answered and hung up at once is one minute, 60 s is one, 60.001 s is two.
 */
export function billableMinutes(answerAt: number | null, endAt: number | null): number {
  if (answerAt === null || endAt === null) return 0;
  return Math.max(1, Math.ceil((endAt - answerAt) / MINUTE_MS));
}

export function callCostMicros(answerAt: number | null, endAt: number | null, perMinute = CALL_PRICE_PER_MINUTE_MICROS): number {
  return billableMinutes(answerAt, endAt) * perMinute;
}

/** Assistant audio the caller must have heard for it to count as speaking (about one short word). */
export const SPOKE_MIN_MS = 300;

/**
 * The assistant said something the caller heard: an assistant entry of the record's transcript
 * with words and at least SPOKE_MIN_MS of audio played, other than an apology (the engine's own
 * line when a provider failed). A greeting cut by a failure before its audio reached the caller
 * (start_ms = end_ms) does not count.
 */
export function assistantSpoke(transcript: readonly unknown[] | null): boolean {
  return (transcript ?? []).some((e) => {
    const t = e as { speaker?: unknown; kind?: unknown; text?: unknown; start_ms?: unknown; end_ms?: unknown };
    if (t.speaker !== 'assistant' || t.kind === 'apology' || typeof t.text !== 'string' || t.text.trim() === '') return false;
    return typeof t.start_ms === 'number' && typeof t.end_ms === 'number' && t.end_ms - t.start_ms >= SPOKE_MIN_MS;
  });
}

/**
 * The minutes a call is charged: its started minutes, or none when it failed before the assistant
 * spoke. A failed call whose transcript was never stored (the process died with it) keeps its
 * minutes: what was said is unknown.
 */
export function chargedMinutes(call: Pick<Call, 'status' | 'answerAt' | 'transcript'>, endAt: number | null): number {
  if (call.status === 'failed' && call.transcript !== null && !assistantSpoke(call.transcript)) return 0;
  return billableMinutes(call.answerAt, endAt);
}

export interface BillingOutcome {
  minutes: number;
  costMicros: number;
  /** False when an earlier finish already booked this call (the booked amount is kept). */
  charged: boolean;
}

/**
 * Books the call's cost once. The check and the insert run in one transaction holding the
 * account's lock (src/store/dialect.ts), so two finishes of the same call (even in two processes
 * or nodes sharing the database) cannot both charge.
 * Always (re)writes `cost_micros` from what the ledger holds, repairing a finish that crashed
 * between the two writes.
 */
export async function billCall(deps: PostCallDeps, call: Call): Promise<BillingOutcome> {
  const endAt = call.endAt ?? (call.answerAt === null ? null : deps.clock.now());
  const minutes = chargedMinutes(call, endAt);
  const price = minutes * (deps.pricePerMinuteMicros ?? CALL_PRICE_PER_MINUTE_MICROS);
  const reference = callLedgerReference(call.uuid);
  const booked = await inTransaction(deps.store, async (tx): Promise<{ costMicros: number; charged: boolean }> => {
    await lockAccount(tx.db, tx.dialect, call.accountId);
    const existing = await tx.db
      .selectFrom('ledger')
      .select('amount_micros as amount')
      .where('account_id', '=', call.accountId)
      .where('reason', '=', CALL_LEDGER_REASON)
      .where('reference', '=', reference)
      .limit(1)
      .executeTakeFirst();
    if (existing) return { costMicros: -existing.amount, charged: false };
    // A free call books no row: nothing to show in the ledger, and nothing to double-charge.
    if (price > 0) await new LedgerRepo(tx, deps.clock).adjust(call.accountId, -price, CALL_LEDGER_REASON, reference);
    return { costMicros: price, charged: price > 0 };
  });
  if (call.costMicros !== booked.costMicros) await deps.calls.update(call.id, { costMicros: booked.costMicros });
  return { minutes, ...booked };
}
