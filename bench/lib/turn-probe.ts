/**
 * Per-turn timestamps inside the engine process, for the engine-latency benchmark. Loaded by
 * engine-child.ts (option `turns`) before the engine starts; nothing in src/ knows about it.
 * Every time is lib/mono.ts's machine-wide monotonic clock, so it can be set against the
 * stand-ins' own reports and the phones' arrival times.
 *
 * How it finds things (each a thin wrapper, a few µs per turn or per packet):
 * - the call: `CallEnv.engine` runs inside an AsyncLocalStorage scope naming the call (its SIP
 *   Call-ID); `CascadeCall.run` remembers that name for its instance;
 * - the end-of-turn decision: `CascadeCall.onEndOfTurn` is entered synchronously in the tick in
 *   which turn-taking decided (before the bounded wait for the STT final), so its entry time is
 *   the decision's time;
 * - the rest of the turn from the cascade's own timeline (`CascadeCall.emit`): `end-of-turn`
 *   (after the STT final wait; `taken`), `turn-start`, `assistant-audio-start` (the reply's first
 *   frame handed to the call's outbound audio), `interruption` (barge-in decided);
 * - provider requests: `http.request`, which the `openai` clients' fetch (src/providers/
 *   http-fetch.ts) sends through, and `globalThis.fetch` for what it hands on, add
 *   `x-bench-call` so the stand-ins can report per call, and note when the turn's first chat and
 *   speech requests left and when their response headers came back;
 * - the first RTP packet of the reply: `dgram.Socket.prototype.send` on the call's RTP socket,
 *   or, with RTP in its I/O thread (the default), the packet's due time when it is handed over
 *   (`ThreadRtpSocket.sendAt`; the thread sends it then);
 *   the first PCMU packet with audible content (RMS ≥ 200 after µ-law decoding) once the
 *   reply's first frame was written. After a barge-in decision, every audible packet sent on the
 *   call until its next end-of-turn decision is noted (the last one is what the caller heard last).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import dgram from 'node:dgram';
import http from 'node:http';
import { CascadeCall } from '../../src/call/cascade/cascade-call.ts';
import type { TimelineEvent } from '../../src/call/cascade/timeline.ts';
import type { CallEngine, CallEnv } from '../../src/call/call-env.ts';
import type { CallSession } from '../../src/call/call-session.ts';
import { ulaw } from '../../src/media/codecs/g711.ts';
import { mono } from './mono.ts';
import { ThreadRtpSocket } from '../../src/media/rtp-io/socket-proxy.ts';

export interface TurnRecord {
  /** SIP Call-ID. */
  call: string;
  /** Turn-taking decided end of turn (CascadeCall.onEndOfTurn entered). */
  decidedAt: number;
  /** The engine's endpointing wait before the decision (silence after speech), for reference. */
  endpointingMs: number;
  reason: string;
  /** `end-of-turn` emitted: the STT final (if one was awaited) is in. */
  settledAt?: number;
  taken?: boolean;
  turnId?: number;
  /** The turn's first chat-completions request handed to fetch, and its response headers. */
  llmRequestAt?: number;
  llmHeadersAt?: number;
  /** The turn's first speech request handed to fetch, and its response headers. */
  ttsRequestAt?: number;
  ttsHeadersAt?: number;
  /** The reply's first frame written to the call's outbound audio (assistant-audio-start). */
  firstFrameAt?: number;
  /** The first audible PCMU packet of the reply handed to socket.send. */
  firstRtpAt?: number;
  /** Frames already waiting in the RTP session's send queue when the first one was written. */
  queuedAtFirstFrame?: number;
  /** Overlap actions (duck, pause, resume) between the decision and the first RTP packet. */
  overlaps?: string[];
  /** The RTP send path between the first frame written and the first audible packet: frames it dropped (as late after a stall, or otherwise) and the stall time it owed at the first frame. */
  outbound?: { dropped: number; lateDropped: number; lagAtFirstFrame: number | undefined; sendingAtFirstFrame: boolean | undefined };
}

export interface BargeRecord {
  call: string;
  /** The interruption was decided (timeline `interruption`, taken). */
  decidedAt: number;
  /** Audible packets sent on the call after the decision, and the last one's send time. */
  audibleAfter: number;
  lastAudibleAt?: number;
}

interface CallTag {
  id: string;
  /** The RTP session's send path (for what waited ahead of the reply, and what it dropped). */
  out?: () => OutboundPeek | undefined;
  /** Its counters when the reply's first frame was written. */
  outAtFirstFrame?: OutboundPeek;
  current?: TurnRecord;
  awaitingRtp?: TurnRecord;
  barge?: BargeRecord;
}

const AUDIBLE_RMS = 200;

