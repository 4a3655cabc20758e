/**
 * The signalling WebSocket of browser calls, `GET /api/user/webrtc` upgraded on the API's own
 * HTTP server (docs/BROWSER-CALLS.md). One socket, one call:
 *
 *   browser → {type:'auth', key}            (first, unless the upgrade carried Authorization: Bearer)
 *   engine  → {type:'ready', ice_servers}
 *   browser → {type:'call', assistant_id, sdp}   (the browser's offer)
 *   engine  → {type:'answer', sdp}, then {type:'candidate', ...} as gathered
 *   browser → {type:'candidate', ...} as gathered, {type:'hangup'} to end
 *   engine  → {type:'answered', call_id, uuid} once media is up, {type:'ended', ...} at the end
 *
 * The key never travels in the URL. Limits: the origin (same origin unless opened), the frame
 * size (ws maxPayload), messages per second, the time to authenticate, one call per socket, and
 * the call's own admission (live-call cap, balance) and connect timeout (web-calls.ts).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../util/clock.ts';
import { CLOSE, MAX_MESSAGE_BYTES, MessageRate, originAllowed, parseClientMessage, type ClientMessage, type ServerMessage } from './signalling.ts';
import { WebCallRefused, type WebCall, type WebCalls } from './web-calls.ts';

export const SIGNALLING_PATH = '/api/user/webrtc';

export interface SignallingOptions {
  calls: WebCalls;
  accountForKey(key: string): Promise<number | undefined>;
  clock: Clock;
  logger: Logger;
  allowedOrigins: readonly string[];
  /** Time from open to a valid `auth` (default 10 s). */
  authTimeoutMs?: number;
  /** Time from `ready` to a `call` (default 60 s): an idle authenticated socket is closed. */
  idleTimeoutMs?: number;
  /** Open signalling sockets at once, process-wide (default 1000). */
  maxSockets?: number;
  /**
   * Sockets not yet authenticated per source address (default 10). Only the unauthenticated
   * ones: a reverse proxy carries many browsers from one address, and they authenticate at once.
   */
  maxPendingPerSource?: number;
}

export class SignallingServer {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly sockets = new Set<WebSocket>();
  /** Unauthenticated sockets per source address. */
  private readonly pending = new Map<string, number>();
  private server: Server | undefined;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => this.upgrade(req, socket, head);

  constructor(private readonly options: SignallingOptions) {}

  /** Take upgrades of SIGNALLING_PATH on `server`; others are left to whoever else listens. */
  attach(server: Server): void {
    this.server = server;
    server.on('upgrade', this.onUpgrade);
  }

  detach(server: Server): void {
    server.off('upgrade', this.onUpgrade);
  }

  /** Close every socket (their calls hang up) and stop taking new ones. */
  async close(): Promise<void> {
    for (const ws of this.sockets) ws.close(CLOSE.shuttingDown.code, CLOSE.shuttingDown.reason);
    // A browser that does not answer the close handshake within a second is cut.
    const cut = this.options.clock.setTimeout(() => {
      for (const ws of this.sockets) ws.terminate();
    }, 1_000);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    cut.cancel();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (req.url ?? '').split('?')[0];
    const refuse = (status: number, text: string): void => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (path !== SIGNALLING_PATH) {
      // Nobody else takes upgrades on this server: answer rather than leave the socket hanging.
      if ((this.server?.listenerCount('upgrade') ?? 0) <= 1) refuse(404, 'Not Found');
      return;
    }
    if (!originAllowed(req.headers.origin, req.headers.host, this.options.allowedOrigins)) {
      this.options.logger.info({ origin: req.headers.origin }, 'webrtc signalling: origin refused');
      refuse(403, 'Forbidden');
      return;
    }
    if (this.sockets.size >= (this.options.maxSockets ?? 1000)) {
      refuse(503, 'Service Unavailable');
      return;
    }
    const source = req.socket.remoteAddress ?? '';
    if ((this.pending.get(source) ?? 0) >= (this.options.maxPendingPerSource ?? 10)) {
      refuse(503, 'Service Unavailable');
      return;
    }
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    this.pending.set(source, (this.pending.get(source) ?? 0) + 1);
    let counted = true;
    const settle = (): void => {
      if (!counted) return;
      counted = false;
      const n = (this.pending.get(source) ?? 1) - 1;
      if (n <= 0) this.pending.delete(source);
      else this.pending.set(source, n);
    };
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.once('close', () => {
        this.sockets.delete(ws);
        settle();
      });
      new SignallingConnection(ws, this.options, bearer, settle).start();
    });
  }
}

type Phase = 'auth' | 'ready' | 'calling' | 'over';

