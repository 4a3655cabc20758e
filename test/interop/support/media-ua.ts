/**
 * Our own SIP stack and media in-process, as the interop peers see the engine: a UserAgent on
 * 127.0.0.1 with a PortPool and one RtpSession per call. As UAS it answers every INVITE and echoes
 * the caller's audio back (the diagnostics echo), or only rings (`answer: 'ring'`); as UAC it calls a peer and plays a tone. Every
 * call records what it heard (16 kHz) for the assertions.
 */
import { randomBytes } from 'node:crypto';
import { concatPcm, type AudioFrame } from '../../../src/audio/frame.ts';
import { resample } from '../../../src/audio/resample.ts';
import { PortPool } from '../../../src/media/port-pool.ts';
import { RtpSession, type RtpSessionStats } from '../../../src/media/rtp-session.ts';
import { answerOffer, createOffer, processAnswer, type NegotiatedMedia } from '../../../src/media/sdp-negotiate.ts';
import { createSdpSession } from '../../../src/media/sdp-write.ts';
import type { Dialog, DialogEndReason } from '../../../src/sip/dialog.ts';
import type { IncomingInvite } from '../../../src/sip/user-agent-incoming-invite.ts';
import { UserAgent } from '../../../src/sip/user-agent.ts';
import type { SipTls } from '../../../src/sip/tls/tls-streams.ts';
import type { SrtpPolicy } from '../../../src/media/srtp/sdes.ts';
import { engineRtpRange, LOOPBACK, tone, within } from './tools.ts';

export interface MediaCall {
  direction: 'inbound' | 'outbound';
  dialog: Dialog;
  session: RtpSession;
  media: NegotiatedMedia;
  /** RFC 4733 digits received, in order. */
  dtmf: string[];
  /** Everything heard, 16 kHz (silence included: one frame per 20 ms). */
  heard(): Int16Array;
  ended: Promise<DialogEndReason>;
  stats(): RtpSessionStats;
  /** Our BYE; resolves with the final status (undefined if the dialog was already over). */
  hangup(): Promise<number | undefined>;
}

