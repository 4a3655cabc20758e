/**
 * The only SIP socket code: UDP and TCP on one host/port, and TLS on a port of its own
 * when `tls` is given (the certificates and trust live in tls/tls-streams.ts). Incoming bytes go
 * through the shared parser (datagrams) or stream framer (TCP, TLS); requests get received/rport
 * stamped (§18.2.1, RFC 3581) before they reach the handler. Stream connections are reused per
 * peer (RFC 5923's aim): a request to a place we already hold a connection to goes over it.
 *
 * Stream connections are bounded: an accepted socket (TLS: before its handshake) goes through `admission` (tcp-admission.ts:
 * total, per-source, accept-rate and descriptor-reserve limits) and is reset at once when
 * refused; every connection is closed at its deadline (stream-deadline.ts: a whole message
 * within `messageTimeoutMs` of its first byte, an inbound connection's first message within
 * `messageTimeoutMs` of its accept, `idleTimeoutMs` without traffic).
 *
 * The host's family picks the sockets: an IPv4 address binds IPv4 (as always); an IPv6 address
 * binds IPv6, and `::` binds both families on one port (Linux's default, bindv6only=0): IPv4
 * peers then arrive as ::ffff:a.b.c.d, which is stripped before anyone sees it, and datagrams to
 * an IPv4 peer leave through the same socket as that mapped address.
 */
import dgram from 'node:dgram';
import net, { isIPv4, isIPv6 } from 'node:net';
import type { SipMessage, SipRequest, SipResponse } from './message.ts';
import type { Destination, Source, TransportKind } from './transaction-types.ts';
import { parseMessage, type ParseResult } from './parser.ts';
import { serializeMessage } from './serializer.ts';
import { SipStreamFramer, type FramerOptions } from './stream-framer.ts';
import { systemClock, type Clock, type Timer } from '../util/clock.ts';
import type { AdmissionTicket, RefusalReason, TcpAdmission } from './tcp-admission.ts';
import { StreamDeadline, type Expiry } from './stream-deadline.ts';
import { rejectionResponse } from './transport-bad-request.ts';
import { responseDestination, stampReceived } from './transport-via.ts';
import type { SipTls } from './tls/tls-streams.ts';
import { isResponseBytes, type SourceGate } from './source-gate.ts';

export interface TransportHandler {
  onRequest(req: SipRequest, source: Source): void;
  onResponse(res: SipResponse, source: Source): void;
}

type StreamKind = 'tcp' | 'tls';

export interface SipTransportOptions {
  host?: string;
  /** 0 picks an ephemeral port shared by UDP and TCP. */
  port?: number;
  transports?: ReadonlyArray<'udp' | 'tcp'>;
  /** Parser limits (message size, header count, line length) for both transports. */
  limits?: FramerOptions;
  maxDatagramBytes?: number;
  /** Stream connections with no partial message are closed after this long without traffic (default 300 s). */
  idleTimeoutMs?: number;
  /** A stream message must arrive whole within this long of its first byte (default 10 s). */
  messageTimeoutMs?: number;
  /** Who may open inbound stream connections (default: anyone, unbounded). */
  admission?: TcpAdmission;
  /** Told of each inbound stream connection refused by admission (for throttled logging). */
  onRefused?: (reason: RefusalReason, address: string) => void;
  /** Connection deadlines and admission rates (default: the system clock). */
  clock?: Clock;
  /** Diagnostics for dropped input and socket errors; never thrown. */
  onError?: (err: Error) => void;
  /** SIP over TLS: outbound always; a listener on `tls.port` when it has a certificate. */
  tls?: SipTls;
}

interface Conn {
  id: string;
  kind: StreamKind;
  socket: net.Socket;
  remoteKey: string;
  ready: Promise<void>;
  deadline: StreamDeadline;
  /** For an outbound TLS connection: the identity its certificate was verified for. */
  serverName?: string;
}

export const STREAM_DEFAULTS = Object.freeze({ idleTimeoutMs: 300_000, messageTimeoutMs: 10_000 });

export class SipTransport {
  private udp: dgram.Socket | undefined;
  private server: net.Server | undefined;
  private tlsServer: net.Server | undefined;
  private tlsPort = 0;
  private readonly conns = new Map<string, Conn>();
  private readonly byRemote = new Map<string, Conn>();
  private nextConn = 0;
  private closed = false;
  private port = 0;
  private readonly clock: Clock;
  /** Inbound stream connections refused by admission, by reason. */
  readonly refused: Record<RefusalReason, number> = { rate: 0, per_source: 0, total: 0, fd_reserve: 0 };
  /** Stream connections closed at a deadline, by which one. */
  readonly expired: Record<Expiry, number> = { idle: 0, message: 0 };
  /** Who may be read and answered (the SIP server's abuse guard); everyone when unset. */
  gate: SourceGate | undefined;

