/**
 * A real SIP + RTP phone for integration tests: our UserAgent for signalling (its own port and
 * address, e.g. 127.0.0.2 to play a carrier the trunk does not allow), a raw PCMU leg for media
 * (test-phone-rtp.ts). It can call, hear, send tones and DTMF, hold, hang up, cancel, and answer
 * (or refuse) calls the engine places. test-registrar.ts plays an `auth` trunk's provider.
 */
import type { Dialog } from '../../src/sip/dialog.ts';
import type { SipHeader } from '../../src/sip/message.ts';
import { digestCredentials } from '../../src/sip/user-agent-auth.ts';
import type { IncomingInvite } from '../../src/sip/user-agent-incoming-invite.ts';
import { InviteFailedError, type OutgoingInvite } from '../../src/sip/user-agent-outgoing-invite.ts';
import { UserAgent } from '../../src/sip/user-agent.ts';
import { TrunkAuthenticator } from '../../src/sip/trunk-auth.ts';
import { systemClock } from '../../src/util/clock.ts';
import { PhoneRtp } from './test-phone-rtp.ts';
import type { SrtpSuiteName } from '../../src/media/srtp/suites.ts';
import { parseSdp } from '../../src/media/sdp.ts';

export const FAST_TIMERS = { t1Ms: 50, t2Ms: 400, t4Ms: 100 };

export interface TestPhoneOptions {
  host?: string;
  /** UDP port to listen on (default: ephemeral); 5060 for a carrier a trunk names by host alone. */
  port?: number;
  userName?: string;
  /** User-Agent header (a scanner's name, to test the drop). */
  userAgent?: string;
  /** Where RTP is sent from, when not `host` (a phone behind NAT: its SDP still names `host`). */
  mediaHost?: string;
}

export type AnswerMode = 'answer' | 'ring' | { reject: number };

export interface CallOutcome {
  /** 200 when answered, else the final status (408 for a timeout). */
  status: number;
  /** Provisional statuses seen. */
  provisional: number[];
}

export class PhoneCall {
  dialog: Dialog | undefined;
  readonly provisional: number[] = [];
  /** Resolves on answer or failure. */
  readonly outcome: Promise<CallOutcome>;
  /** Resolves when the dialog ends (either side), with the reason. */
  readonly ended: Promise<string>;
  private resolveEnded!: (reason: string) => void;

  constructor(
    readonly rtp: PhoneRtp,
    readonly invite: OutgoingInvite | undefined,
    dialog?: Dialog,
  ) {
    this.ended = new Promise((r) => (this.resolveEnded = r));
    if (dialog) this.attach(dialog);
    if (!invite) {
      this.outcome = Promise.resolve({ status: 200, provisional: [] });
      return;
    }
    invite.on('progress', (res) => this.provisional.push(res.status));
    this.outcome = invite.result.then(
      (d) => {
        this.attach(d);
        if (d.remoteSdp) rtp.setRemote(d.remoteSdp);
        return { status: 200, provisional: this.provisional };
      },
      (err: unknown) => {
        rtp.stop();
        this.resolveEnded('failed');
        return { status: err instanceof InviteFailedError ? err.status : 500, provisional: this.provisional };
      },
    );
  }

  private attach(d: Dialog): void {
    this.dialog = d;
    d.once('ended', ({ reason }) => {
      this.rtp.stop();
      this.resolveEnded(reason);
    });
  }

  get callId(): string {
    return this.invite?.callId ?? this.dialog?.callId ?? '';
  }

  cancel(): void {
    this.invite?.cancel();
  }

  async hangup(): Promise<number | undefined> {
    this.rtp.stop();
    const res = await this.dialog?.bye();
    return res?.status;
  }

  /** re-INVITE with a=sendonly (we hold them) or back to sendrecv; resolves with the status. */
  async reinvite(direction: 'sendonly' | 'sendrecv'): Promise<number> {
    if (!this.dialog) throw new Error('not answered');
    const res = await this.dialog.reinvite(this.rtp.sdp(direction));
    if (res.status === 200 && res.body.length > 0) this.rtp.setRemote(res.body.toString('utf8'));
    return res.status;
  }

  /** Audio heard so far (8 kHz). */
  get heard(): number[] {
    return this.rtp.heard;
  }
}

