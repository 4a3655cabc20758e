/**
 * RTP port allocation: an even port for RTP and the odd one above it for RTCP (RFC 3550 §11),
 * from a configured range, proven free by binding both UDP sockets. The bound sockets are
 * handed to the caller, so nothing can take the ports between the check and their use.
 *
 * Allocation rotates through the range instead of reusing the lowest free port: a port released
 * a moment ago may still receive the previous call's stragglers, which the next call would
 * otherwise hear.
 */
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import { AppError } from '../util/errors.ts';

export interface PortPoolOptions {
  /** Address to bind (e.g. '0.0.0.0', '127.0.0.1', '::'). */
  host: string;
  minPort: number;
  maxPort: number;
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
  readonly rtp: dgram.Socket;
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
  private readonly first: number;
  private readonly pairs: number;
  private cursor = 0;
  private readonly held = new Set<number>();

  constructor(options: PortPoolOptions) {
    if (options.minPort < 1 || options.maxPort > 65535 || options.maxPort <= options.minPort) {
      throw new RangeError(`bad RTP port range ${options.minPort}-${options.maxPort}`);
    }
    this.host = options.host;
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
      const pair = await this.tryBind(port);
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
    const rtp = await bindUdp(this.host, port);
    if (!rtp) return undefined;
    const rtcp = await bindUdp(this.host, port + 1);
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

/** Binds a UDP socket, or resolves undefined if the port is taken (or not ours to take). */
function bindUdp(host: string, port: number): Promise<dgram.Socket | undefined> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4', reuseAddr: false });
    const onError = (): void => {
      try {
        socket.close();
      } catch {
        // A socket that never bound may refuse to close; it holds nothing either way.
      }
      resolve(undefined);
    };
    socket.once('error', onError);
    socket.bind({ port, address: host, exclusive: true }, () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

function closeSocket(socket: dgram.Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      // Already closed (e.g. by its owner): nothing to wait for.
      resolve();
    }
  });
}
