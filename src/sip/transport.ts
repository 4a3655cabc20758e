/**
 * The only SIP socket code: UDP and TCP on one host/port (IPv4). Incoming bytes go through the
 * shared parser (datagrams) or stream framer (TCP); requests get received/rport stamped (§18.2.1, RFC 3581) before
 * they reach the handler. TLS is a seam only: a `StreamFactory` for kind 'tls' can be plugged in.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import type { SipMessage, SipRequest, SipResponse } from './message.ts';
import type { Destination, Source, TransportKind } from './transaction-types.ts';
import { parseMessage, type ParseResult } from './parser.ts';
import { serializeMessage } from './serializer.ts';
import { SipStreamFramer, type FramerOptions } from './stream-framer.ts';
import { rejectionResponse } from './transport-bad-request.ts';
import { responseDestination, stampReceived } from './transport-via.ts';
import { isResponseBytes, type SourceGate } from './source-gate.ts';

export interface TransportHandler {
  onRequest(req: SipRequest, source: Source): void;
  onResponse(res: SipResponse, source: Source): void;
}

/** Seam for stream transports (TCP here; TLS would supply its own server/connect). */
export interface StreamFactory {
  kind: 'tcp' | 'tls';
  createServer(onSocket: (socket: net.Socket) => void): net.Server;
  connect(address: string, port: number): net.Socket;
}

export interface SipTransportOptions {
  host?: string;
  /** 0 picks an ephemeral port shared by UDP and TCP. */
  port?: number;
  transports?: ReadonlyArray<'udp' | 'tcp'>;
  /** Parser limits (message size, header count, line length) for both transports. */
  limits?: FramerOptions;
  maxDatagramBytes?: number;
  /** Idle stream connections are closed after this long. */
  idleTimeoutMs?: number;
  /** Diagnostics for dropped input and socket errors; never thrown. */
  onError?: (err: Error) => void;
}

const tcpFactory: StreamFactory = {
  kind: 'tcp',
  createServer: (onSocket) => net.createServer(onSocket),
  connect: (address, port) => net.connect({ host: address, port }),
};

interface Conn {
  id: string;
  kind: 'tcp' | 'tls';
  socket: net.Socket;
  remoteKey: string;
  ready: Promise<void>;
}

export class SipTransport {
  private udp: dgram.Socket | undefined;
  private server: net.Server | undefined;
  private readonly conns = new Map<string, Conn>();
  private readonly byRemote = new Map<string, Conn>();
  private nextConn = 0;
  private closed = false;
  private port = 0;
  /** Who may be read and answered (the SIP server's abuse guard); everyone when unset. */
  gate: SourceGate | undefined;

  private constructor(
    private readonly opts: SipTransportOptions,
    private readonly handler: TransportHandler,
  ) {}

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

  /** Open stream connections, for leak checks. */
  get connectionCount(): number {
    return this.conns.size;
  }

  private async bind(kinds: ReadonlyArray<'udp' | 'tcp'>, port: number): Promise<void> {
    const host = this.localAddress;
    let chosen = port;
    if (kinds.includes('udp')) {
      const udp = dgram.createSocket('udp4');
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
      const server = tcpFactory.createServer((socket) => this.adopt(socket, 'tcp', Promise.resolve()));
      this.server = server;
      server.on('error', (err) => this.report(err));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(chosen, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const addr = server.address();
      if (addr && typeof addr === 'object') chosen = addr.port;
    }
    this.port = chosen;
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
      await new Promise<void>((resolve, reject) => udp.send(bytes, dest.port, dest.address, (err) => (err ? reject(err) : resolve())));
      return;
    }
    if (dest.transport === 'tls') throw new Error('TLS transport not implemented');
    const conn = this.connectionFor(dest);
    await conn.ready;
    await new Promise<void>((resolve, reject) => conn.socket.write(bytes, (err) => (err ? reject(err) : resolve())));
  }

  /** The §18.2.2 destination for responses to `req` received from `source`. */
  responseDestination(req: SipRequest, source: Source): Destination {
    return responseDestination(req, source);
  }

  private connectionFor(dest: Destination): Conn {
    const pinned = dest.connectionId === undefined ? undefined : this.conns.get(dest.connectionId);
    if (pinned && !pinned.socket.destroyed) return pinned;
    const key = `${dest.transport}:${dest.address}:${dest.port}`;
    const existing = this.byRemote.get(key);
    if (existing && !existing.socket.destroyed) return existing;
    const socket = tcpFactory.connect(dest.address, dest.port);
    const ready = new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    ready.catch(() => undefined); // the sender observes the failure; avoid an unhandled rejection
    return this.adopt(socket, 'tcp', ready, key);
  }

  private adopt(socket: net.Socket, kind: 'tcp' | 'tls', ready: Promise<void>, remoteKey?: string): Conn {
    const id = `${kind}-${++this.nextConn}`;
    const key = remoteKey ?? `${kind}:${socket.remoteAddress ?? ''}:${socket.remotePort ?? 0}`;
    const conn: Conn = { id, kind, socket, remoteKey: key, ready };
    if (this.closed || (remoteKey === undefined && !this.admits(socket))) {
      socket.destroy(); // an accepted connection from a banned source is refused at once
      return conn;
    }
    this.conns.set(id, conn);
    this.byRemote.set(key, conn);
    const framer = new SipStreamFramer(this.opts.limits ?? {});
    socket.setTimeout(this.opts.idleTimeoutMs ?? 300_000, () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      // Banned while connected (before this chunk or by a message in it): nothing more is read or answered.
      const refused = (): boolean => {
        if (this.admits(socket)) return false;
        socket.destroy();
        return true;
      };
      if (refused()) return;
      for (const ev of framer.push(chunk)) {
        if (refused()) return;
        if (ev.type === 'message') this.onParsed(ev.result, this.sourceOf(conn));
        else if (ev.type === 'ping') socket.write('\r\n'); // RFC 5626 §4.4.1 pong
        else {
          // Framing is lost for good: count it, answer if possible, then drop the connection.
          const source = this.sourceOf(conn);
          if (ev.result && !ev.result.ok) this.onParsed(ev.result, source); // rejectMalformed counts it
          else if (this.gate?.malformed(source.address) !== false && ev.result) this.onParsed(ev.result, source);
          this.report(new Error(`closing ${id}: ${ev.error}`));
          socket.end();
          return;
        }
      }
    });
    socket.on('error', (err) => this.report(err));
    socket.on('close', () => {
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
      localPort: this.port,
    };
  }

  private onDatagram(buf: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.gate && !this.gate.admits(rinfo.address)) return; // banned: not even parsed
    const source: Source = { transport: 'udp', address: rinfo.address, port: rinfo.port, localAddress: this.localAddress, localPort: this.port };
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
    const server = this.server;
    this.udp = undefined;
    this.server = undefined;
    await Promise.all([
      udp ? new Promise<void>((resolve) => closeQuietly(() => udp.close(() => resolve()), resolve)) : undefined,
      server ? new Promise<void>((resolve) => closeQuietly(() => server.close(() => resolve()), resolve)) : undefined,
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

function stripV4Mapped(addr: string): string {
  return addr.startsWith('::ffff:') ? addr.slice(7) : addr;
}

export type { TransportKind };
