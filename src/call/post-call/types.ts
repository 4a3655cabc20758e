/**
 * What the post-call steps share: their dependencies (a typed bag from the composition root,
 * never a global) and the input `finishCall` receives when a call has ended.
 */
import type { Logger } from 'pino';
import type { ResolvedModel } from '../../agent/types.ts';
import type { Store } from '../../store/db.ts';
import type { AssistantRecord } from '../../store/repos/assistants.ts';
import type { Call, CallsRepo } from '../../store/repos/calls.ts';
import type { LedgerRepo } from '../../store/repos/ledger.ts';
import type { Clock } from '../../util/clock.ts';
import type { EventPublisher } from '../../webhooks/events.ts';

/**
 * The minimal transcript post-call work needs. `TranscriptEntry` (src/call/transcript.ts)
 * satisfies `PostCallTurn`, so `{turns: cascadeResult.transcript}` can be passed as is.
 */
export interface PostCallTurn {
  speaker: 'assistant' | 'caller';
  text: string;
  /** ms from answer. */
  startMs: number;
  endMs: number;
  interrupted?: boolean;
}

export interface PostCallTranscript {
  turns: readonly PostCallTurn[];
}

export interface FinishCallInput {
  /** The call's record; re-read from the store by id, so a stale copy is fine. */
  callRecord: Call;
  /** Null for calls without one (diagnostics): billed, but no evaluation and no webhook. */
  assistant: AssistantRecord | null;
  transcript: PostCallTranscript | null;
  /** Where the recorder wrote the WAV (absolute, under the data dir), if the call was recorded. */
  recordingPath: string | null | undefined;
}

export interface PostCallDeps {
  /** Raw access for the one-transaction "already billed?" check (billing.ts). */
  store: Store;
  calls: CallsRepo;
  ledger: LedgerRepo;
  events: Pick<EventPublisher, 'publish'>;
  clock: Clock;
  logger: Logger;
  /** Catalog id → provider + model, as the agent resolves it (src/chat/agent-deps.ts). */
  resolveModel(id: number | null | undefined): ResolvedModel | undefined;
  /** SWITCHBOARD_PUBLIC_URL without a trailing slash: base of recording URLs. */
  publicUrl: string;
  /** SWITCHBOARD_DATA_DIR (absolute): recording paths are stored relative to it. */
  dataDir: string;
  /** Longest the evaluation LLM call may take; default 60 s. */
  evaluationTimeoutMs?: number;
  /** Default CALL_PRICE_PER_MINUTE_MICROS. */
  pricePerMinuteMicros?: number;
}
