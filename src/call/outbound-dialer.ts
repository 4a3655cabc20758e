/**
 * Outbound calls through a trunk: our offer from freshly allocated ports, an INVITE to
 * `sip:<number as the trunk spells it>@<sip_address>` with From = the trunk's number, digest
 * answers to 401/407 with the trunk's credentials, `ringing_time` as the no-answer limit (then
 * CANCEL), and the final SIP status mapped to the call status (call-record.ts).
 *
 * `place()` returns as soon as the record exists (status `queued`); the INVITE runs in the
 * background, owned by the dialer so close() can wait for it.
 *
 * Early media (docs/EARLY-MEDIA.md): a 18x with SDP starts the call's media at once
 * (CallSession.earlyMedia); the 200 keeps it, or re-points it when its SDP differs, and a 200
 * without SDP after a 18x with SDP (RFC 3262) answers on that 18x's media.
 */
import type { RtpSession } from '../media/rtp-session.ts';
import { processAnswer, type LocalMedia, type NegotiatedMedia } from '../media/sdp-negotiate.ts';
import { createSdpSession } from '../media/sdp-write.ts';
import type { Dialog } from '../sip/dialog.ts';
import { header } from '../sip/message.ts';
import { tagOf } from '../sip/transaction-headers.ts';
import { trunkUri, uriHostWithoutPort, type ProvisionedTrunk } from '../sip/trunk-registry.ts';
import { digestCredentials } from '../sip/user-agent-auth.ts';
import { InviteFailedError, OutgoingInvite } from '../sip/user-agent-outgoing-invite.ts';
import type { UserAgent } from '../sip/user-agent.ts';
import type { AssistantRecord } from '../store/repos/assistants.ts';
import type { Call } from '../store/repos/calls.ts';
import type { Timer } from '../util/clock.ts';
import { AppError } from '../util/errors.ts';
import { causeForSipStatus } from './call-record.ts';
import { maxDurationMs, mediaOptionsOf, type CallEnv } from './call-env.ts';
import { CallSession, type CallState } from './call-session.ts';
import { formatForTrunk } from './numbers.ts';
import { OutboundOffers } from './outbound-offer.ts';
import { DEFAULT_CODEC_PREFERENCE, resolveCodecs } from '../media/codecs/codecs.ts';

/** What our offers carry (createOffer without a codec list), for the `call started` line. */
const OFFERED_CODECS = resolveCodecs(DEFAULT_CODEC_PREFERENCE).map((c) => c.name);

export interface PlaceCallInput {
  accountId: number;
  assistant: AssistantRecord;
  phoneNumberId: number;
  trunk: ProvisionedTrunk;
  /** E.164. */
  to: string;
  variables?: Record<string, unknown>;
  /** Campaign calls: written on the record so a restarted dialer can tell what became of a lead. */
  campaignId?: number;
  leadId?: number;
}

/** What the REST layer sees of the dialer (ctx.dialer). */
export interface OutboundCallPlacer {
  place(input: PlaceCallInput): Promise<Call>;
}

