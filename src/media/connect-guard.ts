/**
 * Whether an RTP socket may be connect()ed to its peer without losing the peer's audio.
 *
 * A connected UDP socket receives only from its peer, which is the filtering we want (and dgram
 * stops resolving each datagram's destination). But connect() on a socket bound to the wildcard
 * address (0.0.0.0, ::) also pins its local address to the source address of the route back to
 * the peer. The peer sends to the address in our SDP (the advertised media address: RTP_PUBLIC_HOST,
 * else SIP_PUBLIC_HOST, never the SIP signalling address as such);
 * when that is not the route's source (several interfaces, a floating or secondary address), its
 * datagrams no longer match the socket and are dropped by the kernel: the caller goes silent.
 *
 * So: a socket bound to a specific address keeps it across connect() and may always connect. A
 * wildcard-bound one may connect only when the route's source to the peer is the advertised
 * address; otherwise it stays unconnected and the source filter (source-filter.ts) does the
 * filtering in the receive path. Where the advertised address is not local at all (1:1 NAT in
 * front of the host) that forgoes connect() though it might have been safe: correct first.
 */
import dgram from 'node:dgram';
import { isIP } from 'node:net';
import { normalizeAddress } from './media-address.ts';
import type { TransportAddress } from './source-filter.ts';

/** The local address the kernel would send from to `peer` (undefined: no route, or not an IP). */
export type RouteSourceProbe = (peer: TransportAddress) => Promise<string | undefined>;

export function isWildcardAddress(address: string): boolean {
  const bare = normalizeAddress(address);
  return bare === '0.0.0.0' || bare === '::';
}

/** Pure: the decision, given the route's source address (when the socket is wildcard-bound). */
export function connectKeepsMedia(bound: string, advertised: string, routeSource: string | undefined): boolean {
  if (!isWildcardAddress(bound)) return true;
  return routeSource !== undefined && normalizeAddress(routeSource) === normalizeAddress(advertised);
}

/**
 * Asks the kernel: a throwaway UDP socket connect()ed to the peer (no datagram leaves) reports
 * the local address the route gives it.
 */
export const probeRouteSource: RouteSourceProbe = (peer) =>
  new Promise((resolve) => {
    const family = isIP(peer.address);
    if (family === 0 || peer.port <= 0) {
      resolve(undefined);
      return;
    }
    const socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    const done = (address: string | undefined): void => {
      try {
        socket.close();
      } catch {
        // Already closed.
      }
      resolve(address);
    };
    socket.on('error', () => done(undefined));
    try {
      socket.connect(peer.port, peer.address, () => {
        try {
          done(socket.address().address);
        } catch {
          done(undefined);
        }
      });
    } catch {
      done(undefined);
    }
  });
