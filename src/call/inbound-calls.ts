/**
 * An INVITE from a trunk becomes a call: route (inbound-router.ts) → authenticate if the trunk
 * wants digest → the trunk's new-call rate (call-rate-limit.ts; 503 + Retry-After over it) →
 * admit (number, assistant, caps, balance) → only then allocate RTP ports →
 * answer the SDP (488 when nothing fits) → 180 → 200 → CallSession → engine.
 *
 * Nothing costly happens before authorisation: strangers get their 403/401 without a database
 * row, a port or a timer beyond the transaction's own.
 */
import type { RtpSession } from '../media/rtp-session.ts';
import { createSdpSession } from '../media/sdp-write.ts';
import { answerOffer, type LocalMedia } from '../media/sdp-negotiate.ts';
import { offeredCodecNames, SdpNegotiationError } from '../media/sdp.ts';
import type { SrtpPolicy } from '../media/srtp/sdes.ts';
import type { SipHeader, SipRequest } from '../sip/message.ts';
import type { Source } from '../sip/transaction-types.ts';
import type { TrunkAuthenticator } from '../sip/trunk-auth.ts';
import type { ProvisionedTrunk } from '../sip/trunk-registry.ts';
import type { IncomingInvite } from '../sip/user-agent-incoming-invite.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import type { NewCall } from '../store/repos/calls.ts';
import { maxDurationMs, mediaOptionsOf, type CallEnv } from './call-env.ts';
import { DRAIN_RETRY_AFTER_S } from './call-registry.ts';
import { CallSession, type EndCause } from './call-session.ts';
import { runDiagnostics } from './diagnostics-engine.ts';
import { admit, capRefusal, routeInvite, type DiagnosticMode } from './inbound-router.ts';
import { toE164, userOf } from './numbers.ts';

/** `address:port`, an IPv6 address in brackets. */
export function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

export interface InboundGate {
  /**
   * Where the INVITE really came from: the source a trusted proxy asserts (SIP_TRUSTED_PROXIES,
   * src/sip/trusted-proxies.ts), else the packet's own. Trunk IP checks, strikes, the media
   * peer's family and the call's remote address use it.
   */
  origin(req: SipRequest, source: Source): Source;
  /** Inbound ids of trunks that trust `ip` (allow-list or registrar address). */
  trusting(ip: string): Set<string>;
  auth: TrunkAuthenticator;
  /** A refusal worth counting towards a ban. */
  strike(ip: string): void;
  /**
   * One new call on `trunk` against the new-call rates: undefined when admitted, else the
   * Retry-After (seconds) for its 503.
   */
  callRate(trunk: ProvisionedTrunk): Promise<number | undefined> | number | undefined;
}

const reasonHeader = (value: string): SipHeader => ({ name: 'reason', value });

export async function handleInboundInvite(env: CallEnv, gate: InboundGate, incoming: IncomingInvite): Promise<void> {
  const inviteAtMs = env.clock.monotonic();
  const req = incoming.request;
  const origin = gate.origin(req, incoming.source);
  const ip = origin.address;
  if (env.registry.isDraining) {
    incoming.reject(503, 'Service Unavailable', [{ name: 'retry-after', value: String(DRAIN_RETRY_AFTER_S) }]);
    return;
  }
  const decision = routeInvite(
    { sourceIp: ip, requestUser: userOf(req.uri), toUser: userOf(incoming.to), transport: origin.transport },
    { trunks: env.trunks.list(), trusting: gate.trusting(ip) },
  );
  if (decision.kind === 'reject') {
    if (decision.strike) gate.strike(ip);
    incoming.reject(decision.status, decision.reason);
    return;
  }
  const trunk = decision.trunk;
  if (decision.kind === 'authenticate') {
    const result = gate.auth.verify(req, { username: trunk.spec.username, password: trunk.spec.password });
    if (result === 'missing' || result === 'stale') {
      incoming.reject(401, 'Unauthorized', gate.auth.challengeHeaders(result === 'stale'));
      return;
    }
    if (result === 'failed') {
      gate.strike(ip);
      incoming.reject(403, 'Forbidden');
      return;
    }
  }
  // Only authorised INVITEs spend the trunk's tokens (a stranger cannot drain them), and before
  // any store work, live-call slot or RTP port: a flood costs a 503 each and nothing else.
  const retryAfterS = await gate.callRate(trunk);
  if (retryAfterS !== undefined) {
    incoming.reject(503, 'Service Unavailable', [
      { name: 'retry-after', value: String(retryAfterS) },
      reasonHeader('SIP;cause=503;text="call rate limit"'),
    ]);
    return;
  }
  await admitAndAnswer(env, incoming, origin, trunk, decision.diagnostic, inviteAtMs);
}

