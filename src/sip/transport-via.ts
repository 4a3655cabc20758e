/**
 * Pure Via handling at the transport edge: stamping `received`/`rport` on incoming requests
 * (RFC 3261 §18.2.1, RFC 3581) and choosing where a response goes (§18.2.2).
 */
import type { SipRequest, SipResponse } from './message.ts';
import { formatVia, parseVia, sentByKey, topVia } from './transaction-headers.ts';
import { isReliable, type Destination, type Source } from './transaction-types.ts';

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Adds received/rport to the top Via in place. Returns false if there is no usable Via. */
export function stampReceived(req: SipRequest, source: Source): boolean {
  const idx = req.headers.findIndex((h) => h.name === 'via');
  const entry = idx === -1 ? undefined : req.headers[idx];
  const via = entry ? parseVia(entry.value) : undefined;
  if (!entry || !via) return false;
  const rportAsked = via.params.has('rport');
  // RFC 3581 §4: with rport requested, received is added even when the host already matches.
  if (rportAsked || via.host !== source.address || !IPV4.test(via.host)) via.params.set('received', source.address);
  if (rportAsked && !via.params.get('rport')) via.params.set('rport', String(source.port));
  req.headers[idx] = { name: 'via', value: formatVia(via) };
  return true;
}

/** Where responses to `req` go; `req` must already carry the stamped Via. */
export function responseDestination(req: SipRequest, source: Source): Destination {
  const via = topVia(req);
  const received = via?.params.get('received') ?? source.address;
  const sentByPort = via?.port ?? (source.transport === 'tls' ? 5061 : 5060);
  if (isReliable(source.transport)) {
    // Reuse the connection; the address is the fallback for opening a new one (§18.2.2).
    const dest: Destination = { transport: source.transport, address: received, port: sentByPort };
    if (source.connectionId !== undefined) dest.connectionId = source.connectionId;
    return dest;
  }
  const maddr = via?.params.get('maddr');
  if (maddr) return { transport: 'udp', address: maddr, port: sentByPort };
  const rport = Number(via?.params.get('rport'));
  if (Number.isInteger(rport) && rport > 0) return { transport: 'udp', address: received, port: rport };
  return { transport: 'udp', address: received, port: sentByPort };
}

/**
 * §18.1.2: a response whose top Via sent-by is not ours is silently discarded. `localSentBy`
 * holds the `host:port` keys we put in our Vias.
 */
export function responseIsForUs(res: SipResponse, localSentBy: ReadonlySet<string>): boolean {
  const via = topVia(res);
  if (!via) return false;
  return localSentBy.size === 0 || localSentBy.has(sentByKey(via));
}
