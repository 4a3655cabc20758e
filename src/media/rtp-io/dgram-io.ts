/**
 * RTP socket I/O on the event-loop thread: a plain `dgram.Socket` that also takes `sendAt` (and
 * sends at once: on this thread the media clock's pass is the send time). The other
 * implementation of ./types.ts is the I/O thread (./thread-io.ts, the default); this one runs
 * with SWITCHBOARD_RTP_THREAD=0.
 */
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { RtpIo, RtpSocket } from './types.ts';

// @types/node declares no constructor for dgram.Socket; at run time it takes createSocket's options.
const SocketBase = dgram.Socket as unknown as new (options: dgram.SocketOptions) => dgram.Socket;

export class DgramRtpSocket extends SocketBase implements RtpSocket {
  readonly droppedPackets = { inbound: 0, outbound: 0 };

  sendAt(msg: Uint8Array, _dueMs: number, port?: number, address?: string): void {
    if (port === undefined) this.send(msg);
    else this.send(msg, port, address);
  }
}

/** Binds a UDP socket, or resolves undefined if the port is taken (or not ours to take). */
export function bindDgram(host: string, port: number): Promise<DgramRtpSocket | undefined> {
  return new Promise((resolve) => {
    const socket = new DgramRtpSocket({ type: isIPv6(host) ? 'udp6' : 'udp4', reuseAddr: false });
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

export const inThreadRtpIo: RtpIo = {
  bind: bindDgram,
  close: () => Promise.resolve(),
};
