/**
 * A second call leg placed by call control (a bridged blind transfer, the supervisor of a warm
 * transfer): an INVITE through a trunk, exactly as outbound-dialer.ts dials (number formatted for
 * the trunk, digest credentials), with its own RtpSession but no call record and no engine of
 * its own: the first call's record lists it under `details`.
 *
 * The caller ID (caller-id.ts) goes in From and P-Asserted-Identity, both in the trunk's calling
 * format on the trunk's host; a passed-through customer number adds Diversion with the trunk's
 * number (RFC 5806: reason=unconditional, counter=1).
 */
import type { AudioFrame } from '../../audio/frame.ts';
import type { RtpSession } from '../../media/rtp-session.ts';
import { processAnswer } from '../../media/sdp-negotiate.ts';
import { createSdpSession } from '../../media/sdp-write.ts';
import type { Dialog } from '../../sip/dialog.ts';
import { trunkUri, uriHostWithoutPort, type ProvisionedTrunk } from '../../sip/trunk-registry.ts';
import { digestCredentials } from '../../sip/user-agent-auth.ts';
import { InviteFailedError, OutgoingInvite } from '../../sip/user-agent-outgoing-invite.ts';
import type { UserAgent } from '../../sip/user-agent.ts';
import type { Clock } from '../../util/clock.ts';
import { mediaOptionsOf, type CallMediaOptions } from '../call-env.ts';
import { formatForTrunk } from '../numbers.ts';
import { OutboundOffers } from '../outbound-offer.ts';
import { CALLER_ID_REFUSALS, trunkCallerId, type CallerId } from './caller-id.ts';

export interface LegRequest {
  trunk: ProvisionedTrunk;
  /** E.164 number, an extension, or a sip: URI (sent as is). */
  to: string;
  /** The identity presented; the trunk's own number by default. */
  callerId?: CallerId;
  ringingMs: number;
  signal?: AbortSignal;
}

export type LegFailure = {
  ok: false;
  reason: 'busy' | 'no-answer' | 'rejected' | 'failed';
  status: number;
  /** 'no-public-ipv6': the carrier is IPv6 and SIP_PUBLIC_HOST6 is unset, so nothing was sent. */
  cause?: 'no-public-ipv6';
};

export interface LegDeps {
  ua: UserAgent;
  clock: Clock;
  createMedia(options?: CallMediaOptions): RtpSession;
}

export class Leg {
  readonly ended: Promise<string>;
  readonly answeredAt: number;
  private resolveEnded!: (why: string) => void;
  private closed = false;

  constructor(
    readonly dialog: Dialog,
    readonly media: RtpSession,
    readonly target: string,
    clock: Clock,
  ) {
    this.answeredAt = clock.now();
    this.ended = new Promise((r) => (this.resolveEnded = r));
    dialog.once('ended', ({ reason }) => void this.hangup(reason === 'remote-bye' ? 'remote-hangup' : reason));
    media.on('rtpTimeout', () => void this.hangup('rtp-timeout'));
    media.on('failed', () => void this.hangup('error'));
    void this.pump();
  }

  /** Where the far end's frames go; none drops them. */
  onFrame: ((frame: AudioFrame) => void) | undefined;

  /**
   * Reads the leg's audio from answer on, so nothing piles up before someone listens: a backlog
   * in the inbound queue would become a second of delay for the rest of a bridged call.
   */
  private async pump(): Promise<void> {
    for await (const f of this.media.inbound) this.onFrame?.(f);
  }

  get callId(): string {
    return this.dialog.callId;
  }

  write(frame: AudioFrame): boolean {
    return this.media.outbound.write(frame);
  }

  /** BYE (unless they already left) and release the ports. Idempotent. */
  async hangup(why = 'local-hangup'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.dialog.isEnded) void this.dialog.bye();
    this.dialog.removeAllListeners();
    await this.media.close(why);
    this.resolveEnded(why);
  }
}

function failureOf(status: number): LegFailure {
  if (status === 486 || status === 600) return { ok: false, reason: 'busy', status };
  if (status === 408 || status === 480 || status === 487) return { ok: false, reason: 'no-answer', status };
  if (status === 403 || status === 603 || status === 404) return { ok: false, reason: 'rejected', status };
  return { ok: false, reason: 'failed', status };
}