async function admitAndAnswer(
  env: CallEnv,
  incoming: IncomingInvite,
  origin: Source,
  trunk: ProvisionedTrunk,
  diagnostic: DiagnosticMode | undefined,
  inviteAtMs: number,
): Promise<void> {
  const spec = trunk.spec;
  const phone = diagnostic ? undefined : await env.repos.phoneNumbers.find(spec.accountId, spec.phoneNumber, 'sip_trunk');
  const assistant = phone ? await env.repos.assistants.findInboundByPhoneNumber(phone.id) : undefined;
  const fromUser = userOf(incoming.from) ?? 'anonymous';
  const base: NewCall = {
    accountId: spec.accountId,
    direction: 'inbound',
    fromNumber: toE164(fromUser, spec.callingFormat, spec.countryCode) ?? fromUser,
    toNumber: diagnostic ?? spec.phoneNumber,
    sipTrunkId: spec.id,
    phoneNumberId: phone?.id ?? null,
    assistantId: assistant?.id ?? null,
    sipCallId: incoming.callId,
  };
  const balanceMicros = await env.repos.ledger.balance(spec.accountId);
  const verdict = admit({
    diagnostic: diagnostic !== undefined,
    phoneNumberId: phone?.id,
    assistantId: assistant?.id,
    balanceMicros,
    minBalanceMicros: env.limits.minBalanceMicros,
    activeForAccount: env.registry.activeForAccount(spec.accountId),
    activeForTrunk: env.registry.activeForTrunk(trunk.inboundTrunkId),
    maxPerAccount: env.limits.maxPerAccount,
    maxPerTrunk: env.limits.maxPerTrunk,
  });
  if (!verdict.ok) {
    incoming.reject(verdict.status, verdict.reason, verdict.reasonHeader ? [reasonHeader(verdict.reasonHeader)] : []);
    if (verdict.cause !== 'unknown-number') await env.recorder.refused(base, verdict.cause).catch(() => undefined);
    return;
  }
  if (incoming.state !== 'pending') return; // CANCEL raced the lookups
  // The caps again, over every node of the service and atomically: the counts above are this node's.
  const slot = await env.registry.reserve(spec.accountId, trunk.inboundTrunkId, env.limits);
  if (typeof slot === 'string') {
    const refusal = capRefusal(slot);
    incoming.reject(refusal.status, refusal.reason, refusal.reasonHeader ? [reasonHeader(refusal.reasonHeader)] : []);
    await env.recorder.refused(base, refusal.cause).catch(() => undefined);
    return;
  }
  if (incoming.state !== 'pending') {
    await slot.release(); // CANCEL raced the reservation
    return;
  }
  let session: CallSession;
  let media: RtpSession;
  try {
    const record = await env.recorder.create({ ...base, status: 'ringing' });
    media = env.createMedia({ ...mediaOptionsOf(spec), peer: origin.address });
    session = new CallSession({
      recordId: record.id,
      uuid: record.uuid,
      direction: 'inbound',
      accountId: spec.accountId,
      trunkKey: trunk.inboundTrunkId,
      assistantId: assistant?.id,
      media,
      clock: env.clock,
      logger: env.logger,
      recorder: env.recorder,
      maxDurationMs: maxDurationMs(env, assistant),
      mode: diagnostic ? 'diagnostic' : (assistant?.mode ?? 'none'),
      facts: {
        from: base.fromNumber,
        to: base.toNumber,
        trunk: spec.id ?? trunk.inboundTrunkId,
        remote: `${origin.transport}:${hostPort(origin.address, origin.port)}`,
        codecs: offeredCodecNames(incoming.offer),
      },
      inviteAtMs,
    });
  } catch (err) {
    await slot.release();
    throw err;
  }
  env.registry.add(session, slot);
  session.cancelPending = (cause: EndCause) => {
    if (cause === 'cancelled') return; // the CANCEL already answered the INVITE with 487
    incoming.reject(cause === 'shutdown' ? 503 : 480);
  };
  incoming.once('cancel', () => void session.close('cancelled'));
  incoming.once('prackTimeout', () => void session.close('failed'));
  if (incoming.state !== 'pending') {
    await session.close('cancelled');
    return;
  }
  incoming.ringing();
  if (env.answerDelayMs) await ring(env, session, env.answerDelayMs);
  await answer(env, incoming, session, media, assistant, diagnostic, spec.srtp ?? 'off');
}

