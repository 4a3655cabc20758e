/**
 * The seam between an RtpSession (and its UdpSender and the port pool) and whoever does its RTP
 * socket I/O: the subset of `dgram.Socket` they use, plus `sendAt` (a datagram with the time it
 * is due) and an arrival time with each datagram. Two implementations:
 *
 * - in-thread (./dgram-io.ts): a `dgram.Socket` on the event-loop thread, as before: `sendAt`
 *   sends at once, arrival is when the 'message' event runs;
 * - the RTP I/O thread (./thread-io.ts): the socket lives in a worker thread that sends each
 *   packet at its due time on timers of its own and stamps arrivals as they happen, so a busy
 *   event-loop thread (a GC pause, a long task) no longer moves packets in time.
 *
 * Times are the event-loop thread's `performance.now()` milliseconds.
 */
import type { RemoteInfo } from 'node:dgram';
import type { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';

/** A datagram, who sent it, and (from the I/O thread) when it arrived; undefined: just now. */
export type RtpMessageListener = (msg: Buffer, rinfo: RemoteInfo, arrivalMs?: number) => void;

export interface RtpSocket extends EventEmitter {
  /** Sends now: to the connected peer, or (unconnected) to `port`/`address`. */
  send(msg: Uint8Array): void;
  send(msg: Uint8Array, port: number, address: string): void;
  /** As send(), due at `dueMs` (it may leave at once when that is past, or when I/O is in-thread). */
  sendAt(msg: Uint8Array, dueMs: number, port?: number, address?: string): void;
  /** Calls back with the error, or with nothing once connected. */
  connect(port: number, address: string, callback: (error?: Error) => void): void;
  /** Throws when not connected (as dgram does). */
  disconnect(): void;
  address(): AddressInfo;
  /** The connected peer; throws when not connected (as dgram does). */
  remoteAddress(): AddressInfo;
  close(callback?: () => void): void;
  /** 'error': as dgram's (ECONNREFUSED on a connected socket…); 'close': closed, also under us (the I/O thread was lost). */
  on(event: 'message', listener: RtpMessageListener): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'close', listener: () => void): this;
  /** Datagrams the I/O hand-over refused because its ring was full (0 in-thread). */
  readonly droppedPackets: { inbound: number; outbound: number };
  /**
   * Present when this socket's datagrams can be taken from the I/O thread's ring in C
   * (native/rtp-udp/fast_drain.c): the RTP I/O thread's sockets, with the native module built.
   */
  readonly nativeInbound?: NativeInboundPort;
}

/**
 * What an inbound path (../rtp-session-inbound.ts) hands the native drain so that its socket's
 * plain audio packets from one source are taken in C: the jitter buffer and receiver statistics
 * it uses itself (handles of native/rtp-udp, ../native-inbound.ts) and the numbers both share.
 */
export interface NativeInboundSpec {
  jitter: object;
  stats: object;
  /** The shared numbers (FAST_* in fast_drain.c), over an ArrayBuffer of their own. */
  words: Float64Array;
  /** The one source accepted, as the I/O thread reports it, and the audio payload type. */
  address: string;
  port: number;
  payloadType: number;
}

export interface NativeInboundPort {
  /** False when it cannot (the socket closed, the thread lost, an address too long). */
  attach(spec: NativeInboundSpec): boolean;
  /** Every datagram goes to 'message' again. Idempotent. */
  detach(): void;
}

export interface RtpIo {
  /** A UDP socket bound to exactly host:port, or undefined when the port is taken (or not ours). */
  bind(host: string, port: number): Promise<RtpSocket | undefined>;
  /** Lets go of what this I/O holds for the process (the thread: ends it; its sockets close). */
  close(): Promise<void>;
}
