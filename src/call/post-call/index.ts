/**
 * After the call: `finishCall` runs once a call's record is closed —
 * billing, then evaluation, then the webhook, in that order because the webhook carries the
 * cost and the evaluation. The call layer calls it at call end; it is idempotent, so a call
 * finished twice (a retry, a restart sweep, two code paths racing) bills once, evaluates once
 * and enqueues one event:
 * - billing: one ledger row per call, checked and booked in one transaction (billing.ts);
 * - evaluation: skipped when the record already holds one (result or `{error}`);
 * - webhook: skipped when the record's details carry the outbox id of an earlier enqueue;
 * - concurrent finishes of one call in this process share one run.
 *
 * It never rejects: each step's failure is logged and the other steps still run, and since every
 * step is idempotent, calling it again later completes only what is missing.
 */
import type { AppContext } from '../../context.ts';
import { agentDeps } from '../../chat/agent-deps.ts';
import type { LlmRegistry } from '../../providers/llm/registry.ts';
import type { EventPublisher } from '../../webhooks/events.ts';
import type { Call, CallPatch } from '../../store/repos/calls.ts';
import { billCall, type BillingOutcome } from './billing.ts';
import { evaluateCall } from './evaluation.ts';
import { sendCallWebhook, storableRecordingPath, transcriptView, type WebhookOutcome } from './webhook.ts';
import type { FinishCallInput, PostCallDeps } from './types.ts';

export type { FinishCallInput, PostCallDeps, PostCallTranscript, PostCallTurn } from './types.ts';
export { billableMinutes, callCostMicros, callLedgerReference } from './billing.ts';
export { webhookDecision, callCompletedData } from './webhook.ts';

export interface FinishReport {
  billing?: BillingOutcome;
  /** Whether this run stored an evaluation (false: not wanted, or already there). */
  evaluated: boolean;
  webhook?: WebhookOutcome;
  /** Steps that failed, by name, with the error message. */
  errors: Record<string, string>;
}

/** The deps of one engine, from its context; `events` is the engine's EventPublisher. */
export function postCallDeps(ctx: AppContext, llm: LlmRegistry, events: Pick<EventPublisher, 'publish'>): PostCallDeps {
  return {
    store: ctx.store,
    calls: ctx.repos.calls,
    ledger: ctx.repos.ledger,
    events,
    clock: ctx.clock,
    logger: ctx.logger,
    resolveModel: agentDeps(ctx, llm).resolveModel,
    publicUrl: ctx.config.publicUrl,
    dataDir: ctx.config.dataDir,
  };
}

// Keyed by deps rather than module-wide so two engines in one process (tests) stay apart.
const inFlight = new WeakMap<PostCallDeps, Map<string, Promise<FinishReport>>>();

export function finishCall(deps: PostCallDeps, input: FinishCallInput): Promise<FinishReport> {
  let running = inFlight.get(deps);
  if (!running) inFlight.set(deps, (running = new Map()));
  const key = input.callRecord.uuid;
  const existing = running.get(key);
  if (existing) return existing;
  const run = runFinish(deps, input).finally(() => running.delete(key));
  running.set(key, run);
  return run;
}

async function runFinish(deps: PostCallDeps, input: FinishCallInput): Promise<FinishReport> {
  const report: FinishReport = { evaluated: false, errors: {} };
  const log = deps.logger.child({ callId: input.callRecord.id, callUuid: input.callRecord.uuid });
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (err) {
      report.errors[name] = (err as Error).message;
      log.error({ err, step: name }, 'post-call step failed');
      return undefined;
    }
  };
  const reload = async (): Promise<Call> => (await deps.calls.getById(input.callRecord.id)) ?? input.callRecord;

  const view = input.transcript ? transcriptView(input.transcript) : undefined;
  await step('record', async () => {
    // The record shows what the webhook sends; an earlier finish (or the call layer) wins.
    const call = await reload();
    const patch: CallPatch = {};
    if (view && call.transcript === null) patch.transcript = view;
    const recording = storableRecordingPath(deps.dataDir, input.recordingPath);
    if (recording && call.recordingPath === null) patch.recordingPath = recording;
    if (Object.keys(patch).length > 0) await deps.calls.update(call.id, patch);
  });

  report.billing = await step('billing', async () => billCall(deps, await reload()));

  await step('evaluation', async () => {
    const call = await reload();
    // Unanswered calls have nothing to evaluate; a stored result or error is final.
    if (call.answerAt === null || call.evaluation !== null) return;
    const evaluation = await evaluateCall(deps, input.assistant, input.transcript);
    if (evaluation === undefined) return;
    await deps.calls.update(call.id, { evaluation });
    report.evaluated = true;
  });

  report.webhook = await step('webhook', async () => {
    const call = await reload();
    const transcript = view ?? (Array.isArray(call.transcript) ? (call.transcript as Record<string, unknown>[]) : []);
    return sendCallWebhook(deps, call, input.assistant, transcript);
  });
  return report;
}