export class OutboundDialer implements OutboundCallPlacer {
  private readonly pending = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly env: CallEnv,
    private readonly ua: UserAgent,
  ) {}

  async place(input: PlaceCallInput): Promise<Call> {
    const { env } = this;
    const spec = input.trunk.spec;
    if (this.closed || env.registry.isDraining) throw new AppError('The engine is shutting down', 503, 'SHUTTING_DOWN', true);
    if (env.registry.activeForAccount(input.accountId) >= env.limits.maxPerAccount || env.registry.activeForTrunk(input.trunk.inboundTrunkId) >= env.limits.maxPerTrunk) {
      throw new AppError('Too many concurrent calls', 429, 'CALL_LIMIT', true);
    }
    if (!await env.repos.ledger.covers(input.accountId, env.limits.minBalanceMicros)) {
      throw new AppError('Insufficient balance to place a call. Please top up your account.', 402, 'INSUFFICIENT_BALANCE');
    }
    // The caps again, over every node of the service and atomically: the counts above are this node's.
    const slot = await env.registry.reserve(input.accountId, input.trunk.inboundTrunkId, env.limits);
    if (typeof slot === 'string') throw new AppError('Too many concurrent calls', 429, 'CALL_LIMIT', true);
    let session: CallSession;
    let record: Call;
    let media: RtpSession;
    try {
      ({ session, record, media } = await this.createSession(input));
    } catch (err) {
      await slot.release();
      throw err;
    }
    env.registry.add(session, slot);
    const work = this.dial(session, media, input).catch(async (err: unknown) => {
      session.log.error({ err: (err as Error).message }, 'outbound call failed');
      await session.close('error');
    });
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
    return record;
  }

  /** The call's record (queued) and its session, not yet live. */
  private async createSession(input: PlaceCallInput): Promise<{ session: CallSession; record: Call; media: RtpSession }> {
    const { env } = this;
    const spec = input.trunk.spec;
    const record = await env.recorder.create({
      accountId: input.accountId,
      direction: 'outbound',
      fromNumber: spec.phoneNumber,
      toNumber: input.to,
      assistantId: input.assistant.id,
      phoneNumberId: input.phoneNumberId,
      sipTrunkId: spec.id,
      status: 'queued',
      variables: input.variables ?? null,
      ...(input.campaignId !== undefined ? { campaignId: input.campaignId } : {}),
      ...(input.leadId !== undefined ? { leadId: input.leadId } : {}),
    });
    const media = env.createMedia(mediaOptionsOf(spec));
    const session = new CallSession({
      recordId: record.id,
      uuid: record.uuid,
      direction: 'outbound',
      accountId: input.accountId,
      trunkKey: input.trunk.inboundTrunkId,
      assistantId: input.assistant.id,
      media,
      clock: env.clock,
      logger: env.logger,
      recorder: env.recorder,
      maxDurationMs: maxDurationMs(env, input.assistant),
      mode: input.assistant.mode,
      facts: { from: spec.phoneNumber, to: input.to, trunk: spec.id ?? input.trunk.inboundTrunkId, remote: `${spec.transport ?? 'udp'}:${spec.address}`, codecs: OFFERED_CODECS },
    });
    return { session, record, media };
  }

  private async dial(session: CallSession, media: RtpSession, input: PlaceCallInput): Promise<void> {
    const { env } = this;
    const spec = input.trunk.spec;
    let local: LocalMedia;
    try {
      const ports = await media.allocate();
      local = { address: ports.address, port: ports.rtpPort, srtp: spec.srtp ?? 'off' };
    } catch (err) {
      session.log.warn({ err: (err as Error).message }, 'no RTP ports for an outbound call');
      await session.close('failed');
      return;
    }
    if (session.state !== 'ringing') return;
    const offers = new OutboundOffers(local, createSdpSession(String(Date.now())));
    const target = trunkUri(spec, formatForTrunk(input.to, spec.callingFormat, spec.countryCode));
    const from = formatForTrunk(spec.phoneNumber, spec.callingFormat, spec.countryCode);
    // From carries the trunk's number (carriers check it); the UA's own identity stays as is.
    const scoped = Object.create(this.ua) as UserAgent;
    scoped.localUri = () => `<sip:${from}@${uriHostWithoutPort(spec.address)}>`;
    const invite = new OutgoingInvite(scoped, target, offers.offerFor, { credentials: digestCredentials(spec.username, spec.password) });
    /** The early media's negotiation per early dialog (To-tag): a 200 without SDP keeps its 18x's. */
    const earlyByTag = new Map<string, NegotiatedMedia>();
    invite.on('progress', (res) => {
      if (res.status < 180) return;
      session.markRinging();
      // Early media (RFC 3960): a 18x with SDP answers our offer; media runs from now, so
      // announcements and greetings played before the answer reach us (see docs/EARLY-MEDIA.md).
      if (res.body.length === 0 || !/^application\/sdp\b/i.test(header(res, 'content-type') ?? 'application/sdp')) return;
      try {
        // The offer this 18x answers: the one made for the address the INVITE went out from.
        const sent = offers.sent(invite.advertised ?? local.address);
        media.advertise(sent.local.address);
        const negotiated = processAnswer(res.body.toString('utf8'), sent.offer.offered);
        if (earlyByTag.size < 16) earlyByTag.set(tagOf(header(res, 'to')) ?? '', negotiated);
        session.earlyMedia(negotiated);
      } catch (err) {
        // Unusable early SDP: no early media, the call itself goes on to its final response.
        session.log.info({ status: res.status, err: (err as Error).message }, 'early media SDP not usable');
      }
    });
    void invite.start();

    let noAnswer = false;
    const ringing: Timer = env.clock.setTimeout(() => {
      noAnswer = true;
      invite.cancel();
    }, (input.assistant.config.ringing_time ?? 30) * 1000);
    session.cancelPending = () => invite.cancel();

    let dialog: Dialog;
    try {
      dialog = await invite.result;
    } catch (err) {
      const status = err instanceof InviteFailedError ? err.status : 500;
      if (err instanceof InviteFailedError && err.code === 'no-public-ipv6') {
        env.logger.error({ call: session.uuid, sipTrunkId: spec.id, target }, `outbound call failed: ${err.reason}`);
        await session.close('no-public-ipv6');
        return;
      }
      await session.close(noAnswer ? 'no-answer' : causeForSipStatus(status));
      return;
    } finally {
      ringing.cancel();
    }
    if (session.state !== 'ringing') {
      void dialog.bye();
      return;
    }
    // The offer (and so the address) the answered INVITE carried.
    const sent = offers.sent(invite.advertised ?? local.address);
    media.advertise(sent.local.address);
    let negotiated: NegotiatedMedia | undefined;
    try {
      // RFC 3262 §5: the SDP of a reliable 18x answered our offer; its 200 need not repeat it.
      const early = earlyByTag.get(dialog.remoteTag);
      negotiated = early && !dialog.remoteSdp ? early : processAnswer(dialog.remoteSdp ?? '', sent.offer.offered);
    } catch {
      // The far end answered with SDP we cannot use: hang the dialog up and fail the call.
      void dialog.bye();
      await session.close('failed');
      return;
    }
    session.answered(dialog, negotiated, sent.local, sent.offer.session);
    if (!env.engine) return; // no engine yet: the call stays up until hang-up or max_duration
    try {
      await env.engine(session, input.assistant, input.variables);
      if ((session.state as CallState) === 'active') await session.close('local-hangup');
    } catch (err) {
      session.log.error({ err: (err as Error).message }, 'call engine failed');
      await session.close('error');
    }
  }

  /** Stops placing calls and waits for the ones being set up. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.pending]);
  }
}

