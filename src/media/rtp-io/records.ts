/**
 * The one record layout both rings carry (ring.ts), little-endian:
 *
 *   0  u8   kind        PACKET; DROPPED (inbound: datagrams the full ring refused); DISCONNECT
 *                       (outbound: the socket leaves its peer here, between the packets handed
 *                       over before and after; no address, no datagram)
 *   1  u8   address length (0: none: outbound, "to the connected peer")
 *   2  u16  port        outbound: destination; inbound: source
 *   4  u32  socket id   (thread-io.ts assigns them)
 *   8  f64  time        outbound: when the packet is due; inbound: when it arrived; both in the
 *                       event-loop thread's `performance.now()` base. DROPPED: the count.
 *  16  the address, ASCII (an IP literal or a host name), then the datagram.
 *
 * Addresses travel as text because that is what dgram takes and gives. Both sides keep the last
 * one per socket (AddressCache), so a steady peer costs a byte compare, not a string per packet.
 */
import type { SpscRing } from './ring.ts';

export const PACKET = 1;
export const DROPPED = 2;
export const DISCONNECT = 3;
export const RECORD_HEADER = 16;
const MAX_ADDRESS = 255;

/** An address as record bytes (ASCII; a name longer than 255 or not ASCII is refused). */
export function encodeAddress(address: string): Uint8Array {
  if (address.length > MAX_ADDRESS) throw new RangeError(`address too long for an RTP record: ${address.slice(0, 40)}…`);
  const bytes = new Uint8Array(address.length);
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c > 0x7f) throw new RangeError(`not an ASCII address: ${address}`);
    bytes[i] = c;
  }
  return bytes;
}

/**
 * Writes one record; false when the ring is full (nothing written). `payload` may be a view of
 * any buffer; it is copied.
 */
export function writeRecord(
  ring: SpscRing,
  kind: number,
  socket: number,
  time: number,
  port: number,
  address: Uint8Array | undefined,
  payload: Uint8Array | undefined,
): boolean {
  const addressLength = address?.length ?? 0;
  const at = ring.reserve(RECORD_HEADER + addressLength + (payload?.length ?? 0));
  if (at < 0) return false;
  const view = ring.view;
  view.setUint8(at, kind);
  view.setUint8(at + 1, addressLength);
  view.setUint16(at + 2, port, true);
  view.setUint32(at + 4, socket, true);
  view.setFloat64(at + 8, time, true);
  if (address) ring.bytes.set(address, at + RECORD_HEADER);
  if (payload) ring.bytes.set(payload, at + RECORD_HEADER + addressLength);
  ring.commit();
  return true;
}

/** Field readers for the record whose body starts at `at` (ring.peek()). */
export const recordKind = (ring: SpscRing, at: number): number => ring.view.getUint8(at);
export const recordAddressLength = (ring: SpscRing, at: number): number => ring.view.getUint8(at + 1);
export const recordPort = (ring: SpscRing, at: number): number => ring.view.getUint16(at + 2, true);
export const recordSocket = (ring: SpscRing, at: number): number => ring.view.getUint32(at + 4, true);
export const recordTime = (ring: SpscRing, at: number): number => ring.view.getFloat64(at + 8, true);

/** Where the datagram of the record at `at` starts in `ring.bytes`, and how long it is. */
export function payloadStart(ring: SpscRing, at: number): number {
  return at + RECORD_HEADER + recordAddressLength(ring, at);
}

export function payloadLength(ring: SpscRing, at: number): number {
  return ring.peekLength - RECORD_HEADER - recordAddressLength(ring, at);
}

/**
 * The last address one socket saw in records, as bytes and as the string: reading the same
 * address again returns the same string without making one.
 */
export class AddressCache {
  private bytes: Uint8Array = new Uint8Array(0);
  private text = '';

  /** The address of the record at `at` (undefined when it has none). */
  read(ring: SpscRing, at: number): string | undefined {
    const length = recordAddressLength(ring, at);
    if (length === 0) return undefined;
    const start = at + RECORD_HEADER;
    const src = ring.bytes;
    let same = length === this.bytes.length;
    for (let i = 0; same && i < length; i++) same = src[start + i] === this.bytes[i];
    if (same) return this.text;
    this.bytes = src.slice(start, start + length);
    this.text = String.fromCharCode(...this.bytes);
    return this.text;
  }

  /** The bytes for `address`, made once per change of address (the producer's side). */
  encode(address: string): Uint8Array {
    if (address !== this.text || this.bytes.length === 0) {
      this.bytes = encodeAddress(address);
      this.text = address;
    }
    return this.bytes;
  }
}