export class MediaUa {
  readonly calls: MediaCall[] = [];
  readonly invites: IncomingInvite[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(
    readonly ua: UserAgent,
    readonly pool: PortPool,
    private readonly mode: { answer: 'echo' | 'ring'; srtp: SrtpPolicy },
  ) {}

  static async start(options: { userName?: string; answer?: 'echo' | 'ring'; tls?: SipTls; srtp?: SrtpPolicy } = {}): Promise<MediaUa> {
    const ua = await UserAgent.create({
      host: LOOPBACK,
      port: 0,
      transports: ['udp', 'tcp'],
      userName: options.userName ?? 'echo',
      ...(options.tls ? { tls: options.tls } : {}),
    });
    const pool = new PortPool({ host: LOOPBACK, ...engineRtpRange() });
    const self = new MediaUa(ua, pool, { answer: options.answer ?? 'echo', srtp: options.srtp ?? 'off' });
    ua.onInvite = (incoming) => void self.onInvite(incoming);
    return self;
  }

  get port(): number {
    return this.ua.port;
  }

  uri(user = 'echo'): string {
    return `sip:${user}@${LOOPBACK}:${this.ua.port}`;
  }

  /** Our URI over TLS (the UA's TLS listener). */
  tlsUri(user = 'echo'): string {
    return `sip:${user}@${LOOPBACK}:${this.ua.tlsPort};transport=tls`;
  }

  private notify(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** The n-th INVITE received (0-based), answered or not. */
  async invite(index = 0, timeoutMs = 8000): Promise<IncomingInvite> {
    const deadline = Date.now() + timeoutMs;
    while (!this.invites[index]) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for INVITE #${index + 1}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.invites[index]!;
  }

  /** The n-th call (0-based), waiting up to `timeoutMs` for it. */
  async call(index = 0, timeoutMs = 8000): Promise<MediaCall> {
    const existing = this.calls[index];
    if (existing) return existing;
    return within(
      new Promise<MediaCall>((resolve) => {
        const wake = () => {
          const call = this.calls[index];
          if (call) {
            this.waiters.delete(wake);
            resolve(call);
          }
        };
        this.waiters.add(wake);
      }),
      timeoutMs,
      `call #${index + 1} to reach our UA`,
    );
  }

  private async onInvite(incoming: IncomingInvite): Promise<void> {
    this.invites.push(incoming);
    this.notify();
    incoming.ringing();
    if (this.mode.answer === 'ring') return; // rings until CANCEL
    const session = new RtpSession({ pool: this.pool, publicAddress: LOOPBACK, rtpTimeoutMs: 0 });
    try {
      const local = await session.allocate();
      const answer = answerOffer(incoming.offer ?? '', { address: LOOPBACK, port: local.rtpPort, srtp: this.mode.srtp }, createSdpSession(randomBytes(4).readUInt32BE(0).toString()));
      session.start(answer);
      const dialog = incoming.accept(answer.answerSdp);
      const heard: Int16Array[] = [];
      this.track('inbound', dialog, session, answer, heard);
      void echo(session, heard);
    } catch (err) {
      await session.close();
      incoming.reject(488, (err as Error).message.slice(0, 60));
    }
  }

  /** Calls `target`, plays `toneHz` at 16 kHz for as long as the call lasts. */
  async dial(target: string, toneHz: number): Promise<MediaCall> {
    const session = new RtpSession({ pool: this.pool, publicAddress: LOOPBACK, rtpTimeoutMs: 0 });
    const local = await session.allocate();
    const offer = createOffer({ address: LOOPBACK, port: local.rtpPort, srtp: this.mode.srtp }, createSdpSession(randomBytes(4).readUInt32BE(0).toString()));
    const invite = this.ua.invite(target, offer.offerSdp);
    let dialog: Dialog;
    try {
      dialog = await within(invite.result, 10_000, `an answer from ${target}`);
    } catch (err) {
      invite.cancel();
      await session.close();
      throw err;
    }
    const media = processAnswer(dialog.remoteSdp ?? '', offer.offered);
    session.start(media);
    const heard: Int16Array[] = [];
    const call = this.track('outbound', dialog, session, media, heard);
    void record(session, heard);
    // 20 s of tone queued at once (under the writer's 60 s cap); the call ends long before.
    const pcm = tone(toneHz, 20, 16_000);
    for (let at = 0; at + 320 <= pcm.length; at += 320) session.outbound.write({ samples: pcm.slice(at, at + 320), sampleRate: 16_000 });
    return call;
  }

  private track(direction: 'inbound' | 'outbound', dialog: Dialog, session: RtpSession, media: NegotiatedMedia, heard: Int16Array[]): MediaCall {
    // Stats are taken as the dialog ends, before close(), so they survive for the assertions.
    let finalStats: RtpSessionStats | undefined;
    const dtmf: string[] = [];
    session.on('dtmf', ({ digit }) => dtmf.push(digit));
    // Keys in SIP INFO join the media's dtmf event, as CallSession wires them.
    dialog.on('dtmf', ({ digit, durationMs }) => session.signalledDtmf(digit, durationMs));
    const ended = new Promise<DialogEndReason>((resolve) => {
      dialog.once('ended', ({ reason }) => {
        finalStats = session.stats();
        void session.close('call ended');
        resolve(reason);
      });
    });
    const call: MediaCall = {
      direction,
      dialog,
      session,
      media,
      dtmf,
      ended,
      heard: () => concatPcm(heard),
      stats: () => finalStats ?? session.stats(),
      hangup: async () => {
        if (dialog.isEnded) return undefined;
        const res = await dialog.bye();
        return res?.status;
      },
    };
    this.calls.push(call);
    this.notify();
    return call;
  }

  async close(): Promise<void> {
    await Promise.all(this.calls.map((c) => c.session.close()));
    await this.ua.close();
  }
}

async function record(session: RtpSession, into: Int16Array[]): Promise<void> {
  for await (const frame of session.inbound) into.push(frame.samples);
}

/** The echo: every inbound frame goes straight back out. */
async function echo(session: RtpSession, into: Int16Array[]): Promise<void> {
  for await (const frame of session.inbound as AsyncIterable<AudioFrame>) {
    into.push(frame.samples);
    session.outbound.write(frame);
  }
}

/** 16 kHz → 8 kHz for the tone detector when comparing with an 8 kHz peer. */
export function to8k(pcm: Int16Array): Int16Array {
  return resample(pcm, 16_000, 8000);
}
