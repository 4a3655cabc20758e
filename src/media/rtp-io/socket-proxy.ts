/**
 * An RTP socket that lives in the I/O thread, as the event-loop thread sees it: the subset of
 * `dgram.Socket` an RtpSession, its UdpSender and the port pool use (./types.ts), on top of
 * the thread's rings and messages (./thread-io.ts).
 *
 * - send/sendAt write the datagram into the outbound ring (no message, no allocation); a full
 *   ring drops it and counts it in `droppedPackets.outbound`.
 * - connect/disconnect/close are messages; connect calls back when the thread's socket is
 *   connected (or failed), close when it is closed, as dgram's do. remoteAddress() answers from
 *   what the thread confirmed, so it throws while a connect is under way, as dgram's does.
 * - 'message' comes with the thread's arrival stamp as a third argument; 'error' carries the
 *   thread socket's errors with their code (ECONNREFUSED on a connected socket).
 * - A lost thread (crash, or the I/O closed) closes the socket under its owner: 'error' (when
 *   someone listens), then 'close'. Sends after that are dropped silently, as the owner winds
 *   down; connect and close still call back.
 */
import type { RemoteInfo } from 'node:dgram';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { AddressCache } from './records.ts';
import type { NativeInboundPort, NativeInboundSpec, RtpSocket } from './types.ts';

/** What a socket needs from the I/O thread link that carries it (thread-io.ts). */
export interface SocketLink {
  /** Hands a datagram to the thread; false when the ring is full. */
  enqueue(id: number, msg: Uint8Array, dueMs: number, port: number, address: Uint8Array | undefined): boolean;
  connect(id: number, port: number, address: string): Promise<void>;
  disconnect(id: number): void;
  close(id: number): Promise<void>;
  /** Whether the link takes attached sockets' audio from the ring in C (fast_drain.c). */
  readonly nativeDrain: boolean;
  attachInbound(id: number, spec: NativeInboundSpec): boolean;
  detachInbound(id: number): void;
}

function socketError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

export class ThreadRtpSocket extends EventEmitter implements RtpSocket {
  readonly droppedPackets = { inbound: 0, outbound: 0 };
  /** Inbound sources as decoded from the ring (thread-io.ts reads them through this). */
  readonly sources = new AddressCache();
  private readonly destinations = new AddressCache();
  private state: 'unconnected' | 'connecting' | 'connected' = 'unconnected';
  private peer: AddressInfo | undefined;
  private closed = false;
  readonly nativeInbound: NativeInboundPort | undefined;

  constructor(
    private readonly link: SocketLink,
    readonly id: number,
    private readonly local: AddressInfo,
  ) {
    super();
    this.nativeInbound = link.nativeDrain
      ? { attach: (spec) => !this.closed && link.attachInbound(id, spec), detach: () => link.detachInbound(id) }
      : undefined;
  }

  send(msg: Uint8Array, port?: number, address?: string): void {
    this.sendAt(msg, performance.now(), port, address);
  }

  sendAt(msg: Uint8Array, dueMs: number, port?: number, address?: string): void {
    if (this.closed) return;
    // dgram's default destination host is the loopback of the socket's family.
    const to = port === undefined ? undefined : this.destinations.encode(address ?? (this.local.family === 'IPv6' ? '::1' : '127.0.0.1'));
    if (!this.link.enqueue(this.id, msg, dueMs, port ?? 0, to)) this.droppedPackets.outbound++;
  }

  connect(port: number, address: string, callback: (error?: Error) => void): void {
    if (this.closed) throw socketError('Not running', 'ERR_SOCKET_DGRAM_NOT_RUNNING');
    if (this.state !== 'unconnected') throw socketError('Already connected', 'ERR_SOCKET_DGRAM_IS_CONNECTED');
    this.state = 'connecting';
    this.link.connect(this.id, port, address).then(
      () => {
        if (this.state !== 'connecting') return callback(socketError('Not running', 'ERR_SOCKET_DGRAM_NOT_RUNNING'));
        this.state = 'connected';
        this.peer = { address, family: this.local.family, port };
        callback();
      },
      (error: Error) => {
        if (this.state === 'connecting') this.state = 'unconnected';
        callback(error);
      },
    );
  }

  disconnect(): void {
    if (this.closed) throw socketError('Not running', 'ERR_SOCKET_DGRAM_NOT_RUNNING');
    if (this.state !== 'connected') throw socketError('Not connected', 'ERR_SOCKET_DGRAM_NOT_CONNECTED');
    this.state = 'unconnected';
    this.peer = undefined;
    this.link.disconnect(this.id);
  }

  /**
   * Where the thread bound it. A socket bound to an explicit port (the pool's) keeps it; one bound
   * to port 0 may get another from Linux after a disconnect, which this does not follow.
   */
  address(): AddressInfo {
    if (this.closed) throw socketError('Not running', 'ERR_SOCKET_DGRAM_NOT_RUNNING');
    return { ...this.local };
  }

  remoteAddress(): AddressInfo {
    if (this.closed) throw socketError('Not running', 'ERR_SOCKET_DGRAM_NOT_RUNNING');
    if (this.state !== 'connected' || !this.peer) throw socketError('Not connected', 'ERR_SOCKET_DGRAM_NOT_CONNECTED');
    return { ...this.peer };
  }

  close(callback?: () => void): void {
    if (this.closed) throw socketError('Not running', 'ERR_SOCKET_DGRAM_NOT_RUNNING');
    this.closed = true;
    this.state = 'unconnected';
    this.link.detachInbound(this.id);
    void this.link.close(this.id).then(() => {
      this.emit('close');
      callback?.();
    });
  }

  /** @internal A datagram from the thread (thread-io.ts). */
  deliver(msg: Buffer, address: string, port: number, arrivalMs: number): void {
    if (this.closed) return;
    const rinfo: RemoteInfo = { address, family: this.local.family as RemoteInfo['family'], port, size: msg.length };
    this.emit('message', msg, rinfo, arrivalMs);
  }

  /** @internal An error event of the thread's socket. */
  fail(message: string, code: string | undefined): void {
    if (this.closed || this.listenerCount('error') === 0) return;
    this.emit('error', code ? socketError(message, code) : new Error(message));
  }

  /** @internal The thread is gone, and this socket with it. */
  lost(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.state = 'unconnected';
    if (this.listenerCount('error') > 0) this.emit('error', error);
    this.emit('close');
  }
}
