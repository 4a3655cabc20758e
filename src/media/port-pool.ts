/**
 * RTP port allocation: an even port for RTP and the odd one above it for RTCP (RFC 3550 §11),
 * from a configured range, proven free by binding both UDP sockets. The bound sockets are
 * handed to the caller, so nothing can take the ports between the check and their use.
 *
 * Allocation rotates through the range instead of reusing the lowest free port: a port released
 * a moment ago may still receive the previous call's stragglers, which the next call would
 * otherwise hear.
 *
 * The RTP socket is bound through the pool's `RtpIo` (rtp-io/types.ts): by default in the
 * process's RTP I/O thread (rtp-io/thread-io.ts), or on this thread (rtp-io/dgram-io.ts). RTCP,
 * a report every few seconds, always stays on this thread.
 */
import type dgram from 'node:dgram';
import { AppError } from '../util/errors.ts';
import { bindDgram } from './rtp-io/dgram-io.ts';
import { sharedRtpIoThread } from './rtp-io/thread-io.ts';
import type { RtpIo, RtpSocket } from './rtp-io/types.ts';

export interface PortPoolOptions {
  /** Address to bind (e.g. '0.0.0.0', '127.0.0.1', '::'). */
  host: string;
  minPort: number;
  maxPort: number;
  /** Where RTP sockets live (default: the process's RTP I/O thread, `sharedRtpIoThread()`). */
  io?: RtpIo;
}

/**
 * The sockets come without an 'error' listener: the owner must add one before using them. They
 * are bound to their explicit ports, which a UDP socket keeps across connect() and disconnect()
 * (an RtpSession connects its RTP socket to the far end, see udp-sender.ts). `release()` closes
 * them: a socket is never handed to a second call, so nothing a call did to it (a connected peer,
 * listeners) can leak into the next one.
 */
export interface RtpPortPair {
  readonly rtpPort: number;
  readonly rtcpPort: number;
  readonly rtp: RtpSocket;
  readonly rtcp: dgram.Socket;
  /** Closes both sockets and returns the ports to the pool. Idempotent. */
  release(): Promise<void>;
}

export class PortsExhaustedError extends AppError {
  constructor(minPort: number, maxPort: number) {
    super(`no free RTP port pair in ${minPort}-${maxPort}`, 503, 'RTP_PORTS_EXHAUSTED', true);
  }
}

export class PortPool {
  private readonly host: string;
  private readonly io: RtpIo;
  private readonly first: number;
  private readonly pairs: number;
  private cursor = 0;
  private readonly held = new Set<number>();

  constructor(options: PortPoolOptions) {
    if (options.minPort < 1 || options.maxPort > 65535 || options.maxPort <= options.minPort) {
      throw new RangeError(`bad RTP port range ${options.minPort}-${options.maxPort}`);
    }
    this.host = options.host;
    this.io = options.io ?? sharedRtpIoThread();
    this.first = options.minPort % 2 === 0 ? options.minPort : options.minPort + 1;
    // Pairs (p, p + 1) with p even and p + 1 <= maxPort.
    this.pairs = Math.max(0, Math.floor((options.maxPort - this.first + 1) / 2));
    if (this.pairs === 0) throw new RangeError(`RTP port range ${options.minPort}-${options.maxPort} holds no even/odd pair`);
  }

  /** Ports currently handed out (pairs × 2), for leak checks. */
  get inUse(): number {
    return this.held.size * 2;
  }

  get capacity(): number {
    return this.pairs;
  }

  async allocate(signal?: AbortSignal): Promise<RtpPortPair> {
    for (let tried = 0; tried < this.pairs; tried++) {
      signal?.throwIfAborted();
      const port = this.first + 2 * ((this.cursor + tried) % this.pairs);
      if (this.held.has(port)) continue;
      // Reserve before awaiting, so concurrent allocations never race for the same pair.
      this.held.add(port);
      let pair: RtpPortPair | undefined;
      try {
        pair = await this.tryBind(port);
      } catch (error) {
        // The I/O failed (its thread was lost while binding): nothing is bound, nothing held.
        this.held.delete(port);
        throw error;
      }
      if (pair) {
        this.cursor = (this.cursor + tried + 1) % this.pairs;
        if (signal?.aborted) {
          await pair.release();
          signal.throwIfAborted();
        }
        return pair;
      }
      this.held.delete(port);
    }
    throw new PortsExhaustedError(this.first, this.first + 2 * this.pairs - 1);
  }

  private async tryBind(port: number): Promise<RtpPortPair | undefined> {
    const rtp = await this.io.bind(this.host, port);
    if (!rtp) return undefined;
    const rtcp = await bindDgram(this.host, port + 1);
    if (!rtcp) {
      await closeSocket(rtp);
      return undefined;
    }
    let released: Promise<void> | undefined;
    return {
      rtpPort: port,
      rtcpPort: port + 1,
      rtp,
      rtcp,
      release: () => {
        released ??= Promise.all([closeSocket(rtp), closeSocket(rtcp)]).then(() => {
          this.held.delete(port);
        });
        return released;
      },
    };
  }
}

function closeSocket(socket: { close(callback: () => void): void }): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      // Already closed (e.g. by its owner): nothing to wait for.
      resolve();
    }
  });
}