/** One socket's protocol state. */
class SignallingConnection {
  private phase: Phase = 'auth';
  private accountId: number | undefined;
  private call: WebCall | undefined;
  private readonly rate: MessageRate;
  private timer: Timer | undefined;
  /** Candidates that came before the answer (the browser trickles while we answer). */
  private early: ClientMessage[] = [];
  private readonly log: Logger;
  private authPending = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly options: SignallingOptions,
    private readonly bearer: string | undefined,
    /** Called once the socket is authenticated (it no longer counts as pending). */
    private readonly onAuthenticated: () => void,
  ) {
    this.rate = new MessageRate(options.clock.monotonic());
    this.log = options.logger.child({ part: 'webrtc-signalling' });
  }

  start(): void {
    this.ws.on('message', (data, isBinary) => {
      if (isBinary) return this.end(CLOSE.badMessage);
      void this.onMessage(data.toString()).catch((err: unknown) => {
        this.log.warn({ err: (err as Error).message }, 'signalling message failed');
        this.end(CLOSE.badMessage);
      });
    });
    this.ws.on('close', () => {
      this.timer?.cancel();
      this.phase = 'over';
      void this.call?.hangup('remote-hangup');
    });
    this.ws.on('error', () => undefined);
    if (this.bearer !== undefined) {
      void this.authenticate(this.bearer);
    } else {
      this.arm(this.options.authTimeoutMs ?? 10_000);
    }
  }

  private arm(ms: number): void {
    this.timer?.cancel();
    this.timer = this.options.clock.setTimeout(() => this.end(CLOSE.timeout), ms);
  }

  private send(message: ServerMessage): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }

  private end(close: { code: number; reason: string }): void {
    this.timer?.cancel();
    if (this.phase !== 'over') this.phase = 'over';
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(close.code, close.reason);
  }

  private async authenticate(key: string): Promise<void> {
    const accountId = await this.options.accountForKey(key);
    if (this.phase !== 'auth') return;
    if (accountId === undefined) return this.end(CLOSE.unauthorized);
    this.accountId = accountId;
    this.phase = 'ready';
    this.onAuthenticated();
    this.arm(this.options.idleTimeoutMs ?? 60_000);
    this.send({ type: 'ready', ice_servers: this.options.calls.iceServers });
  }

  private async onMessage(text: string): Promise<void> {
    if (this.phase === 'over') return;
    if (!this.rate.take(this.options.clock.monotonic())) return this.end(CLOSE.rateLimited);
    const msg = parseClientMessage(text);
    if (!msg) {
      // Before authentication nothing but a well-formed auth is worth an answer.
      return this.end(this.phase === 'auth' ? CLOSE.unauthorized : CLOSE.badMessage);
    }
    if (this.phase === 'auth') {
      if (msg.type !== 'auth' || this.authPending) return this.end(CLOSE.unauthorized);
      this.authPending = true;
      return this.authenticate(msg.key);
    }
    switch (msg.type) {
      case 'auth':
        return this.error('ALREADY_AUTHENTICATED', 'This socket is already authenticated');
      case 'call':
        return this.placeCall(msg.assistant_id, msg.sdp);
      case 'candidate':
        if (!this.call) {
          if (this.phase !== 'calling' || this.early.length >= 32) return this.error('NO_CALL', 'No call on this socket');
          this.early.push(msg);
          return;
        }
        return this.call.addCandidate(msg).catch((err: unknown) => this.log.debug({ err: (err as Error).message }, 'remote candidate refused'));
      case 'hangup':
        if (this.call) await this.call.hangup('remote-hangup');
        else this.end(CLOSE.normal);
        return;
    }
  }

  private error(code: string, message: string): void {
    this.send({ type: 'error', code, message });
  }

  private async placeCall(assistantId: number, sdp: string): Promise<void> {
    if (this.phase !== 'ready') return this.error('ONE_CALL_PER_SOCKET', 'One call per socket: open a new one');
    this.phase = 'calling';
    this.timer?.cancel();
    try {
      this.call = await this.options.calls.open(this.accountId!, assistantId, sdp, {
        candidate: (c) => this.send({ type: 'candidate', candidate: c.candidate, sdpMid: c.sdpMid ?? null, sdpMLineIndex: c.sdpMLineIndex ?? null }),
        answered: (call) => this.send({ type: 'answered', call_id: call.id, uuid: call.uuid }),
        ended: (call, end) => {
          // Refused before the answer (a bad offer): the refusal's error says it instead.
          if (!this.call) return;
          this.send({ type: 'ended', call_id: call.id, uuid: call.uuid, end_cause: end.cause, status: end.status });
          this.end(CLOSE.normal);
        },
      });
    } catch (err) {
      if (!(err instanceof WebCallRefused)) throw err;
      this.error(err.code, err.message);
      this.end(CLOSE.normal);
      return;
    }
    this.send({ type: 'answer', sdp: this.call.answerSdp });
    const early = this.early;
    this.early = [];
    for (const c of early) if (c.type === 'candidate') await this.call.addCandidate(c).catch(() => undefined);
    // The socket went away while we answered: the call goes with it.
    if ((this.phase as Phase) === 'over') await this.call.hangup('remote-hangup');
  }
}