  private constructor(
    private readonly opts: SipTransportOptions,
    private readonly handler: TransportHandler,
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  static async listen(opts: SipTransportOptions, handler: TransportHandler): Promise<SipTransport> {
    const t = new SipTransport(opts, handler);
    const kinds = opts.transports ?? ['udp', 'tcp'];
    // An ephemeral UDP port may be taken on TCP; retry a few times with a fresh one.
    for (let attempt = 0; ; attempt++) {
      try {
        await t.bind(kinds, opts.port ?? 5060);
        return t;
      } catch (err) {
        await t.close();
        if ((opts.port ?? 5060) !== 0 || attempt >= 5) throw err;
        t.closed = false;
      }
    }
  }

  get localAddress(): string {
    return this.opts.host ?? '127.0.0.1';
  }

  get localPort(): number {
    return this.port;
  }

  /** Whether we can send to IPv6 peers (bound to `::` or an IPv6 address). */
  get ipv6(): boolean {
    return isIPv6(this.localAddress);
  }

  /** Our port for a transport: the TLS listener's for TLS (0 when none), else the shared one. */
  localPortFor(kind: TransportKind): number {
    return kind === 'tls' ? this.tlsPort : this.port;
  }

  /** Open stream connections, for leak checks. */
  get connectionCount(): number {
    return this.conns.size;
  }

  private async bind(kinds: ReadonlyArray<'udp' | 'tcp'>, port: number): Promise<void> {
    const host = this.localAddress;
    let chosen = port;
    if (kinds.includes('udp')) {
      const udp = dgram.createSocket(this.ipv6 ? 'udp6' : 'udp4');
      this.udp = udp;
      udp.on('message', (buf, rinfo) => this.onDatagram(buf, rinfo));
      udp.on('error', (err) => this.report(err));
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(chosen, host, () => {
          udp.off('error', reject);
          resolve();
        });
      });
      chosen = udp.address().port;
    }
    if (kinds.includes('tcp')) {
      const server = net.createServer((socket) => {
        const ticket = this.admit(socket);
        if (ticket !== false) this.adopt(socket, 'tcp', Promise.resolve(), undefined, ticket);
      });
      this.server = server;
      chosen = await this.listenStream(server, chosen, host);
    }
    this.port = chosen;
    const tls = this.opts.tls;
    if (tls?.listens) {
      const server = tls.createServer((socket) => this.adopt(socket, 'tls', Promise.resolve()), (err) => this.report(err));
      // Admission sees the raw connection, before any handshake work is spent on it.
      server.on('connection', (raw: net.Socket) => {
        const ticket = this.admit(raw);
        if (ticket !== false && ticket !== undefined) raw.once('close', () => this.opts.admission?.release(ticket));
      });
      this.tlsServer = server;
      this.tlsPort = await this.listenStream(server, tls.port, host);
    }
  }

  private async listenStream(server: net.Server, port: number, host: string): Promise<number> {
    server.on('error', (err) => this.report(err));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    return addr && typeof addr === 'object' ? addr.port : port;
  }

  /** Serializes and sends; rejects if a stream connection cannot be opened or written. */
  async send(message: SipMessage | Buffer, dest: Destination): Promise<void> {
    if (this.closed) throw new Error('transport closed');
    const bytes = Buffer.isBuffer(message) ? message : serializeMessage(message);
    // A banned source gets no response at all, whatever produced it (a transaction, a retransmission).
    if (this.gate && isResponseBytes(bytes) && !this.gate.admits(dest.address)) return;
    if (dest.transport === 'udp') {
      const udp = this.udp;
      if (!udp) throw new Error('UDP not enabled');
      const max = this.opts.maxDatagramBytes ?? 65_000;
      if (bytes.length > max) throw new Error('message too large for UDP');
      // An IPv6 socket reaches an IPv4 peer only through the v4-mapped form of its address.
      const address = this.ipv6 && isIPv4(dest.address) ? `::ffff:${dest.address}` : dest.address;
      await new Promise<void>((resolve, reject) => udp.send(bytes, dest.port, address, (err) => (err ? reject(err) : resolve())));
      return;
    }
    const conn = this.connectionFor(dest);
    await conn.ready;
    conn.deadline.onOutput(this.clock.monotonic());
    await new Promise<void>((resolve, reject) => conn.socket.write(bytes, (err) => (err ? reject(err) : resolve())));
  }

  /** The §18.2.2 destination for responses to `req` received from `source`. */
  responseDestination(req: SipRequest, source: Source): Destination {
    return responseDestination(req, source);
  }

  private connectionFor(dest: Destination): Conn {
    const pinned = dest.connectionId === undefined ? undefined : this.conns.get(dest.connectionId);
    if (pinned && !pinned.socket.destroyed) return pinned;
    const kind: StreamKind = dest.transport === 'tls' ? 'tls' : 'tcp';
    const key = remoteKeyOf(kind, dest.address, dest.port);
    const existing = this.byRemote.get(key);
    // A TLS connection is reused only for the identity it was verified for (or one the peer opened).
    if (existing && !existing.socket.destroyed && (kind === 'tcp' || existing.serverName === undefined || existing.serverName === (dest.serverName ?? dest.address))) {
      return existing;
    }
    let socket: net.Socket;
    if (kind === 'tls') {
      const tls = this.opts.tls;
      if (!tls) throw new Error('SIP over TLS is not configured');
      socket = tls.connect(dest.address, dest.port, dest.serverName);
    } else {
      socket = net.connect({ host: dest.address, port: dest.port });
    }
    const ready = new Promise<void>((resolve, reject) => {
      socket.once(kind === 'tls' ? 'secureConnect' : 'connect', resolve);
      socket.once('error', reject);
      socket.once('close', () => reject(new Error(`connection to ${dest.address}:${dest.port} closed`)));
    });
    ready.catch(() => undefined); // the sender observes the failure; avoid an unhandled rejection
    return this.adopt(socket, kind, ready, key, undefined, dest.serverName ?? dest.address);
  }

  /**
   * Admission of an inbound stream connection (TLS: the raw one, before its handshake): its
   * ticket (undefined when nothing admits), or false when it was refused and reset at once.
   */
  private admit(socket: net.Socket): AdmissionTicket | undefined | false {
    const admission = this.opts.admission;
    const address = socket.remoteAddress;
    if (!admission || this.closed) return undefined;
    socket.on('error', () => undefined); // a reset peer must not crash the process
    // Gone before we got to it (the peer reset while it waited in the backlog): nothing to admit.
    if (address === undefined) {
      socket.destroy();
      return false;
    }
    const verdict = admission.admit(address, this.clock.monotonic());
    if (!verdict.ok) {
      this.refused[verdict.reason]++;
      this.opts.onRefused?.(verdict.reason, address);
      // RST rather than FIN: no TIME_WAIT or half-closed state is left behind for a refusal.
      socket.resetAndDestroy();
      return false;
    }
    return verdict.ticket;
  }

  /** `remoteKey` is given for connections we open; inbound ones must bring a message first. */
  private adopt(socket: net.Socket, kind: StreamKind, ready: Promise<void>, remoteKey?: string, ticket?: AdmissionTicket, serverName?: string): Conn {
    const id = `${kind}-${++this.nextConn}`;
    const key = remoteKey ?? remoteKeyOf(kind, stripV4Mapped(socket.remoteAddress ?? ''), socket.remotePort ?? 0);
    const clock = this.clock;
    const deadline = new StreamDeadline(
      {
        idleTimeoutMs: this.opts.idleTimeoutMs ?? STREAM_DEFAULTS.idleTimeoutMs,
        messageTimeoutMs: this.opts.messageTimeoutMs ?? STREAM_DEFAULTS.messageTimeoutMs,
      },
      clock.monotonic(),
      remoteKey === undefined,
    );
    const conn: Conn = { id, kind, socket, remoteKey: key, ready, deadline, ...(serverName === undefined ? {} : { serverName }) };
    if (ticket) socket.once('close', () => this.opts.admission?.release(ticket));
    if (this.closed || (remoteKey === undefined && !this.admits(socket))) {
      socket.destroy(); // an accepted connection from a banned source is refused at once
      return conn;
    }
    this.conns.set(id, conn);
    this.byRemote.set(key, conn);
    const framer = new SipStreamFramer(this.opts.limits ?? {});
    // One timer per connection, moved only when the deadline comes sooner than it is set for;
    // when it fires early (the deadline moved later) it is set again.
    let timer: Timer | undefined;
    let timerAtMs = Infinity;
    const arm = (): void => {
      const at = deadline.wakeAtMs;
      if (timer && timerAtMs <= at) return;
      timer?.cancel();
      timerAtMs = at;
      timer = clock.setTimeout(fire, Math.max(0, at - clock.monotonic()));
    };
    const fire = (): void => {
      timer = undefined;
      timerAtMs = Infinity;
      if (socket.destroyed) return;
      const why = deadline.expired(clock.monotonic());
      if (!why) {
        arm();
        return;
      }
      this.expired[why]++;
      this.report(new Error(`closing ${id}: ${why === 'idle' ? 'idle' : 'message not complete'} past its deadline`));
      socket.destroy();
    };
    arm();
    socket.on('data', (chunk: Buffer) => {
      let completed = false;
      // Banned while connected (before this chunk or by a message in it): nothing more is read or answered.
      const refused = (): boolean => {
        if (this.admits(socket)) return false;
        socket.destroy();
        return true;
      };
      if (refused()) return;
      for (const ev of framer.push(chunk)) {
        if (refused()) return;
        if (ev.type === 'message') {
          completed = true;
          this.onParsed(ev.result, this.sourceOf(conn));
        } else if (ev.type === 'ping') {
          completed = true;
          socket.write('\r\n'); // RFC 5626 §4.4.1 pong
        } else {
          // Framing is lost for good: count it, answer if possible, then drop the connection.
          const source = this.sourceOf(conn);
          if (ev.result && !ev.result.ok) this.onParsed(ev.result, source); // rejectMalformed counts it
          else if (this.gate?.malformed(source.address) !== false && ev.result) this.onParsed(ev.result, source);
          this.report(new Error(`closing ${id}: ${ev.error}`));
          socket.end();
          return;
        }
      }
      deadline.onInput(clock.monotonic(), completed, framer.midMessage);
      arm();
    });
    socket.on('error', (err) => this.report(err));
    socket.on('close', () => {
      timer?.cancel();
      timer = undefined;
      this.conns.delete(id);
      if (this.byRemote.get(key) === conn) this.byRemote.delete(key);
    });
    return conn;
  }

  private admits(socket: net.Socket): boolean {
    return this.gate === undefined || this.gate.admits(stripV4Mapped(socket.remoteAddress ?? ''));
  }

  private sourceOf(conn: Conn): Source {
    return {
      transport: conn.kind,
      address: stripV4Mapped(conn.socket.remoteAddress ?? ''),
      port: conn.socket.remotePort ?? 0,
      connectionId: conn.id,
      localAddress: this.localAddress,
      localPort: this.localPortFor(conn.kind),
    };
  }

  private onDatagram(buf: Buffer, rinfo: dgram.RemoteInfo): void {
    const address = stripV4Mapped(rinfo.address);
    if (this.gate && !this.gate.admits(address)) return; // banned: not even parsed
    const source: Source = { transport: 'udp', address, port: rinfo.port, localAddress: this.localAddress, localPort: this.port };
    // A lone CRLF (or CRLFCRLF) is a keep-alive ping, not a message.
    if (buf.length <= 4 && buf.toString('latin1').trim() === '') return;
    this.onParsed(parseMessage(buf, { ...this.opts.limits, transport: 'datagram' }), source);
  }

  private onParsed(parsed: ParseResult, source: Source): void {
    try {
      if (!parsed.ok) {
        this.rejectMalformed(parsed, source);
        return;
      }
      const msg = parsed.message;
      if (msg.kind === 'response') {
        this.handler.onResponse(msg, source);
        return;
      }
      if (!stampReceived(msg, source)) {
        this.gate?.malformed(source.address);
        this.report(new Error(`request without a usable Via from ${source.address}:${source.port}`));
        return;
      }
      this.handler.onRequest(msg, source);
    } catch (err) {
      this.report(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private rejectMalformed(parsed: Extract<ParseResult, { ok: false }>, source: Source): void {
    this.report(new Error(`malformed message from ${source.address}:${source.port}: ${parsed.error}`));
    // Counted before any answer is formed; a source this bans (or had banned) hears nothing.
    if (this.gate && !this.gate.malformed(source.address)) return;
    const salvaged = rejectionResponse(parsed.partial, parsed.status, parsed.error);
    if (!salvaged || !stampReceived(salvaged.request, source)) return;
    this.send(salvaged.response, responseDestination(salvaged.request, source)).catch((err: unknown) => {
      this.report(err instanceof Error ? err : new Error(String(err)));
    });
  }

  private report(err: Error): void {
    this.opts.onError?.(err);
  }

  /** Releases every socket. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.conns.values()) c.socket.destroy();
    this.conns.clear();
    this.byRemote.clear();
    const udp = this.udp;
    const servers = [this.server, this.tlsServer];
    this.udp = undefined;
    this.server = undefined;
    this.tlsServer = undefined;
    await Promise.all([
      udp ? new Promise<void>((resolve) => closeQuietly(() => udp.close(() => resolve()), resolve)) : undefined,
      ...servers.map((server) => (server ? new Promise<void>((resolve) => closeQuietly(() => server.close(() => resolve()), resolve)) : undefined)),
    ]);
  }
}

/** close() throws or errors when the socket never bound; either way it is released. */
function closeQuietly(close: () => void, done: () => void): void {
  try {
    close();
  } catch {
    done();
  }
}

function remoteKeyOf(kind: StreamKind, address: string, port: number): string {
  return `${kind}:${address}:${port}`;
}

function stripV4Mapped(addr: string): string {
  return addr.startsWith('::ffff:') && addr.includes('.') ? addr.slice(7) : addr;
}

export type { TransportKind };
