/**
 * RTP port allocation: an even port for RTP and the odd one above it for RTCP (RFC 3550 §11),
 * from a configured range, proven free by binding both UDP sockets. The bound sockets are
 * handed to the caller, so nothing can take the ports between the check and their use.
 *
 * Each pair is drawn at random from the free pairs of the range, so a stranger who saw one call's
 * port cannot guess the next call's (handed out in order, they were the next pair up). A pair
 * released a moment ago is drawn only when nothing else is free: it may still receive the
 * previous call's stragglers, which the next call would otherwise hear.
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
  /** Uniform in [0, 1) (default Math.random): which free pair comes next. */
  random?: () => number;
}

/** Random draws before a crowded range is scanned instead. */
const RANDOM_DRAWS = 32;

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
  private readonly random: () => number;
  private readonly held = new Set<number>();
  /** Recently released RTP ports, oldest first, drawn again only when nothing else is free. */
  private readonly recent = new Set<number>();
  private readonly recentMax: number;

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
    this.random = options.random ?? Math.random;
    this.recentMax = Math.min(64, Math.floor(this.pairs / 2));
  }

  /** Ports currently handed out (pairs × 2), for leak checks. */
  get inUse(): number {
    return this.held.size * 2;
  }

  get capacity(): number {
    return this.pairs;
  }

  async allocate(signal?: AbortSignal): Promise<RtpPortPair> {
    // Pairs found taken by something else during this allocation.
    const tried = new Set<number>();
    for (;;) {
      signal?.throwIfAborted();
      const port = this.pick(tried);
      if (port === undefined) break;
      tried.add(port);
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
        this.recent.delete(port);
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

  /**
   * A random free pair's RTP port not tried yet: random draws while the range is mostly free,
   * else a scan from a random point; recently released pairs only when nothing else is left.
   */
  private pick(tried: Set<number>): number | undefined {
    const usable = (port: number, recentToo: boolean): boolean => !this.held.has(port) && !tried.has(port) && (recentToo || !this.recent.has(port));
    for (let i = 0; i < RANDOM_DRAWS; i++) {
      const port = this.first + 2 * this.randomIndex();
      if (usable(port, false)) return port;
    }
    const start = this.randomIndex();
    for (const recentToo of [false, true]) {
      for (let k = 0; k < this.pairs; k++) {
        const port = this.first + 2 * ((start + k) % this.pairs);
        if (usable(port, recentToo)) return port;
      }
    }
    return undefined;
  }

  private randomIndex(): number {
    return Math.min(this.pairs - 1, Math.floor(this.random() * this.pairs));
  }

  private released(port: number): void {
    this.held.delete(port);
    if (this.recentMax === 0) return;
    this.recent.delete(port);
    this.recent.add(port);
    if (this.recent.size > this.recentMax) this.recent.delete(this.recent.values().next().value!);
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
        released ??= Promise.all([closeSocket(rtp), closeSocket(rtcp)]).then(() => this.released(port));
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
