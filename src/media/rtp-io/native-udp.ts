/**
 * The RTP I/O thread's native sockets (native/rtp-udp, an optional dependency built at install):
 * loading the module, its errors as dgram reports them, and the one thing dgram did that the
 * module does not: sending to a host name. Used by ./worker.ts only, in the worker thread.
 */
import { lookup } from 'node:dns';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { getSystemErrorName } from 'node:util';

/** The module's functions (native/rtp-udp/rtp_udp.c); errors are negative errnos. */
export interface NativeUdp {
  /** Once per thread: the inbound ring's whole SharedArrayBuffer, the time base, the write hook. */
  init(ring: Uint8Array, originMs: number, onInbound: (id: number, dropped: number, errno: number) => void): void;
  /** A bound socket (IP literals only): its descriptor and port. */
  open(host: string, port: number): [fd: number, port: number] | number;
  /** Its datagrams go into the ring from now on; a handle for close(). */
  startReceiving(fd: number, id: number): object | number;
  close(handle: object): void;
  /** With a host (an IP literal), connects; without, disconnects. */
  connect(fd: number, host?: string, port?: number): number;
  /** Over the connection, or to an IP literal. */
  send(fd: number, bytes: Uint8Array, port?: number, host?: string): number;
  /** The next datagram written calls onInbound again. */
  armNotify(): void;
  /**
   * true: the sockets are no longer read as datagrams come, only by sweep(); false (the
   * default): read at once again. 0 or a libuv error.
   */
  setPaced(on: boolean): number;
  /** Reads every socket with datagrams waiting into the ring; how many sockets had some. */
  sweep(): number;
  /** Sockets read so far on their poll's wake-up, and by sweeps. */
  readCounts(): [polled: number, swept: number];
}

/** A socket of the module: its descriptor, receive handle and family. */
export class NativeSocket {
  /** Host names seen as destinations, resolved (undefined while resolving, or unresolvable). */
  private names: Map<string, string | undefined> | undefined;

  constructor(
    private readonly udp: NativeUdp,
    readonly fd: number,
    readonly handle: object,
    readonly family: 4 | 6,
  ) {}

  send(bytes: Uint8Array): void {
    this.udp.send(this.fd, bytes);
  }

  /**
   * To `address`: an IP literal at once; a host name once resolved (dgram resolves it on every
   * send), until then the datagram is lost, as one sent before an answer from DNS would be.
   */
  sendTo(bytes: Uint8Array, port: number, address: string): void {
    if (isIP(address) !== 0) {
      this.udp.send(this.fd, bytes, port, address);
      return;
    }
    this.names ??= new Map();
    const ip = this.names.get(address);
    if (ip !== undefined) this.udp.send(this.fd, bytes, port, ip);
    else if (!this.names.has(address)) {
      this.names.set(address, undefined);
      lookup(address, { family: this.family }, (error, found) => {
        if (!error) this.names?.set(address, found);
      });
    }
  }
}

/** The module, initialised for this thread; undefined when it is not built (or not Linux). */
export function loadNativeUdp(ring: SharedArrayBuffer, originMs: number, onInbound: (id: number, dropped: number, errno: number) => void): NativeUdp | undefined {
  try {
    const mod = createRequire(import.meta.url)('switchboard-rtp-udp') as NativeUdp;
    mod.init(new Uint8Array(ring), originMs, onInbound);
    return mod;
  } catch {
    // dgram does the same, at more CPU.
    return undefined;
  }
}

/** An errno from the module as dgram would report it. */
export function nativeError(op: string, errno: number, where: string): { code: string; message: string } {
  const code = getSystemErrorName(errno);
  return { code, message: where ? `${op} ${code} ${where}` : `${op} ${code}` };
}
