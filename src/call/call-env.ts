/**
 * What the call layer needs from the composition root, in one typed bag per SIP server (not a
 * global): stores, trunks, the live-call registry, how to make media, and the limits.
 */
import type { Logger } from 'pino';
import type { RtpSession } from '../media/rtp-session.ts';
import type { TrunkRegistry, TrunkSpec } from '../sip/trunk-registry.ts';
import type { Repos } from '../store/index.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import type { Clock } from '../util/clock.ts';
import type { CallRecorder } from './call-record.ts';
import type { CallRegistry } from './call-registry.ts';
import type { CallSession } from './call-session.ts';

/** A call's media settings that come from its trunk. */
export interface CallMediaOptions {
  /** The trunk's `media_nat`: learn the RTP source behind NAT even where the SDP names a public address. */
  learnSource?: boolean;
  /** The far end's signalling address: an IPv6 one gets SIP_PUBLIC_HOST6 in SDP when there is one. */
  peer?: string;
}

/** The media settings of calls over `trunk`. */
export function mediaOptionsOf(trunk: Pick<TrunkSpec, 'mediaNat'>): CallMediaOptions {
  return { learnSource: trunk.mediaNat ?? false };
}

export interface CallLimits {
  /** Live calls (ringing or answered) per account. */
  maxPerAccount: number;
  /** Live calls per trunk. */
  maxPerTrunk: number;
  /** Balance needed to start a call (a minute of calling by default). */
  minBalanceMicros: number;
  /** Ceiling on any call's length, below the assistant's max_duration (ops safety, tests). */
  maxCallMs?: number;
  /** Length of diagnostics calls (echo/tone). */
  diagnosticsMaxMs: number;
}

/**
 * The AI side of a call (src/call/wiring plugs in here); resolves when it is done talking.
 * `callVariables` are the call's own (POST /user/calls, a campaign lead), merged over the
 * assistant's.
 */
export type CallEngine = (session: CallSession, assistant: AssistantRecord, callVariables?: Record<string, unknown>) => Promise<void>;

export interface CallEnv {
  repos: Repos;
  trunks: TrunkRegistry;
  clock: Clock;
  logger: Logger;
  registry: CallRegistry;
  recorder: CallRecorder;
  /** A fresh RtpSession (not yet allocated), for a call over a trunk with these media settings. */
  createMedia(options?: CallMediaOptions): RtpSession;
  /** Address written into SDP c= lines for IPv4 peers (RTP_PUBLIC_HOST, else SIP_PUBLIC_HOST). */
  publicHost: string;
  limits: CallLimits;
  /** Ring this long before answering inbound calls (a caller expects a ring; tests need a window). */
  answerDelayMs?: number;
  engine?: CallEngine;
}

/**
 * With an engine, max_duration is the engine's rule: it says goodbye at that moment and hangs up
 * when the goodbye ends (at most rules.ts' 10 s grace later). The session's hard limit is then a
 * backstop a little past that, so it never cuts the goodbye off.
 */
export const ENGINE_GOODBYE_BACKSTOP_MS = 15_000;

export function maxDurationMs(env: CallEnv, assistant: AssistantRecord | undefined): number {
  const configured = assistant
    ? (assistant.config.max_duration ?? 600) * 1000 + (env.engine ? ENGINE_GOODBYE_BACKSTOP_MS : 0)
    : env.limits.diagnosticsMaxMs;
  return Math.min(configured, env.limits.maxCallMs ?? Infinity);
}