/** Waits while ringing; a CANCEL or shutdown meanwhile cuts the wait short. */
function ring(env: CallEnv, session: CallSession, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = env.clock.setTimeout(resolve, ms);
    const stop = session.cancelPending;
    session.cancelPending = (cause) => {
      timer.cancel();
      stop?.(cause);
      resolve();
    };
  });
}

async function answer(
  env: CallEnv,
  incoming: IncomingInvite,
  session: CallSession,
  media: RtpSession,
  assistant: AssistantRecord | undefined,
  diagnostic: DiagnosticMode | undefined,
  srtp: SrtpPolicy,
): Promise<void> {
  let local: LocalMedia;
  try {
    const ports = await media.allocate();
    local = { address: ports.address, port: ports.rtpPort, singleCodecAnswer: true, srtp };
  } catch (err) {
    session.log.warn({ err: (err as Error).message }, 'no RTP ports for an inbound call');
    if (session.state === 'ringing') {
      incoming.reject(503, 'Service Unavailable');
      await session.close('error');
    }
    return;
  }
  if (session.state !== 'ringing' || incoming.state !== 'pending') return; // cancelled meanwhile
  const offer = incoming.offer;
  let negotiated;
  try {
    // A delayed offer (INVITE without SDP) needs our offer in the 200 and the answer in the ACK,
    // which the dialog layer does not surface yet: refuse it like an unusable offer.
    if (offer === undefined) throw new SdpNegotiationError('NO_AUDIO_STREAM', 'INVITE without SDP offer');
    negotiated = answerOffer(offer, local, createSdpSession(String(Date.now())));
  } catch (err) {
    const status = err instanceof SdpNegotiationError ? err.sipStatus : 488;
    incoming.reject(status, status === 488 ? 'Not Acceptable Here' : 'Bad Request', [
      { name: 'warning', value: `${err instanceof SdpNegotiationError ? err.warningCode : 399} switchboard "${(err as Error).message.replace(/"/g, "'")}"` },
    ]);
    session.cancelPending = undefined;
    await session.close('failed');
    return;
  }
  const dialog = incoming.accept(negotiated.answerSdp);
  session.answered(dialog, negotiated, local, negotiated.session);
  // Owned by the caller's promise (the SIP server keeps it until close), not left floating.
  await runEngine(env, session, assistant, diagnostic);
}

/** The engine owns the conversation; when it returns on its own, the call is over. */
async function runEngine(env: CallEnv, session: CallSession, assistant: AssistantRecord | undefined, diagnostic: DiagnosticMode | undefined): Promise<void> {
  try {
    if (diagnostic) await runDiagnostics(session, diagnostic);
    else if (assistant && env.engine) await env.engine(session, assistant);
    else return; // no engine yet: the call stays up until hang-up or max_duration
    if (session.state === 'active' && !diagnostic) await session.close('local-hangup');
  } catch (err) {
    session.log.error({ err: (err as Error).message }, 'call engine failed');
    await session.close('error');
  }
}
