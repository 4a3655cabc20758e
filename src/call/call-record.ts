/**
 * The call record's life, in one place: created when an INVITE is admitted (or a call is
 * placed), stamped at answer, closed with status, end cause, codec and media figures. Refused
 * INVITEs of a known account (no assistant, no balance, at the cap) are recorded too, as
 * `failed`, so the owner can see why a caller never reached them; INVITEs from strangers are not
 * (writing a row per probe would let a scanner fill the database).
 */
import type { RtpSessionStats } from '../media/media-types.ts';
import type { Call, CallsRepo, NewCall } from '../store/repos/calls.ts';
import type { Clock } from '../util/clock.ts';
import type { EndCause } from './call-session.ts';
import { endCauseOf, type CallFailure } from './failures.ts';

export interface EndInfo {
  answered: boolean;
  cause: EndCause;
  stats: RtpSessionStats | undefined;
  dtmf: ReadonlyArray<{ digit: string; durationMs: number; atMs: number }>;
  /** The provider failure that ended the call: status `failed`, and it names the end cause. */
  failure?: CallFailure | undefined;
}

/** The call tape's path under the data dir (kept in `details.tape` by the call runner), if recorded. */
export function tapePathOf(c: Pick<Call, 'details'>): string | undefined {
  const tape = c.details?.tape;
  return typeof tape === 'string' && tape.length > 0 ? tape : undefined;
}

/** Final status of a call from how it ended. */
export function statusFor(info: Pick<EndInfo, 'answered' | 'cause'>): string {
  if (info.answered) return info.cause === 'error' ? 'failed' : 'completed';
  switch (info.cause) {
    case 'cancelled':
    case 'local-hangup':
      return 'canceled';
    case 'no-answer':
    case 'busy':
    case 'declined':
    case 'invalid-number':
      return info.cause;
    // A SIT heard in early media: the number is wrong (vacant, disconnected), or the network refused.
    case 'operator-intercept':
      return 'invalid-number';
    default:
      return 'failed';
  }
}

/** SIP final status of an outbound INVITE → end cause (and through statusFor, the call status). */
export function causeForSipStatus(status: number): EndCause {
  if (status === 486 || status === 600) return 'busy';
  if (status === 603) return 'declined';
  if (status === 408 || status === 480) return 'no-answer';
  if (status === 404 || status === 484 || status === 604) return 'invalid-number';
  if (status === 487) return 'cancelled';
  return 'failed';
}

/** The media figures kept on the record (RTCP-style loss and jitter, what concealment did). */
export function qualityOf(s: RtpSessionStats): Record<string, unknown> {
  return {
    codec: s.codec,
    ptime_ms: s.ptimeMs,
    packets_sent: s.packetsSent,
    packets_received: s.packetsReceived,
    packets_lost: s.lost,
    jitter_ms: Math.round(s.jitterMs * 10) / 10,
    rtt_ms: s.rttMs ?? null,
    remote: s.remote ?? null,
    concealed_frames: s.concealedFrames,
    late_frames: s.lateFrames,
    dropped_frames: s.droppedFrames,
    dtmf_received: s.dtmfReceived,
    dtmf_sent: s.dtmfSent,
    // Only on SRTP calls: the suite, and what failed authentication or was replayed (dropped).
    ...(s.srtp ? { srtp: s.srtp, srtp_auth_failed: s.srtpAuthFailed ?? 0, srtcp_auth_failed: s.srtcpAuthFailed ?? 0, srtp_replayed: s.srtpReplayed ?? 0 } : {}),
  };
}

export class CallRecorder {
  /** `nodeId`: this engine node (SWITCHBOARD_NODE_ID), written on every record it creates. */
  constructor(
    private readonly calls: CallsRepo,
    private readonly clock: Clock,
    private readonly nodeId: string | null = null,
  ) {}

  create(input: NewCall): ReturnType<CallsRepo['create']> {
    return this.calls.create({ ...input, nodeId: this.nodeId });
  }

  /** An INVITE we refused for a reason its owner should see. */
  async refused(input: NewCall, cause: string): Promise<void> {
    await this.calls.create({ ...input, nodeId: this.nodeId, status: 'failed', endCause: cause, endAt: this.clock.now() });
  }

  async status(id: number, status: string): Promise<void> {
    await this.calls.update(id, { status });
  }

  async answered(id: number, codec: string): Promise<void> {
    await this.calls.update(id, { status: 'in-progress', answerAt: this.clock.now(), codec });
  }

  async ended(id: number, info: EndInfo): Promise<void> {
    const existing = await this.calls.getById(id);
    const events = info.dtmf.map((d) => ({ type: 'dtmf', digit: d.digit, duration_ms: d.durationMs, at: d.atMs }));
    await this.calls.update(id, {
      status: info.failure ? 'failed' : statusFor(info),
      endCause: info.failure ? endCauseOf(info.failure) : info.cause,
      endAt: this.clock.now(),
      ...(info.stats ? { quality: qualityOf(info.stats) } : {}),
      ...(events.length > 0 ? { details: { ...(existing?.details ?? {}), events } } : {}),
    });
  }
}
