/**
 * A browser's call into an assistant: admitted as a phone call is (the engine not draining, the
 * account's live-call cap, the balance a call needs), recorded with direction `web`, run as a
 * CallSession on WebRtcMedia by the same engine hook as SIP calls (CallEnv.engine: pipeline,
 * multimodal or dualplex, the call rules, recording, tape, post-call billing and webhooks).
 *
 * The session is "ringing" from the offer until ICE and DTLS connect; then it is answered
 * (`connected`), which starts the max-duration timer and the engine. No connection within
 * `connectTimeoutMs`: the call ends `failed`.
 */
import type { Logger } from 'pino';
import { maxDurationMs, type CallEnv } from '../call/call-env.ts';
import { CallSession, type CallEnd, type EndCause } from '../call/call-session.ts';
import type { IceServerConfig } from '../config.ts';
import type { Timer } from '../util/clock.ts';
import { WebRtcMedia } from './webrtc-media.ts';
import { WebRtcPeer, type IceCandidateMessage } from './peer.ts';

/** The registry key web calls share (per-trunk caps do not apply to them; per-account ones do). */
export const WEB_TRUNK_KEY = 'webrtc';

export interface WebCallsOptions {
  env: CallEnv;
  iceServers: readonly IceServerConfig[];
  portRange?: [number, number] | undefined;
  /** SIP_HOST: the address ICE host candidates are on (a wildcard: every interface). */
  host: string;
  /** From the answer to a connected peer (ICE + DTLS); default 20 s. */
  connectTimeoutMs?: number;
}

export class WebCallRefused extends Error {
  constructor(
    readonly code: 'SHUTTING_DOWN' | 'NOT_FOUND' | 'CALL_LIMIT' | 'INSUFFICIENT_BALANCE' | 'BAD_OFFER',
    message: string,
  ) {
    super(message);
  }
}

export interface WebCallEvents {
  candidate(c: IceCandidateMessage): void;
  answered(call: { id: number; uuid: string }): void;
  ended(call: { id: number; uuid: string }, end: CallEnd): void;
}

export interface WebCall {
  readonly id: number;
  readonly uuid: string;
  /** The answer to the browser's offer. */
  readonly answerSdp: string;
  addCandidate(c: IceCandidateMessage): Promise<void>;
  hangup(cause?: EndCause): Promise<void>;
}

export class WebCalls {
  private readonly log: Logger;

  constructor(private readonly options: WebCallsOptions) {
    this.log = options.env.logger.child({ part: 'webrtc' });
  }

  get iceServers(): readonly IceServerConfig[] {
    return this.options.iceServers;
  }

  async open(accountId: number, assistantId: number, offerSdp: string, events: WebCallEvents): Promise<WebCall> {
    const { env } = this.options;
    const startedAt = env.clock.monotonic();
    if (env.registry.isDraining) throw new WebCallRefused('SHUTTING_DOWN', 'The engine is shutting down');
    const assistant = await env.repos.assistants.get(accountId, assistantId);
    if (!assistant) throw new WebCallRefused('NOT_FOUND', 'No such assistant');
    if (env.registry.activeForAccount(accountId) >= env.limits.maxPerAccount) throw new WebCallRefused('CALL_LIMIT', 'Too many concurrent calls');
    if (!(await env.repos.ledger.covers(accountId, env.limits.minBalanceMicros))) {
      throw new WebCallRefused('INSUFFICIENT_BALANCE', 'Insufficient balance to place a call. Please top up your account.');
    }
    const record = await env.recorder.create({
      accountId,
      direction: 'web',
      fromNumber: 'web',
      toNumber: `assistant:${assistant.id}`,
      assistantId: assistant.id,
      phoneNumberId: null,
      sipTrunkId: null,
      status: 'ringing',
    });
    const media = new WebRtcMedia({ clock: env.clock });
    const session = new CallSession({
      recordId: record.id,
      uuid: record.uuid,
      direction: 'web',
      accountId,
      trunkKey: WEB_TRUNK_KEY,
      assistantId: assistant.id,
      media,
      clock: env.clock,
      logger: env.logger,
      recorder: env.recorder,
      maxDurationMs: maxDurationMs(env, assistant),
      mode: assistant.mode,
      facts: { from: 'web', to: `assistant:${assistant.id}`, trunk: WEB_TRUNK_KEY, remote: 'webrtc', codecs: ['opus'] },
      inviteAtMs: startedAt,
    });
    env.registry.add(session);
    const call = { id: record.id, uuid: record.uuid };
    let connectTimer: Timer | undefined;
    const peer = new WebRtcPeer({ iceServers: this.options.iceServers.map((s) => ({ urls: s.urls, ...(s.username !== undefined ? { username: s.username } : {}), ...(s.credential !== undefined ? { credential: s.credential } : {}) })), portRange: this.options.portRange, host: this.options.host, logger: session.log }, media, {
      candidate: (c) => events.candidate(c),
      state: (state) => {
        if (state === 'connected') {
          connectTimer?.cancel();
          if (session.state !== 'ringing') return;
          session.connected('opus');
          events.answered(call);
          void this.runEngine(session, assistant);
        } else {
          void session.close(session.state === 'active' ? 'rtp-timeout' : 'failed');
        }
      },
    });
    session.once('ended', (end) => {
      connectTimer?.cancel();
      void peer.close();
      events.ended(call, end);
    });
    let answerSdp: string;
    try {
      answerSdp = await peer.answer(offerSdp);
    } catch (err) {
      session.log.info({ err: (err as Error).message }, 'browser offer not usable');
      await session.close('failed');
      throw new WebCallRefused('BAD_OFFER', 'The offer has no usable audio (Opus)');
    }
    if (session.state === 'ringing') {
      connectTimer = env.clock.setTimeout(() => {
        session.log.info('browser call never connected (ICE/DTLS): giving up');
        void session.close('failed');
      }, this.options.connectTimeoutMs ?? 20_000);
    }
    return {
      ...call,
      answerSdp,
      addCandidate: (c) => peer.addCandidate(c),
      hangup: (cause: EndCause = 'remote-hangup') => session.close(cause),
    };
  }

  /** As a SIP call's: the engine owns the conversation; when it returns on its own, the call is over. */
  private async runEngine(session: CallSession, assistant: Parameters<NonNullable<CallEnv['engine']>>[1]): Promise<void> {
    const engine = this.options.env.engine;
    try {
      if (engine) await engine(session, assistant);
      else return;
      if (session.state === 'active') await session.close('local-hangup');
    } catch (err) {
      this.log.error({ call: session.uuid, err: (err as Error).message }, 'call engine failed');
      await session.close('error');
    }
  }
}