export class TestPhone {
  answerMode: AnswerMode = 'answer';
  /** Challenge incoming INVITEs with digest (a carrier that authenticates us). */
  challenge: TrunkAuthenticator | undefined;
  challengeCredentials = { username: 'trunkuser', password: 'trunk-secret' };
  /** Answer SDES-SRTP offers with this suite (under the offer's tag for it, on its profile). */
  answerSrtp: SrtpSuiteName | undefined;
  /** Calls the engine placed to us, as they arrive. */
  readonly incoming: IncomingInvite[] = [];
  readonly answered: PhoneCall[] = [];
  private readonly legs = new Set<PhoneRtp>();

  private constructor(
    readonly ua: UserAgent,
    readonly host: string,
    readonly mediaHost: string = host,
  ) {
    ua.onInvite = (inc) => void this.onInvite(inc);
  }

  static async create(opts: TestPhoneOptions = {}): Promise<TestPhone> {
    const host = opts.host ?? '127.0.0.1';
    const ua = await UserAgent.create({
      host,
      port: opts.port ?? 0,
      transports: ['udp'],
      userName: opts.userName ?? 'phone',
      timers: FAST_TIMERS,
      ...(opts.userAgent ? { userAgent: opts.userAgent } : {}),
    });
    return new TestPhone(ua, host, opts.mediaHost ?? host);
  }

  get port(): number {
    return this.ua.port;
  }

  /** Places a call; `outcome` tells how it went, `ended` when it is over. */
  async dial(
    target: string,
    opts: {
      credentials?: { username: string; password: string };
      headers?: SipHeader[];
      offer?: string;
      telephoneEvent?: boolean;
      /** Offer SDES-SRTP with this suite (on RTP/SAVP unless `profile` says otherwise). */
      srtp?: { suite: SrtpSuiteName; profile?: string };
    } = {},
  ): Promise<PhoneCall> {
    const rtp = await this.leg();
    if (opts.telephoneEvent === false) rtp.telephoneEvent = false;
    if (opts.srtp) rtp.secure(opts.srtp.suite, opts.srtp.profile);
    const invite = this.ua.invite(target, opts.offer ?? rtp.sdp(), {
      ...(opts.credentials ? { credentials: digestCredentials(opts.credentials.username, opts.credentials.password) } : {}),
      ...(opts.headers ? { headers: opts.headers } : {}),
    });
    return new PhoneCall(rtp, invite);
  }

  /** Dial and wait for the outcome; throws unless it was answered. */
  async call(target: string, opts: Parameters<TestPhone['dial']>[1] = {}): Promise<PhoneCall> {
    const call = await this.dial(target, opts);
    const outcome = await call.outcome;
    if (outcome.status !== 200) throw new Error(`call to ${target} failed with ${outcome.status}`);
    return call;
  }

  private async leg(): Promise<PhoneRtp> {
    const rtp = await PhoneRtp.open(this.mediaHost, this.host);
    this.legs.add(rtp);
    return rtp;
  }

  private async onInvite(inc: IncomingInvite): Promise<void> {
    if (this.challenge) {
      const verdict = this.challenge.verify(inc.request, this.challengeCredentials);
      if (verdict !== 'ok') {
        inc.reject(verdict === 'failed' ? 403 : 401, undefined, verdict === 'failed' ? [] : this.challenge.challengeHeaders());
        return;
      }
    }
    this.incoming.push(inc);
    const mode = this.answerMode;
    if (typeof mode === 'object') {
      inc.reject(mode.reject);
      return;
    }
    inc.ringing();
    if (mode === 'ring') return;
    const rtp = await this.leg();
    if (inc.offer && this.answerSrtp) {
      const m = parseSdp(inc.offer).media.find((x) => x.type === 'audio');
      const line = m?.cryptos.find((c) => c.split(/\s+/)[1] === this.answerSrtp);
      if (m && line) rtp.secure(this.answerSrtp, m.protocol, Number(line.split(/\s+/)[0]));
    }
    if (inc.offer) rtp.setRemote(inc.offer);
    if (inc.state !== 'pending') return;
    const dialog = inc.accept(rtp.sdp());
    this.answered.push(new PhoneCall(rtp, undefined, dialog));
  }

  /** Releases every leg and the UA (no BYE: hang up calls first when it matters). */
  async close(): Promise<void> {
    for (const leg of this.legs) leg.close();
    this.legs.clear();
    await this.ua.close();
  }
}

/** A carrier-side authenticator for `TestPhone.challenge`. */
export function carrierAuth(realm = 'carrier.test'): TrunkAuthenticator {
  return new TrunkAuthenticator(systemClock, realm);
}

export function uri(user: string, port: number, host = '127.0.0.1'): string {
  return `sip:${user}@${host.includes(':') ? `[${host}]` : host}:${port}`;
}
