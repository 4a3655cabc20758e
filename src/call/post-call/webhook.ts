/**
 * The post-call webhook (`call.completed`): decided from the assistant's flags, built from the
 * finished record, and handed to the persisted outbox (src/webhooks), which signs, delivers and
 * retries it — so a restart between enqueue and delivery loses nothing. docs/WEBHOOKS.md
 * documents the payload.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { Call } from '../../store/repos/calls.ts';
import { iso } from '../../store/json.ts';
import { toDollars } from '../../util/money.ts';
import { tapePathOf } from '../call-record.ts';
import { chargedMinutes } from './billing.ts';
import type { PostCallDeps, PostCallTranscript } from './types.ts';

export type WebhookDecision = { send: true; url: string } | { send: false; reason: string };

/** Statuses a call can end in (call-record.ts `statusFor`); only `completed` is a completed call. */
const COMPLETED = 'completed';

export function webhookDecision(assistant: AssistantRecord | null, call: Pick<Call, 'status' | 'direction'>): WebhookDecision {
  const c = assistant?.config;
  if (!assistant || !c) return { send: false, reason: 'no assistant' };
  if (!c.is_webhook_active || !c.webhook_url) return { send: false, reason: 'webhook not active' };
  // POST /user/assistants/disable-inbound-webhook switches off "updates about inbound call
  // completions" (spec, Events) without touching the assistant's configuration.
  if (call.direction === 'inbound' && !assistant.inboundWebhookEnabled) return { send: false, reason: 'inbound webhook disabled' };
  if (c.send_webhook_only_on_completed && call.status !== COMPLETED) return { send: false, reason: `call ${call.status}` };
  return { send: true, url: c.webhook_url };
}

/**
 * The recording as the record should hold it: relative to the data dir (what
 * GET /user/calls/{id}/recording serves), and only if the file exists there. A path outside the
 * data dir is refused because that route would refuse to serve it.
 */
export function storableRecordingPath(dataDir: string, file: string | null | undefined): string | undefined {
  if (!file) return undefined;
  const root = path.resolve(dataDir);
  const abs = path.resolve(root, file);
  if (!abs.startsWith(root + path.sep) || !fs.existsSync(abs)) return undefined;
  return path.relative(root, abs);
}

/** Transcript entries as the webhook and the call record show them (snake_case, time order). */
export function transcriptView(transcript: PostCallTranscript | null): Record<string, unknown>[] {
  if (!transcript) return [];
  return [...transcript.turns]
    .sort((a, b) => a.startMs - b.startMs)
    .map((t) => ({
      speaker: t.speaker,
      text: t.text,
      start_ms: t.startMs,
      end_ms: t.endMs,
      ...(t.interrupted ? { interrupted: true } : {}),
    }));
}

export interface CallCompletedInput {
  call: Call;
  assistant: AssistantRecord;
  transcript: Record<string, unknown>[];
  evaluation: Record<string, unknown> | null;
  /** Null unless include_recording_in_webhook and a recording exists. */
  recordingUrl: string | null;
  /** The call tape (kept with the recording), under the same condition. */
  tapeUrl: string | null;
}

/** `data` of the `call.completed` event. */
export function callCompletedData(input: CallCompletedInput): Record<string, unknown> {
  const { call: c, assistant } = input;
  const durationS = c.answerAt !== null && c.endAt !== null ? Math.round(Math.max(0, c.endAt - c.answerAt) / 1000) : 0;
  return {
    call: {
      id: c.id,
      uuid: c.uuid,
      direction: c.direction,
      from_number: c.fromNumber,
      to_number: c.toNumber,
      status: c.status,
      end_cause: c.endCause,
      started_at: iso(c.inviteAt),
      answered_at: iso(c.answerAt),
      ended_at: iso(c.endAt),
      duration_s: durationS,
      billed_minutes: chargedMinutes(c, c.endAt),
      cost: toDollars(c.costMicros),
      cost_micros: c.costMicros,
      campaign_id: c.campaignId,
      lead_id: c.leadId,
      variables: c.variables,
    },
    assistant: { id: assistant.id, uuid: assistant.uuid, name: assistant.name },
    transcript: input.transcript,
    evaluation: input.evaluation,
    recording_url: input.recordingUrl,
    tape_url: input.tapeUrl,
  };
}

export function recordingUrl(deps: Pick<PostCallDeps, 'publicUrl'>, assistant: AssistantRecord, call: Call): string | null {
  if (!assistant.config.include_recording_in_webhook || !call.recordingPath) return null;
  return `${deps.publicUrl}/api/user/calls/${call.id}/recording`;
}

export function tapeUrl(deps: Pick<PostCallDeps, 'publicUrl'>, assistant: AssistantRecord, call: Call): string | null {
  if (!assistant.config.include_recording_in_webhook || !tapePathOf(call)) return null;
  return `${deps.publicUrl}/api/user/calls/${call.id}/tape`;
}

/** The marker in `details` that says this call's event is already in the outbox. */
export const WEBHOOK_MARKER = 'post_call_webhook';

export type WebhookOutcome = { sent: true; outboxId: number } | { sent: false; reason: string };

/** Enqueues `call.completed` unless the flags say no or an earlier finish already did. */
export async function sendCallWebhook(
  deps: PostCallDeps,
  call: Call,
  assistant: AssistantRecord | null,
  transcript: Record<string, unknown>[],
): Promise<WebhookOutcome> {
  const decision = webhookDecision(assistant, call);
  if (!decision.send || !assistant) return { sent: false, reason: decision.send ? 'no assistant' : decision.reason };
  const marker = call.details?.[WEBHOOK_MARKER] as { outbox_id?: number } | undefined;
  if (marker?.outbox_id !== undefined) return { sent: false, reason: 'already enqueued' };
  const data = callCompletedData({
    call,
    assistant,
    transcript,
    evaluation: call.evaluation,
    recordingUrl: recordingUrl(deps, assistant, call),
    tapeUrl: tapeUrl(deps, assistant, call),
  });
  const outboxId = await deps.events.publish(call.accountId, decision.url, 'call.completed', data);
  // Re-read details: the call layer may have added evidence since `call` was loaded.
  const fresh = await deps.calls.getById(call.id);
  await deps.calls.update(call.id, {
    details: { ...(fresh?.details ?? call.details ?? {}), [WEBHOOK_MARKER]: { outbox_id: outboxId, enqueued_at: iso(deps.clock.now()) } },
  });
  return { sent: true, outboxId };
}