interface OutboundPeek {
  queue: number;
  dropped: number;
  lateDropped: number;
  lag: number | undefined;
  sending: boolean | undefined;
}

export interface TurnProbe {
  /** After startEngine: run every call's engine in its scope. */
  attach(env: CallEnv): void;
  /** Records so far (drains). */
  drain(): { turns: TurnRecord[]; barges: BargeRecord[] };
}

export function installTurnProbe(rtpPortMin: number, rtpPortMax: number): TurnProbe {
  const als = new AsyncLocalStorage<CallTag>();
  const tags = new WeakMap<object, CallTag>();
  const socketTags = new WeakMap<object, CallTag | null>();
  let turns: TurnRecord[] = [];
  let barges: BargeRecord[] = [];

  // µ-law byte → linear sample, once.
  const decode = ulaw.decode(Uint8Array.from({ length: 256 }, (_, i) => i));
  const audible = (buf: Uint8Array, from: number): boolean => {
    let sum = 0;
    const n = buf.length - from;
    for (let i = from; i < buf.length; i++) {
      const s = decode[buf[i]!]!;
      sum += s * s;
    }
    return n > 0 && Math.sqrt(sum / n) >= AUDIBLE_RMS;
  };

  // 1. Provider requests. The openai clients' fetch (src/providers/http-fetch.ts) calls
  // `http.request(url, { method, headers, agent })` on the module object, inside the call's async
  // context; anything it does not take goes to globalThis.fetch (read when a client is
  // constructed, so both are installed before startEngine).
  type Kind = 'llm' | 'tts';
  const kindOf = (url: string): Kind | undefined => (url.includes('/chat/completions') ? 'llm' : url.includes('/audio/speech') ? 'tts' : undefined);
  /** The turn's record when this is its first request of `kind`: its send time is noted. */
  const firstOfTurn = (tag: { current?: TurnRecord }, kind: Kind | undefined): TurnRecord | undefined => {
    const rec = tag.current && tag.current.settledAt !== undefined ? tag.current : undefined;
    if (rec === undefined || kind === undefined || rec[kind === 'llm' ? 'llmRequestAt' : 'ttsRequestAt'] !== undefined) return undefined;
    rec[kind === 'llm' ? 'llmRequestAt' : 'ttsRequestAt'] = mono();
    return rec;
  };
  const headersCame = (rec: TurnRecord, kind: Kind): void => {
    rec[kind === 'llm' ? 'llmHeadersAt' : 'ttsHeadersAt'] = mono();
  };
  const origRequest = http.request;
  http.request = function benchRequest(this: unknown, ...args: unknown[]): http.ClientRequest {
    const tag = als.getStore();
    const [url, options] = args;
    if (!tag || !(url instanceof URL) || typeof options !== 'object' || options === null) return (origRequest as (...a: unknown[]) => http.ClientRequest).apply(http, args);
    const o = options as http.RequestOptions;
    o.headers = { ...(o.headers as Record<string, string>), 'x-bench-call': tag.id };
    const kind = kindOf(url.href);
    const rec = firstOfTurn(tag, kind);
    const req = (origRequest as (...a: unknown[]) => http.ClientRequest).apply(http, args);
    if (rec) req.once('response', () => headersCame(rec, kind!));
    return req;
  } as typeof http.request;
  const origFetch = globalThis.fetch;
  globalThis.fetch = async function benchFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const tag = als.getStore();
    if (!tag) return origFetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set('x-bench-call', tag.id);
    const kind = kindOf(url);
    const rec = firstOfTurn(tag, kind);
    const res = await origFetch(input, { ...init, headers });
    if (rec) headersCame(rec, kind!);
    return res;
  } as typeof fetch;

  // 2. The cascade's decision and timeline.
  const proto = CascadeCall.prototype as unknown as Record<string, (...args: any[]) => any>;
  for (const name of ['run', 'onEndOfTurn', 'emit']) {
    if (typeof proto[name] !== 'function') throw new Error(`turn-probe: CascadeCall.${name} is gone; update bench/lib/turn-probe.ts`);
  }
  const origRun = proto['run']!;
  proto['run'] = function (this: object, ...args: unknown[]) {
    const tag = als.getStore();
    if (tag) tags.set(this, tag);
    return origRun.apply(this, args);
  };
  const origDecide = proto['onEndOfTurn']!;
  proto['onEndOfTurn'] = function (this: object, decision: { waitedMs: number; reason: string }) {
    const tag = tags.get(this);
    if (tag) {
      const rec: TurnRecord = { call: tag.id, decidedAt: mono(), endpointingMs: decision.waitedMs, reason: decision.reason };
      tag.current = rec;
      tag.awaitingRtp = rec;
      tag.barge = undefined;
      turns.push(rec);
    }
    return origDecide.call(this, decision);
  };
  const origEmit = proto['emit']!;
  proto['emit'] = function (this: object, ev: TimelineEvent) {
    const tag = tags.get(this);
    const rec = tag?.current;
    if (tag && rec) {
      if (ev.type === 'end-of-turn' && rec.settledAt === undefined) {
        rec.settledAt = mono();
        rec.taken = ev.taken;
        if (!ev.taken) tag.awaitingRtp = undefined;
      } else if (ev.type === 'turn-start' && ev.kind === 'reply' && rec.settledAt !== undefined && rec.turnId === undefined) {
        rec.turnId = ev.turn;
      } else if (ev.type === 'assistant-audio-start' && ev.turn === rec.turnId && rec.firstFrameAt === undefined) {
        rec.firstFrameAt = mono();
        // The frame is written right after this event: what is queued now is ahead of it.
        tag.outAtFirstFrame = tag.out?.();
        rec.queuedAtFirstFrame = tag.outAtFirstFrame?.queue;
      } else if (ev.type === 'overlap' && tag.awaitingRtp === rec) {
        (rec.overlaps ??= []).push(ev.action);
      }
    }
    if (tag && ev.type === 'interruption' && ev.taken) {
      const b: BargeRecord = { call: tag.id, decidedAt: mono(), audibleAfter: 0 };
      tag.barge = b;
      barges.push(b);
    }
    return origEmit.call(this, ev);
  };

  // 3. RTP out: a packet sent on the event-loop thread (dgram) leaves now; one handed to the RTP
  // I/O thread (the default) leaves at its due time, on that thread's timer.
  const rtpOut = (socket: object, buf: unknown, at: number): void => {
    const tag = socketTags.get(socket);
    if (!tag || !(buf instanceof Uint8Array) || buf.length <= 12 || (buf[1]! & 0x7f) !== 0) return;
    const rec = tag.awaitingRtp;
    if (rec && rec.firstFrameAt !== undefined && audible(buf, 12)) {
      rec.firstRtpAt = at;
      tag.awaitingRtp = undefined;
      const a = tag.outAtFirstFrame;
      const b = tag.out?.();
      if (a && b) rec.outbound = { dropped: b.dropped - a.dropped, lateDropped: b.lateDropped - a.lateDropped, lagAtFirstFrame: a.lag, sendingAtFirstFrame: a.sending };
    }
    const b = tag.barge;
    if (b && audible(buf, 12)) {
      b.audibleAfter++;
      b.lastAudibleAt = at;
    }
  };
  const dproto = dgram.Socket.prototype as unknown as { send: (...args: unknown[]) => void };
  const origSend = dproto.send;
  dproto.send = function (this: dgram.Socket, ...args: unknown[]) {
    rtpOut(this, args[0], mono());
    return origSend.apply(this, args);
  };
  const tproto = ThreadRtpSocket.prototype as unknown as { sendAt: (msg: Uint8Array, dueMs: number, ...rest: unknown[]) => void };
  const origSendAt = tproto.sendAt;
  tproto.sendAt = function (this: ThreadRtpSocket, msg: Uint8Array, dueMs: number, ...rest: unknown[]) {
    // dueMs is on this thread's performance.now(); mono() is a fixed offset from it.
    rtpOut(this, msg, mono() + (dueMs - performance.now()));
    return origSendAt.call(this, msg, dueMs, ...rest);
  };

  return {
    attach(env: CallEnv) {
      const inner = env.engine;
      if (!inner) throw new Error('turn-probe: the engine has no CallEnv.engine');
      const wrapped: CallEngine = (session: CallSession, assistant, variables) => {
        const tag: CallTag = { id: session.sipDialog?.callId ?? session.uuid };
        const media = session.media as unknown as {
          out?: { queue?: unknown[]; counters?: { framesDropped: number; lateFramesDropped: number }; lag?: number; sending?: boolean };
        };
        tag.out = () => {
          const o = media.out;
          if (!o) return undefined;
          return { queue: o.queue?.length ?? 0, dropped: o.counters?.framesDropped ?? 0, lateDropped: o.counters?.lateFramesDropped ?? 0, lag: o.lag, sending: o.sending };
        };
        const pair = (session.media as unknown as { pair?: { rtp?: dgram.Socket | ThreadRtpSocket } }).pair;
        if (pair?.rtp) {
          const port = pair.rtp.address().port;
          if (port >= rtpPortMin && port <= rtpPortMax) socketTags.set(pair.rtp, tag);
        }
        return als.run(tag, () => inner(session, assistant, variables));
      };
      env.engine = wrapped;
    },
    drain() {
      const out = { turns, barges };
      turns = [];
      barges = [];
      return out;
    },
  };
}