/** The SIP target for `to` through `trunk`. */
export function legTarget(trunk: ProvisionedTrunk, to: string): string {
  if (/^sips?:/i.test(to)) return to;
  const spec = trunk.spec;
  const user = to.startsWith('+') ? formatForTrunk(to, spec.callingFormat, spec.countryCode) : to;
  return trunkUri(spec, user);
}

/** From (a name-addr) and the identity headers for `id` through `trunk`. */
export function callerIdHeaders(trunk: ProvisionedTrunk, id: CallerId): { from: string; headers: { name: string; value: string }[] } {
  const spec = trunk.spec;
  const host = uriHostWithoutPort(spec.address);
  const uri = (n: string) => `<sip:${n.startsWith('+') ? formatForTrunk(n, spec.callingFormat, spec.countryCode) : n}@${host}>`;
  const headers = [{ name: 'p-asserted-identity', value: uri(id.number) }];
  if (id.diversion) headers.push({ name: 'diversion', value: `${uri(id.diversion)};reason=unconditional;counter=1;privacy=off` });
  return { from: uri(id.number), headers };
}

export type CallerIdDial = ({ ok: true; leg: Leg } | LegFailure) & {
  /** The caller ID the final attempt presented. */
  callerId: CallerId;
  /** A passthrough the carrier refused (its status) before the trunk's own number was used. */
  passthroughRefused?: number;
};

/**
 * dialLeg with a passed-through customer number, falling back once to the trunk's own number
 * when the carrier refuses that caller ID (CALLER_ID_REFUSALS).
 */
export async function dialWithCallerId(deps: LegDeps, req: LegRequest & { callerId: CallerId }): Promise<CallerIdDial> {
  const first = await dialLeg(deps, req);
  if (first.ok || req.callerId.kind !== 'customer' || !CALLER_ID_REFUSALS.has(first.status) || req.signal?.aborted) {
    return { ...first, callerId: req.callerId };
  }
  const callerId = trunkCallerId(req.trunk.spec);
  return { ...(await dialLeg(deps, { ...req, callerId })), callerId, passthroughRefused: first.status };
}

export async function dialLeg(deps: LegDeps, req: LegRequest): Promise<{ ok: true; leg: Leg } | LegFailure> {
  const spec = req.trunk.spec;
  const media = deps.createMedia(mediaOptionsOf(spec));
  let local;
  try {
    const ports = await media.allocate();
    local = { address: ports.address, port: ports.rtpPort, srtp: spec.srtp ?? 'off' };
  } catch {
    await media.close('failed');
    return { ok: false, reason: 'failed', status: 503 };
  }
  const offers = new OutboundOffers(local, createSdpSession(String(Date.now())));
  const target = legTarget(req.trunk, req.to);
  const identity = callerIdHeaders(req.trunk, req.callerId ?? trunkCallerId(spec));
  // Same trick as the outbound dialer: From carries the chosen caller id, the UA stays as is.
  const scoped = Object.create(deps.ua) as UserAgent;
  scoped.localUri = () => identity.from;
  const invite = new OutgoingInvite(scoped, target, offers.offerFor, { credentials: digestCredentials(spec.username, spec.password), headers: identity.headers });
  void invite.start();
  let noAnswer = false;
  const ringing = deps.clock.setTimeout(() => {
    noAnswer = true;
    invite.cancel();
  }, req.ringingMs);
  const onAbort = (): void => invite.cancel();
  req.signal?.addEventListener('abort', onAbort, { once: true });
  let dialog: Dialog;
  try {
    dialog = await invite.result;
  } catch (err) {
    await media.close('failed');
    if (noAnswer) return { ok: false, reason: 'no-answer', status: 408 };
    if (err instanceof InviteFailedError && err.code === 'no-public-ipv6') return { ok: false, reason: 'failed', status: err.status, cause: 'no-public-ipv6' };
    return failureOf(err instanceof InviteFailedError ? err.status : 500);
  } finally {
    ringing.cancel();
    req.signal?.removeEventListener('abort', onAbort);
  }
  if (req.signal?.aborted) {
    void dialog.bye();
    await media.close('cancelled');
    return { ok: false, reason: 'failed', status: 487 };
  }
  const sent = offers.sent(invite.advertised ?? local.address);
  media.advertise(sent.local.address);
  try {
    media.start(processAnswer(dialog.remoteSdp ?? '', sent.offer.offered));
  } catch {
    void dialog.bye();
    await media.close('failed');
    return { ok: false, reason: 'failed', status: 488 };
  }
  return { ok: true, leg: new Leg(dialog, media, target, deps.clock) };
}
